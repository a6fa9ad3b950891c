from __future__ import annotations

import copy

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from protocol import DropReason, RemoteProtocolError
from protocol.schema import (
    Bin,
    Bool,
    Const,
    Int,
    ListOf,
    Nil,
    OneOf,
    Optional,
    Record,
    Spec,
    Str,
    Tagged,
    Tuple,
)

from .strategies import wire_values

U32 = Int(0, 2**32 - 1)

# A message shaped like the real ones: a tagged union, fixed arrays, a bounded list, a record.
MESSAGE = Record(
    {
        "kind": Const(1),
        "vv": ListOf(Tuple(Bin(exact=8), U32), max=8),
        "name": Str(max=12),
        "note": Optional(Bin(max=4)),
        "ok": Bool(),
        "move": Tagged({1: Tuple(Int(0, 9)), "x": Tuple(Str(max=3), Nil())}),
        "either": OneOf(Int(0, 3), Bin(exact=2)),
    }
)
VALID: dict[str, object] = {
    "kind": 1,
    "vv": [[b"a" * 8, 1], [b"b" * 8, 2], [b"c" * 8, 3], [b"d" * 8, 2**32 - 1]],
    "name": "alice",
    "note": None,
    "ok": True,
    "move": ["x", "abc", None],
    "either": b"zz",
}

# Every place in VALID a wrong value can go, with the spec that governs it.
Location = tuple[str | int, ...]
LOCATIONS: list[tuple[Location, Spec]] = [
    (("kind",), Const(1)),
    (("vv",), ListOf(Tuple(Bin(exact=8), U32), max=8)),
    (("vv", 2), Tuple(Bin(exact=8), U32)),
    (("vv", 0, 0), Bin(exact=8)),
    (("vv", 3, 1), U32),
    (("name",), Str(max=12)),
    (("note",), Optional(Bin(max=4))),
    (("ok",), Bool()),
    (("move",), Tagged({1: Tuple(Int(0, 9)), "x": Tuple(Str(max=3), Nil())})),
    (("move", 1), Str(max=3)),
    (("move", 2), Nil()),
    (("either",), OneOf(Int(0, 3), Bin(exact=2))),
]


def _path(location: Location, root: str = "body") -> str:
    return root + "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in location)


def _replaced(value: object, location: Location, new: object) -> object:
    result = copy.deepcopy(value)
    parent = result
    for step in location[:-1]:
        parent = parent[step]  # type: ignore[index]
    parent[location[-1]] = new  # type: ignore[index]
    return result


def _schema_error(spec: Spec, value: object, path: str = "body") -> str:
    with pytest.raises(RemoteProtocolError) as info:
        spec.check(value, path)
    assert info.value.reason is DropReason.SCHEMA
    return info.value.message


def test_valid_message_passes() -> None:
    MESSAGE.check(VALID, "body")


@given(st.sampled_from(LOCATIONS), wire_values)
def test_every_failure_names_the_path_of_the_bad_field(
    location_and_spec: tuple[Location, Spec], wrong: object
) -> None:
    location, spec = location_and_spec
    try:
        spec.check(wrong)
    except RemoteProtocolError:
        pass
    else:
        assume(False)  # `wrong` happens to be right for this field
    message = _schema_error(MESSAGE, _replaced(VALID, location, wrong))
    path = _path(location)
    # The error is at the replaced field or inside it (a wrong array can fail at an item).
    assert message.startswith(path)
    assert message[len(path)] in ":[."


@given(wire_values)
def test_checking_any_value_raises_nothing_but_a_schema_error(value: object) -> None:
    for spec in [MESSAGE, *(spec for _, spec in LOCATIONS)]:
        reason = None
        try:
            spec.check(value)
        except RemoteProtocolError as exc:
            reason = exc.reason
        assert reason in {None, DropReason.SCHEMA}


