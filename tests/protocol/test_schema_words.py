"""What a schema error says: the expected shape in words a peer's author can act on.

A dropped message is only debuggable from its counted reason and its words, so each spec's
description must name the shape it wants (and a one-value range is a valid spec).
"""

from __future__ import annotations

import pytest

from protocol.errors import DropReason, RemoteProtocolError
from protocol.schema import Bin, Bool, Const, Int, ListOf, Nil, OneOf, Spec, Str, Tagged, Tuple


def _words(spec: Spec, value: object) -> str:
    with pytest.raises(RemoteProtocolError) as caught:
        spec.check(value, "body")
    assert caught.value.reason == DropReason.SCHEMA
    return caught.value.message


def test_a_one_value_int_range_accepts_exactly_that_value() -> None:
    spec = Int(3, 3)
    spec.check(3)
    assert _words(spec, 4) == "body: expected int 3..3, got int 4"
    with pytest.raises(ValueError, match=r"empty range 4\.\.3"):
        Int(4, 3)


def test_a_string_error_names_its_length_in_utf8_bytes() -> None:
    spec = Str(max=4, min=1)
    assert _words(spec, "héllo") == "body: expected str of 1..4 UTF-8 bytes, got 6 bytes"
    assert _words(spec, 7) == "body: expected str of 1..4 UTF-8 bytes, got int"


def test_an_array_error_names_its_item_count() -> None:
    spec = ListOf(Int(0, 1), max=3, min=1)
    assert _words(spec, []) == "body: expected array of 1..3 items, got 0 items"
    assert (
        _words(ListOf(Int(0, 1), max=2, min=2), [0])
        == "body: expected array of exactly 2 items, got 1 items"
    )


def test_a_tagged_error_names_the_kinds_it_knows() -> None:
    spec = Tagged({1: Tuple(Int(0, 9)), "x": Tuple()})
    assert _words(spec, "no") == "body: expected array starting with a kind tag (1, 'x'), got str"


def test_a_bin_error_names_its_length_bounds() -> None:
    assert _words(Bin(min=2), b"a") == "body: expected bin of at least 2 bytes, got 1 bytes"
    assert _words(Bin(exact=2), b"abc") == "body: expected bin of exactly 2 bytes, got 3 bytes"


def test_an_error_names_the_wire_type_that_came() -> None:
    assert _words(Int(0, 1), None) == "body: expected int 0..1, got nil"
    assert _words(Int(0, 1), 0.5) == "body: expected int 0..1, got float"
    assert _words(Int(0, 1), {"a": 1}) == "body: expected int 0..1, got map"


def test_a_tuple_error_names_its_exact_length() -> None:
    spec = Tuple(Int(0, 1), Int(0, 1))
    assert _words(spec, [1]) == "body: expected array of exactly 2 items, got 1 items"


def test_a_nil_error_says_nil_was_expected() -> None:
    assert _words(Nil(), 1) == "body: expected nil, got int"


def test_a_rule_value_error_names_both_shapes_it_may_take() -> None:
    # A rule's value (in an OPEN or a START) is a bool or an int: the words name both.
    spec = OneOf(Bool(), Int(0, 1))
    assert _words(spec, "yes") == "body: expected one of (bool | int 0..1), got str"


def test_a_wrong_version_error_quotes_a_scalar_value_but_not_a_container() -> None:
    spec = Const(2)
    assert _words(spec, 3) == "body: expected int 2, got int 3"
    assert _words(spec, None) == "body: expected int 2, got nil None"
    assert _words(spec, [2]) == "body: expected int 2, got array"
