"""The schema at the edges random wire values rarely reach: a bool where an int constant is
wanted inside an array (where the fast verdict `valid` decides alone), an int that is an
`IntEnum` member, a length range of one value, an array at its least length with a bad item,
and the words of the specs whose description only shows through another's refusal.
(Found by `tools.mutate`, seed 1, `protocol/schema.py`.)"""

from __future__ import annotations

import pytest

from protocol.errors import DropReason, RemoteProtocolError
from protocol.messages import Kind
from protocol.schema import Bin, Bool, Const, Int, ListOf, OneOf, Optional, Record, Spec, Str, Tuple


def _words(spec: Spec, value: object) -> str:
    with pytest.raises(RemoteProtocolError) as caught:
        spec.check(value, "body")
    assert caught.value.reason == DropReason.SCHEMA
    return caught.value.message


@pytest.mark.parametrize(("wanted", "bool_equal_to_it"), [(1, True), (0, False)])
def test_a_constant_inside_an_array_refuses_the_bool_equal_to_it(
    wanted: int, bool_equal_to_it: bool
) -> None:
    # An array's check asks the fast verdict first and returns when it says yes, so a
    # constant's `valid` that let True pass for 1 (True == 1 in Python) would let a bool
    # through where the wire wants an int, unseen by the walk that names the field.
    spec = Tuple(Const(wanted), Bin(exact=2))
    assert not spec.valid([bool_equal_to_it, b"ab"])
    assert _words(spec, [bool_equal_to_it, b"ab"]) == (
        f"body[0]: expected int {wanted}, got bool {bool_equal_to_it}"
    )
    assert _words(spec, [wanted + 1, b"ab"]) == (
        f"body[0]: expected int {wanted}, got int {wanted + 1}"
    )
    spec.check([wanted, b"ab"])


def test_the_fast_verdict_takes_an_int_enum_member_as_the_check_does() -> None:
    # A body built here holds `Kind` members (IntEnum) until it is packed; they are ints, and
    # `valid` must give `check`'s verdict on them, as on a plain int (bools stay refused).
    for spec, fits in ((Int(1, 12), True), (Int(7, 12), False)):
        assert spec.valid(Kind.MOVE) is fits
        try:
            spec.check(Kind.MOVE)
        except RemoteProtocolError:
            assert not fits
        else:
            assert fits
    assert not Int(0, 1).valid(True)


def test_a_string_of_one_exact_length_can_be_asked_for() -> None:
    # A one-value range is a valid spec (as for ints and bins): the words say "exactly".
    spec = Str(min=2, max=2)
    spec.check("ab")
    assert spec.valid("ab")
    assert _words(spec, "abc") == "body: expected str of exactly 2 UTF-8 bytes, got 3 bytes"
    assert _words(spec, "a") == "body: expected str of exactly 2 UTF-8 bytes, got 1 bytes"


def test_an_array_at_its_least_length_with_a_bad_item_is_refused_at_the_item() -> None:
    # The length is right, so the refusal names the item that is wrong, not the length.
    spec = ListOf(Int(0, 9), min=1, max=3)
    assert _words(spec, [10]) == "body[0]: expected int 0..9, got int 10"
    assert _words(spec, [1, 2, 10]) == "body[2]: expected int 0..9, got int 10"


def test_a_record_refusing_a_value_that_is_no_map_names_the_keys_it_wants() -> None:
    spec = Record({"b": Bool(), "a": Int(0, 1)})
    assert _words(spec, [0, True]) == "body: expected map with keys a, b, got array"


def test_a_choice_with_an_optional_alternative_names_nil_among_what_it_takes() -> None:
    # An Optional's own check refuses in its inner spec's words; its description shows only
    # inside a choice's refusal, which lists every alternative.
    spec = OneOf(Optional(Int(0, 3)), Bin(exact=2))
    spec.check(None)
    assert _words(spec, "x") == (
        "body: expected one of (nil or int 0..3 | bin of exactly 2 bytes), got str"
    )