def test_message_says_what_was_expected_and_what_came() -> None:
    bad = _replaced(VALID, ("vv", 3, 1), "7")
    assert _schema_error(MESSAGE, bad) == "body.vv[3][1]: expected int 0..4294967295, got str"
    bad = _replaced(VALID, ("vv", 3, 1), 2**32)
    assert _schema_error(MESSAGE, bad) == (
        "body.vv[3][1]: expected int 0..4294967295, got int 4294967296"
    )


@pytest.mark.parametrize("value", [True, False])
def test_int_refuses_bools_even_in_range(value: bool) -> None:
    assert _schema_error(Int(0, 1), value) == "body: expected int 0..1, got bool"


def test_int_range_includes_both_ends() -> None:
    Int(-3, 3).check(-3)
    Int(-3, 3).check(3)
    assert "got int 4" in _schema_error(Int(-3, 3), 4)
    assert "got int -4" in _schema_error(Int(-3, 3), -4)


def test_const_and_bool_keep_bools_and_ints_apart() -> None:
    assert _schema_error(Const(1), True) == "body: expected int 1, got bool True"
    assert _schema_error(Const(True), 1) == "body: expected bool True, got int 1"
    assert _schema_error(Bool(), 1) == "body: expected bool, got int"


def test_bin_lengths() -> None:
    Bin(exact=8).check(b"x" * 8)
    assert _schema_error(Bin(exact=8), b"x" * 7) == (
        "body: expected bin of exactly 8 bytes, got 7 bytes"
    )
    assert "got 9 bytes" in _schema_error(Bin(exact=8), b"x" * 9)
    assert "got str" in _schema_error(Bin(exact=8), "x" * 8)
    Bin(max=4).check(b"")
    assert "got 5 bytes" in _schema_error(Bin(max=4), b"x" * 5)
    assert "got 1 bytes" in _schema_error(Bin(min=2, max=4), b"x")


def test_str_length_counts_utf8_bytes() -> None:
    Str(max=5).check("abcde")
    assert "got 6 bytes" in _schema_error(Str(max=5), "\u00e9" * 3)
    assert "got bin" in _schema_error(Str(max=5), b"abc")


def test_list_bounds_and_item_paths() -> None:
    spec = ListOf(Int(0, 9), min=1, max=3)
    spec.check([1, 2, 3])
    assert "got 4 items" in _schema_error(spec, [1, 2, 3, 4])
    assert "got 0 items" in _schema_error(spec, [])
    assert _schema_error(spec, [1, 2, 10]).startswith("body[2]: ")
    assert "got map" in _schema_error(spec, {})


def test_tuple_length_is_exact() -> None:
    spec = Tuple(Int(0, 9), Bool())
    spec.check([1, False])
    assert "got 3 items" in _schema_error(spec, [1, False, None])
    assert "got 1 items" in _schema_error(spec, [1])
    assert _schema_error(spec, [1, 0]).startswith("body[1]: expected bool")


def test_one_of_and_optional() -> None:
    spec = OneOf(Int(0, 3), Bin(exact=2))
    spec.check(3)
    spec.check(b"ab")
    assert _schema_error(spec, "ab") == (
        "body: expected one of (int 0..3 | bin of exactly 2 bytes), got str"
    )
    Optional(Int(0, 3)).check(None)
    Optional(Int(0, 3)).check(2)
    assert "got int 4" in _schema_error(Optional(Int(0, 3)), 4)
    assert "got bool" in _schema_error(Nil(), False)


def test_tagged_reports_unknown_kinds_and_keeps_full_indices() -> None:
    spec = Tagged({1: Tuple(Int(0, 9)), "x": Tuple()})
    spec.check([1, 5])
    spec.check(["x"])
    assert _schema_error(spec, [7, 5]) == "body[0]: unknown kind 7"
    assert _schema_error(spec, [True, 5]) == "body[0]: unknown kind True"
    assert _schema_error(spec, [[1], 5]) == "body[0]: unknown kind array"
    assert _schema_error(spec, [1, "x"]).startswith("body[1]: expected int 0..9")
    assert "got 3 items" in _schema_error(spec, [1, 5, 6])
    assert "got empty array" in _schema_error(spec, [])
    assert "got int" in _schema_error(spec, 1)


