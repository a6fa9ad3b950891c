from __future__ import annotations

import hashlib
from typing import cast

import msgpack
import pytest

from protocol import (
    DropReason,
    RemoteProtocolError,
    SigningKeyPair,
    generate_signing_key,
    key_id,
    op_hash,
    pack,
    sign,
    verify,
)

ALICE = SigningKeyPair(bytes(range(32)))
BOB = SigningKeyPair(bytes(range(1, 33)))
BODY = pack([3, b"T" * 8, {"card": "QH", "to": "f5"}])


def _bad_signature(public_key: bytes, body: bytes, signature: bytes) -> str:
    with pytest.raises(RemoteProtocolError) as info:
        verify(public_key, body, signature)
    assert info.value.reason is DropReason.BAD_SIGNATURE
    return info.value.message


def test_signature_verifies_over_the_exact_body() -> None:
    signature = sign(ALICE, BODY)
    assert len(signature) == 64
    verify(ALICE.public_key, BODY, signature)


def test_forged_signature_is_refused() -> None:
    signature = bytearray(sign(ALICE, BODY))
    signature[10] ^= 0x01
    _bad_signature(ALICE.public_key, BODY, bytes(signature))
    _bad_signature(ALICE.public_key, BODY, b"\x00" * 64)


def test_signature_over_a_reencoded_body_is_refused() -> None:
    # Same value, other bytes: a uint8 header where a fixint would do, map keys reordered.
    canonical = pack([1, {"a": 1, "b": 2}])
    reencoded = b"\x92\xcc\x01\x82\xa1b\x02\xa1a\x01"
    assert msgpack.unpackb(reencoded) == msgpack.unpackb(canonical)
    _bad_signature(ALICE.public_key, reencoded, sign(ALICE, canonical))


def test_wrong_key_is_refused() -> None:
    _bad_signature(BOB.public_key, BODY, sign(ALICE, BODY))


@pytest.mark.parametrize(
    ("public_key", "signature_length"),
    [
        pytest.param(ALICE.public_key[:31], 64, id="31-byte key"),
        pytest.param(ALICE.public_key + b"\x00", 64, id="33-byte key"),
        pytest.param(b"", 64, id="empty key"),
        pytest.param(ALICE.public_key, 63, id="63-byte signature"),
        pytest.param(ALICE.public_key, 65, id="65-byte signature"),
    ],
)
def test_malformed_key_or_signature_is_a_bad_signature(
    public_key: bytes, signature_length: int
) -> None:
    signature = (sign(ALICE, BODY) + b"\x00")[:signature_length]
    _bad_signature(public_key, BODY, signature)


def test_small_order_public_key_is_refused() -> None:
    # The identity point: with it, a naive verifier accepts some signatures for any message.
    identity = b"\x01" + b"\x00" * 31
    _bad_signature(identity, BODY, b"\x01" + b"\x00" * 63)


def test_wrong_types_are_a_bad_signature_not_a_type_error() -> None:
    signature = sign(ALICE, BODY)
    _bad_signature(cast(bytes, "not bytes"), BODY, signature)
    _bad_signature(ALICE.public_key, cast(bytes, "not bytes"), signature)


def test_missing_signature_does_not_read_one_from_the_body() -> None:
    # PyNaCl's verify(smessage) treats the first 64 bytes as the signature when none is given
    # separately; a None signature must not turn a signed message into a valid (body, sig).
    signed = sign(ALICE, BODY) + BODY
    _bad_signature(ALICE.public_key, signed, cast(bytes, None))


def test_key_pair_is_a_function_of_its_seed() -> None:
    again = SigningKeyPair(ALICE.seed)
    assert again.seed == bytes(range(32))
    assert again.public_key == ALICE.public_key
    assert again == ALICE
    assert hash(again) == hash(ALICE)
    assert again != BOB
    assert len(ALICE.public_key) == 32
    assert sign(again, BODY) == sign(ALICE, BODY)


def test_repr_does_not_leak_the_seed() -> None:
    text = repr(ALICE)
    assert ALICE.seed.hex() not in text
    assert ALICE.key_id.hex() in text


@pytest.mark.parametrize("seed", [b"", b"\x00" * 31, b"\x00" * 33])
def test_seed_must_be_32_bytes(seed: bytes) -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        SigningKeyPair(seed)


def test_generated_keys_are_fresh() -> None:
    first, second = generate_signing_key(), generate_signing_key()
    assert first.public_key != second.public_key
    verify(first.public_key, BODY, sign(first, BODY))


def test_key_id_is_a_prefix_of_the_keys_sha256() -> None:
    assert key_id(ALICE.public_key) == hashlib.sha256(ALICE.public_key).digest()[:8]
    assert ALICE.key_id == key_id(ALICE.public_key)
    assert ALICE.key_id != BOB.key_id
    with pytest.raises(ValueError, match="32 bytes"):
        key_id(ALICE.public_key[:31])


def test_op_hash_is_a_prefix_of_the_bodys_sha256() -> None:
    assert op_hash(BODY) == hashlib.sha256(BODY).digest()[:16]
    assert op_hash(BODY) != op_hash(BODY + b"\x00")
