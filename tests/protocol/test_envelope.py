from __future__ import annotations

import contextlib

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from protocol import (
    ENVELOPE_OVERHEAD,
    MAX_BODY,
    MAX_DATAGRAM,
    PROTOCOL_VERSION,
    DropReason,
    Envelope,
    LocalProtocolError,
    RemoteProtocolError,
    SigningKeyPair,
    open_envelope,
    pack,
    seal,
    sign,
    verify_envelope,
)
from protocol.schema import Int, Tuple

from .strategies import wire_values

AUTHOR = SigningKeyPair(b"\x07" * 32)
OTHER = SigningKeyPair(b"\x08" * 32)


def _raw_envelope(body_bytes: bytes, version: object = PROTOCOL_VERSION) -> bytes:
    """An envelope built by hand, signed properly, to test what `seal` would never produce."""
    return pack([version, body_bytes, sign(AUTHOR, body_bytes)])


def _refused(datagram: bytes) -> RemoteProtocolError:
    with pytest.raises(RemoteProtocolError) as info:
        open_envelope(datagram)
    return info.value


@given(wire_values)
def test_sealed_envelopes_round_trip(body: object) -> None:
    assume(len(pack(body)) <= MAX_BODY)
    datagram = seal(AUTHOR, body)
    assert len(datagram) <= MAX_DATAGRAM
    envelope = open_envelope(datagram)
    assert envelope.version == PROTOCOL_VERSION
    assert envelope.body == body
    assert envelope.body_bytes == pack(body)
    verify_envelope(envelope, AUTHOR.public_key)
    assert envelope.datagram() == datagram


@given(st.binary(max_size=MAX_DATAGRAM + 50))
def test_any_bytes_give_an_envelope_or_a_remote_protocol_error(data: bytes) -> None:
    with contextlib.suppress(RemoteProtocolError):
        open_envelope(data)


@given(st.lists(wire_values, max_size=4))
def test_any_msgpack_array_gives_an_envelope_or_a_remote_protocol_error(
    items: list[object],
) -> None:
    # Random bytes rarely get past the unpack step; valid msgpack exercises the shape checks.
    with contextlib.suppress(RemoteProtocolError):
        open_envelope(pack(items))