def test_record_wants_exactly_its_keys() -> None:
    spec = Record({"a": Int(0, 1), "b": Bool()})
    spec.check({"a": 0, "b": True})
    assert _schema_error(spec, {"a": 0}) == "body: missing key(s) b"
    assert _schema_error(spec, {"a": 0, "b": True, "c": 1}) == "body: unknown key(s) 'c'"
    assert _schema_error(spec, {"a": 0, "b": True, b"a": 1}) == "body: unknown key(s) b'a'"
    assert _schema_error(spec, {"a": 2, "b": True}).startswith("body.a: ")


def test_default_path_is_value() -> None:
    assert _schema_error(Int(0, 1), 2, "value").startswith("value: ")
    with pytest.raises(RemoteProtocolError, match=r"^schema: value: "):
        Int(0, 1).check(2)


@pytest.mark.parametrize(
    "build",
    [
        lambda: Int(2, 1),
        lambda: Bin(exact=4, max=5),
        lambda: Bin(min=3, max=2),
        lambda: Str(max=-1),
        lambda: ListOf(Nil(), min=2, max=1),
        lambda: OneOf(),
        lambda: Tagged({}),
    ],
)
def test_impossible_specs_are_refused_when_built(build: object) -> None:
    assert callable(build)
    with pytest.raises(ValueError, match=r"\S"):
        build()


def _passes(spec: Spec, value: object) -> bool:
    try:
        spec.check(value)
    except RemoteProtocolError:
        return False
    return True


@given(st.sampled_from(LOCATIONS), wire_values)
def test_valid_agrees_with_check_on_any_value_at_any_field(
    location_and_spec: tuple[Location, Spec], value: object
) -> None:
    # `valid` is the gate's fast verdict; `check` walks again only to say where a value failed,
    # so a value `valid` let through that `check` refuses would be let in unchecked.
    location, spec = location_and_spec
    assert spec.valid(value) == _passes(spec, value)
    whole = _replaced(VALID, location, value)
    assert MESSAGE.valid(whole) == _passes(MESSAGE, whole)


def _vector_bodies() -> list[list[object]]:
    """The bodies of every committed test vector (each kind of message, valid or not)."""
    import json
    from pathlib import Path

    import protocol
    from protocol.codec import unpack_bounded

    bodies = []
    for path in sorted((Path(protocol.__file__).parent / "vectors").glob("*.json")):
        for vector in json.loads(path.read_text()):
            try:
                outer = unpack_bounded(bytes.fromhex(vector["hex"]))
                body = unpack_bounded(outer[1])  # type: ignore[index]
            except (RemoteProtocolError, IndexError, TypeError, KeyError):
                continue
            if isinstance(body, list) and body:
                bodies.append(body)
    return bodies


VECTOR_BODIES = _vector_bodies()


@given(st.sampled_from(VECTOR_BODIES), st.integers(min_value=0, max_value=12), wire_values)
def test_valid_agrees_with_check_on_every_message_kind(
    body: list[object], index: int, value: object
) -> None:
    from protocol.messages import OP_SCHEMA, SYNC_SCHEMA

    spec = OP_SCHEMA if type(body[0]) is int and body[0] < 16 else SYNC_SCHEMA
    assert spec.valid(body) == _passes(spec, body)
    changed = copy.deepcopy(body)
    if index < len(changed):
        changed[index] = value
    else:
        changed.append(value)
    assert spec.valid(changed) == _passes(spec, changed)
    last = body[-1]
    if isinstance(last, list) and last:
        # and inside a payload or a list of deps, pairs, ranges
        inner = copy.deepcopy(body)
        inner[-1][index % len(last)] = value  # type: ignore[index]
        assert spec.valid(inner) == _passes(spec, inner)
