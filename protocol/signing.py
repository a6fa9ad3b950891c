"""Ed25519 signatures and the hashes built on public keys and bodies.

A thin layer over PyNaCl so the rest of the protocol handles only `bytes`: 32-byte seeds, 32-byte
public keys, 64-byte signatures. Verification failures of every kind (wrong signature, signature
over other bytes, a public key of the wrong length or not on the curve) become one
`RemoteProtocolError(BAD_SIGNATURE)`: the peer sent something we cannot trust, and why does not
change what we do with it.
"""

from __future__ import annotations

import hashlib
from typing import final

import nacl.exceptions
import nacl.signing

from .errors import DropReason, RemoteProtocolError

__all__ = [
    "KEY_ID_LEN",
    "OP_HASH_LEN",
    "PUBLIC_KEY_LEN",
    "SEED_LEN",
    "SIGNATURE_LEN",
    "SigningKeyPair",
    "generate_signing_key",
    "key_id",
    "op_hash",
    "sign",
    "verify",
]

SEED_LEN = 32
PUBLIC_KEY_LEN = 32
SIGNATURE_LEN = 64
KEY_ID_LEN = 8
"""Bytes of SHA-256(public key) that name an author on the wire. 64 bits make an accidental
collision among a table's few dozen keys negligible; a deliberate one cannot pass anyway, since
ops are verified against the full key the author id is looked up to."""
OP_HASH_LEN = 16
"""Bytes of SHA-256(body) in an op's `prev` link: 128 bits against second preimages."""


@final
class SigningKeyPair:
    """An Ed25519 key pair, kept as its 32-byte seed (what the local store saves)."""

    __slots__ = ("_public_key", "_signing_key")

    def __init__(self, seed: bytes) -> None:
        if not isinstance(seed, bytes) or len(seed) != SEED_LEN:
            raise ValueError(f"an Ed25519 seed is {SEED_LEN} bytes")
        self._signing_key = nacl.signing.SigningKey(seed)
        self._public_key: bytes = bytes(self._signing_key.verify_key)

    @property
    def seed(self) -> bytes:
        """The secret: store it, never send it."""
        return bytes(self._signing_key)

    @property
    def public_key(self) -> bytes:
        return self._public_key

    @property
    def key_id(self) -> bytes:
        return key_id(self._public_key)

    def __repr__(self) -> str:
        # The seed is the secret key: keep it out of logs and tracebacks.
        return f"SigningKeyPair(key_id={self.key_id.hex()})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SigningKeyPair):
            return NotImplemented
        return self._public_key == other._public_key

    def __hash__(self) -> int:
        return hash(self._public_key)


def generate_signing_key() -> SigningKeyPair:
    """A fresh key pair from the operating system's randomness.

    For the I/O shell only (first start of a peer); pure code takes its keys as arguments.
    """
    return SigningKeyPair(bytes(nacl.signing.SigningKey.generate()))


def sign(key: SigningKeyPair, body: bytes) -> bytes:
    """The 64-byte Ed25519 signature of exactly `body`."""
    signature = key._signing_key.sign(body).signature
    assert isinstance(signature, bytes)
    assert len(signature) == SIGNATURE_LEN
    return signature


def verify(public_key: bytes, body: bytes, signature: bytes) -> None:
    """Return if `signature` is `public_key`'s signature of exactly `body`.

    Raises `RemoteProtocolError(BAD_SIGNATURE)` otherwise, including when the key or the
    signature is malformed (wrong length, wrong type, not a curve point).
    """
    if not isinstance(signature, bytes) or len(signature) != SIGNATURE_LEN:
        # Checked here, not left to PyNaCl: its verify() given no separate signature would read
        # one from the front of `body` instead.
        raise RemoteProtocolError(
            DropReason.BAD_SIGNATURE, f"a signature is {SIGNATURE_LEN} bytes of bin"
        )
    try:
        nacl.signing.VerifyKey(public_key).verify(body, signature)
    except nacl.exceptions.BadSignatureError:
        raise RemoteProtocolError(
            DropReason.BAD_SIGNATURE, "signature does not match the body and the author's key"
        ) from None
    except (ValueError, TypeError) as exc:
        # PyNaCl's own ValueError and TypeError subclass the builtins; they mean the key or the
        # signature had the wrong type or length.
        raise RemoteProtocolError(
            DropReason.BAD_SIGNATURE, f"malformed key or signature: {exc}"
        ) from None


def key_id(public_key: bytes) -> bytes:
    """The compact author id used on the wire: SHA-256(public key)[:8]."""
    if len(public_key) != PUBLIC_KEY_LEN:
        raise ValueError(f"an Ed25519 public key is {PUBLIC_KEY_LEN} bytes")
    return hashlib.sha256(public_key).digest()[:KEY_ID_LEN]


def op_hash(body: bytes) -> bytes:
    """The link in an author's hash chain: SHA-256(body)[:16], `prev` of the next op."""
    return hashlib.sha256(body).digest()[:OP_HASH_LEN]