@st.composite
def mutated_envelopes(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """(original body bytes, a sealed envelope with one mutation applied)."""
    body = draw(wire_values)
    assume(len(pack(body)) <= MAX_BODY)
    data = bytearray(seal(AUTHOR, body))
    kind = draw(st.sampled_from(["flip", "truncate", "extend", "splice", "delete"]))
    if kind == "flip":
        index = draw(st.integers(0, len(data) - 1))
        data[index] ^= draw(st.integers(1, 255))
    elif kind == "truncate":
        del data[draw(st.integers(0, len(data) - 1)) :]
    elif kind == "extend":
        data += draw(st.binary(min_size=1, max_size=40))
    elif kind == "splice":
        index = draw(st.integers(0, len(data)))
        data[index:index] = draw(st.binary(min_size=1, max_size=40))
    else:
        start = draw(st.integers(0, len(data) - 1))
        del data[start : start + draw(st.integers(1, 16))]
    return pack(body), bytes(data)


@given(mutated_envelopes())
def test_mutated_envelopes_are_refused_or_still_carry_the_signed_body(
    original_and_mutated: tuple[bytes, bytes],
) -> None:
    original_body, datagram = original_and_mutated
    try:
        envelope = open_envelope(datagram)
        verify_envelope(envelope, AUTHOR.public_key)
    except RemoteProtocolError:
        return
    # A mutation that only touched the framing could in principle still open and verify; if so,
    # it must carry exactly the body the author signed, never a changed one.
    assert envelope.body_bytes == original_body


def test_body_at_the_limit_is_sealed_and_opened() -> None:
    body = b"x" * (MAX_BODY - 3)  # a bin16 header makes it exactly MAX_BODY bytes
    datagram = seal(AUTHOR, body)
    assert len(datagram) == MAX_BODY + ENVELOPE_OVERHEAD <= MAX_DATAGRAM
    assert open_envelope(datagram).body == body


def test_body_one_byte_over_the_limit_is_not_sealed() -> None:
    with pytest.raises(LocalProtocolError) as info:
        seal(AUTHOR, b"x" * (MAX_BODY - 2))
    assert info.value.reason is DropReason.OVERSIZE


def test_body_one_byte_over_the_limit_is_refused_by_schema() -> None:
    datagram = _raw_envelope(pack(b"x" * (MAX_BODY - 2)))
    assert len(datagram) <= MAX_DATAGRAM  # so it is the body check, not the size gate
    error = _refused(datagram)
    assert error.reason is DropReason.SCHEMA
    assert error.message.startswith("envelope[1]: expected bin of 0..1100 bytes")


def test_datagram_one_byte_over_the_limit_is_oversize() -> None:
    error = _refused(b"\x00" * (MAX_DATAGRAM + 1))
    assert error.reason is DropReason.OVERSIZE


def test_unsealable_body_is_a_local_error() -> None:
    with pytest.raises(LocalProtocolError) as info:
        seal(AUTHOR, [1, 0.5])
    assert info.value.reason is DropReason.SCHEMA


@pytest.mark.parametrize(
    ("datagram", "reason", "words"),
    [
        pytest.param(
            _raw_envelope(pack(1), version=1), DropReason.WRONG_VERSION, "version 1", id="v1-peer"
        ),
        pytest.param(_raw_envelope(pack(1), version=True), DropReason.SCHEMA, "got bool", id="v1"),
        pytest.param(_raw_envelope(pack(1), version="1"), DropReason.SCHEMA, "got str", id="v-str"),
        pytest.param(pack({"v": 1}), DropReason.SCHEMA, "expected an array", id="map"),
        pytest.param(pack([]), DropReason.SCHEMA, "expected an array", id="empty array"),
        pytest.param(
            pack([PROTOCOL_VERSION, pack(1)]), DropReason.SCHEMA, "2 items", id="no signature"
        ),
        pytest.param(
            pack([PROTOCOL_VERSION, pack(1), b"s" * 64, b""]),
            DropReason.SCHEMA,
            "4 items",
            id="extra item",
        ),
        pytest.param(
            pack([PROTOCOL_VERSION, pack(1), b"s" * 63]),
            DropReason.SCHEMA,
            "63 bytes",
            id="short sig",
        ),
        pytest.param(
            pack([PROTOCOL_VERSION, "body", b"s" * 64]), DropReason.SCHEMA, "got str", id="str body"
        ),
        pytest.param(
            pack([PROTOCOL_VERSION, b"", b"s" * 64]), DropReason.MALFORMED, "empty", id="empty body"
        ),
        pytest.param(
            _raw_envelope(pack(1) + b"\x00"), DropReason.MALFORMED, "trailing", id="body+trailing"
        ),
        pytest.param(
            _raw_envelope(b"\xcb" + b"\x00" * 8), DropReason.MALFORMED, "float", id="float body"
        ),
        pytest.param(
            _raw_envelope(b"\xcc\x01"), DropReason.MALFORMED, "canonical", id="wide-int body"
        ),
        pytest.param(
            _raw_envelope(b"\x91" * 40 + b"\xc0"), DropReason.MALFORMED, "nested", id="deep body"
        ),
        pytest.param(
            pack([PROTOCOL_VERSION, pack(1), b"s" * 64]) + b"\x00",
            DropReason.MALFORMED,
            "trailing",
            id="envelope+trailing",
        ),
    ],
)
def test_malformed_envelopes_are_refused_with_the_right_reason(
    datagram: bytes, reason: DropReason, words: str
) -> None:
    error = _refused(datagram)
    assert error.reason is reason
    assert words in error.message


def test_body_errors_say_they_are_in_the_body() -> None:
    assert _refused(_raw_envelope(b"\xc1")).message.startswith("envelope body: ")


def test_open_does_not_verify_but_verify_envelope_does() -> None:
    datagram = seal(AUTHOR, [1, 2, 3])
    envelope = open_envelope(datagram)
    forged = Envelope(
        version=envelope.version,
        body_bytes=pack([1, 2, 4]),
        signature=envelope.signature,
        body=[1, 2, 4],
    )
    # A forged envelope opens fine: verification is the caller's later gate step.
    assert open_envelope(forged.datagram()).body == [1, 2, 4]
    for bad_key_or_envelope in [(forged, AUTHOR.public_key), (envelope, OTHER.public_key)]:
        with pytest.raises(RemoteProtocolError) as info:
            verify_envelope(*bad_key_or_envelope)
        assert info.value.reason is DropReason.BAD_SIGNATURE


def test_forged_envelope_with_a_bad_body_is_stopped_by_the_schema() -> None:
    # The documented gate: open, check the body's schema, then verify. Opening needs no key, so
    # a forged envelope with a body of the wrong shape is stopped before any signature work.
    body_schema = Tuple(Int(0, 9), Int(0, 9))
    forged = pack([PROTOCOL_VERSION, pack([1, 99]), b"\x00" * 64])
    envelope = open_envelope(forged)
    with pytest.raises(RemoteProtocolError) as info:
        body_schema.check(envelope.body, "body")
    assert info.value.reason is DropReason.SCHEMA
    assert info.value.message.startswith("body[1]: ")
