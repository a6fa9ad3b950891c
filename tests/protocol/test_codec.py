from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol import (
    MAX_DATAGRAM,
    MAX_DEPTH,
    DropReason,
    LocalProtocolError,
    RemoteProtocolError,
    pack,
    unpack_bounded,
)

from .strategies import wire_values


def _reason(data: bytes, *, max_len: int = MAX_DATAGRAM, canonical: bool = False) -> DropReason:
    with pytest.raises(RemoteProtocolError) as info:
        unpack_bounded(data, max_len=max_len, canonical=canonical)
    return info.value.reason


@given(wire_values)
def test_pack_then_unpack_round_trips_canonically(value: object) -> None:
    data = pack(value)
    assert unpack_bounded(data, max_len=len(data), canonical=True) == value


@given(st.binary(max_size=MAX_DATAGRAM + 100))
def test_any_bytes_give_a_value_or_a_remote_protocol_error(data: bytes) -> None:
    reason = None
    try:
        unpack_bounded(data)
    except RemoteProtocolError as exc:
        reason = exc.reason
    assert reason in {None, DropReason.OVERSIZE, DropReason.MALFORMED}


@given(wire_values, st.data())
def test_mutated_valid_bytes_give_a_value_or_a_remote_protocol_error(
    value: object, data: st.DataObject
) -> None:
    packed = bytearray(pack(value))
    index = data.draw(st.integers(0, len(packed) - 1))
    packed[index] ^= data.draw(st.integers(1, 255))
    for canonical in (False, True):
        with contextlib.suppress(RemoteProtocolError):
            unpack_bounded(bytes(packed), canonical=canonical)


def test_map_keys_are_written_sorted_whatever_the_insertion_order() -> None:
    assert pack({"b": 1, "a": 2}) == pack({"a": 2, "b": 1})
    assert pack({b"k": 1, "k": 2}) == pack({"k": 2, b"k": 1})
    assert pack({"b": 1, "a": 2}) == b"\x82\xa1a\x02\xa1b\x01"


def test_tuples_pack_as_arrays_and_bytes_as_bin() -> None:
    assert pack((1, b"x")) == pack([1, b"x"]) == b"\x92\x01\xc4\x01x"


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (1.5, "floats"),
        ([0, [0.0]], "floats"),
        (bytearray(b"x"), "bytearray"),
        ({1, 2}, "set"),
        ({1: "int key"}, "map keys"),
        (2**64, "64 bits"),
        (-(2**63) - 1, "64 bits"),
        ("\ud800", "cannot encode"),
    ],
)
def test_pack_refuses_what_has_no_deterministic_encoding(value: object, words: str) -> None:
    with pytest.raises(LocalProtocolError) as info:
        pack(value)
    assert info.value.reason is DropReason.SCHEMA
    assert words in info.value.message


def test_pack_and_unpack_agree_on_the_depth_limit() -> None:
    deepest: object = None
    for _ in range(MAX_DEPTH):
        deepest = [deepest]
    assert unpack_bounded(pack(deepest)) == deepest
    with pytest.raises(LocalProtocolError):
        pack([deepest])
    assert _reason(b"\x91" * (MAX_DEPTH + 1) + b"\xc0") is DropReason.MALFORMED


def test_nesting_bomb_is_malformed() -> None:
    # A whole datagram of one-element array headers: deeper than msgpack's own stack...
    assert _reason(b"\x91" * (MAX_DATAGRAM - 1) + b"\xc0") is DropReason.MALFORMED
    # ...and shallow enough for msgpack, so only our depth walk can refuse it.
    assert _reason(b"\x91" * 1000 + b"\xc0") is DropReason.MALFORMED
    assert _reason(b"\x81\xa1k" * 300 + b"\xc0") is DropReason.MALFORMED


def test_size_gate_comes_first() -> None:
    exactly = pack(b"x" * (MAX_DATAGRAM - 3))
    assert len(exactly) == MAX_DATAGRAM
    assert unpack_bounded(exactly) == b"x" * (MAX_DATAGRAM - 3)
    one_over = pack(b"x" * (MAX_DATAGRAM - 2))
    assert _reason(one_over) is DropReason.OVERSIZE
    assert _reason(b"\xc1" * 11, max_len=10) is DropReason.OVERSIZE


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"\x01\x02", id="trailing byte"),
        pytest.param(b"\x92\x01", id="truncated array"),
        pytest.param(b"\xc1", id="never-used byte"),
        pytest.param(b"\xdd\xff\xff\xff\xff", id="array header claiming 4 billion items"),
        pytest.param(b"\xdf\xff\xff\xff\xff", id="map header claiming 4 billion entries"),
        pytest.param(b"\xc6\x00\x00\x04\xb1" + b"x" * 10, id="bin header claiming 1201 bytes"),
        pytest.param(b"\xcb" + b"\x00" * 8, id="float64"),
        pytest.param(b"\xca" + b"\x00" * 4, id="float32"),
        pytest.param(b"\x91\xcb" + b"\x00" * 8, id="nested float"),
        pytest.param(b"\xd4\x05\x00", id="fixext1"),
        pytest.param(b"\xc7\x00\x05", id="empty ext8"),
        pytest.param(b"\xd6\xff\x00\x00\x00\x00", id="timestamp ext"),
        pytest.param(b"\x81\x01\x02", id="int map key"),
        pytest.param(b"\x81\x90\x02", id="array map key"),
        pytest.param(b"\x82\xa1a\x01\xa1a\x02", id="repeated map key"),
        pytest.param(b"\xa2\xff\xfe", id="str that is not UTF-8"),
    ],
)
def test_bad_msgpack_is_malformed(data: bytes) -> None:
    assert _reason(data) is DropReason.MALFORMED
    assert _reason(data, canonical=True) is DropReason.MALFORMED


@pytest.mark.parametrize(
    ("data", "value"),
    [
        pytest.param(b"\xcc\x01", 1, id="uint8 holding a fixint"),
        pytest.param(b"\xd9\x01a", "a", id="str8 holding a fixstr"),
        pytest.param(b"\x82\xa1b\x01\xa1a\x02", {"a": 2, "b": 1}, id="map keys out of order"),
        pytest.param(b"\x82\xc4\x01k\x01\xa1k\x02", {"k": 2, b"k": 1}, id="bin key before str"),
    ],
)
def test_canonical_mode_refuses_other_encodings_of_the_same_value(
    data: bytes, value: object
) -> None:
    assert unpack_bounded(data) == value
    assert _reason(data, canonical=True) is DropReason.MALFORMED
    assert unpack_bounded(pack(value), canonical=True) == value
