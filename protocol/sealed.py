"""Secrets for one peer only: PyNaCl `Box` between two table members' keys.

A partnership shares one seat, so both partners must know the seat's deal seed; it travels
to the partner inside an op (so it is stored and relayed like any op) but encrypted to the
partner's key, never in clear. The Ed25519 signing keys double as X25519 keys by the
standard birational map (libsodium's crypto_sign_ed25519_*_to_curve25519), so no second key
pair is needed. The nonce comes from the caller (randomness is handed in).
"""

from __future__ import annotations

import nacl.exceptions
import nacl.public
import nacl.signing

from .errors import DropReason, RemoteProtocolError
from .signing import SigningKeyPair

NONCE_LEN = 24
OVERHEAD = NONCE_LEN + 16  # nonce, then the Poly1305 tag


def _box(own: SigningKeyPair, other_public_key: bytes) -> nacl.public.Box:
    private = nacl.signing.SigningKey(own.seed).to_curve25519_private_key()
    public = nacl.signing.VerifyKey(other_public_key).to_curve25519_public_key()
    return nacl.public.Box(private, public)


def seal_for(
    own: SigningKeyPair, recipient_public_key: bytes, secret: bytes, nonce: bytes
) -> bytes:
    """`secret` encrypted and authenticated from `own` to the recipient: nonce || box."""
    if len(nonce) != NONCE_LEN:
        raise ValueError(f"a Box nonce is {NONCE_LEN} bytes")
    return bytes(_box(own, recipient_public_key).encrypt(secret, nonce))


def open_from(own: SigningKeyPair, sender_public_key: bytes, sealed: bytes) -> bytes:
    """The secret the sender sealed for us; RemoteProtocolError if it was not for us or was
    altered."""
    try:
        return bytes(_box(own, sender_public_key).decrypt(sealed))
    except (nacl.exceptions.CryptoError, ValueError, TypeError) as exc:
        raise RemoteProtocolError(
            DropReason.BAD_SIGNATURE, f"a sealed secret does not open with our key: {exc}"
        ) from None
