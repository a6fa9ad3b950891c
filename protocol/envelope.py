"""The signed unit that travels: one envelope per UDP datagram.

Wire form, a msgpack array of three items::

    [version, body, signature]

- `version`: int, `PROTOCOL_VERSION`. Checked first so a future version can change the rest.
- `body`: bin of at most `MAX_BODY` bytes, holding the message body encoded with `codec.pack`
  (canonical: `open_envelope` refuses any other encoding of the same value).
- `signature`: bin of exactly 64 bytes, Ed25519 over exactly the `body` bytes.

The body travels as bytes rather than as a nested msgpack value so the receiver verifies the very
bytes the author signed; nothing is re-encoded between signing and verifying, and two encoders
that disagree on some detail cannot make a valid op look forged.

`open_envelope` only decodes and checks shape. It does not verify: the gate (DESIGN.md section 4)
checks the body's schema and table id before spending a signature verification on it, and only
the caller knows which public key the body's author id stands for.
"""

from __future__ import annotations

from dataclasses import dataclass

from .codec import MAX_DATAGRAM, pack, unpack_bounded
from .errors import DropReason, LocalProtocolError, RemoteProtocolError
from .schema import Bin, Const, Tuple
from .signing import SIGNATURE_LEN, SigningKeyPair, sign, verify

__all__ = [
    "ENVELOPE_OVERHEAD",
    "MAX_BODY",
    "PROTOCOL_VERSION",
    "Envelope",
    "open_envelope",
    "seal",
    "seal_parts",
    "verify_envelope",
]

PROTOCOL_VERSION = 3
MAX_BODY = 1100
"""Largest encoded body. With the envelope's framing (`ENVELOPE_OVERHEAD`) a datagram stays
under `MAX_DATAGRAM` whatever the body holds."""
ENVELOPE_OVERHEAD = 1 + 1 + 3 + 2 + SIGNATURE_LEN
"""Array header, version, bin16 header of the body, bin8 header and bytes of the signature."""

assert MAX_BODY + ENVELOPE_OVERHEAD <= MAX_DATAGRAM

_ENVELOPE = Tuple(Const(PROTOCOL_VERSION), Bin(max=MAX_BODY), Bin(exact=SIGNATURE_LEN))


@dataclass(frozen=True, slots=True)
class Envelope:
    """A decoded, not yet verified, envelope."""

    version: int
    body_bytes: bytes
    """Exactly the bytes the signature covers; hash and store these, never a re-encoding."""
    signature: bytes
    body: object
    """`body_bytes` decoded with limits; check it against a schema before trusting its shape."""

    def datagram(self) -> bytes:
        """The envelope's wire form, for relaying or storing an op without re-signing it."""
        return pack([self.version, self.body_bytes, self.signature])


def seal(key: SigningKeyPair, body_obj: object) -> bytes:
    """Encode `body_obj`, sign it with `key`, and return the datagram.

    Raises `LocalProtocolError` if the body cannot be encoded deterministically (SCHEMA) or is
    too large for one datagram (OVERSIZE): callers must split or refuse such messages themselves.
    """
    return seal_parts(key, body_obj)[0]


def seal_parts(key: SigningKeyPair, body_obj: object) -> tuple[bytes, bytes, bytes]:
    """`seal`, returning (datagram, body bytes, signature): for a sender that also needs
    what it signed (`messages.seal_op`), without taking its own datagram apart again."""
    body_bytes = pack(body_obj)
    if len(body_bytes) > MAX_BODY:
        raise LocalProtocolError(
            DropReason.OVERSIZE,
            f"body is {len(body_bytes)} bytes encoded, over the limit of {MAX_BODY} bytes",
        )
    signature = sign(key, body_bytes)
    datagram = pack([PROTOCOL_VERSION, body_bytes, signature])
    if len(datagram) > MAX_DATAGRAM:
        raise LocalProtocolError(
            DropReason.OVERSIZE,
            f"envelope is {len(datagram)} bytes, over the datagram limit of {MAX_DATAGRAM}",
        )
    return datagram, body_bytes, signature


def open_envelope(datagram: bytes) -> Envelope:
    """Decode a datagram into an `Envelope`, without verifying its signature.

    Raises only `RemoteProtocolError`: OVERSIZE for a datagram over `MAX_DATAGRAM` bytes;
    MALFORMED if the datagram or the body is not msgpack within the codec's limits, or the body
    is not in canonical encoding; SCHEMA if the envelope has the wrong shape, an unsupported
    version, or a body over `MAX_BODY` bytes.
    """
    outer = unpack_bounded(datagram, max_len=MAX_DATAGRAM)
    if not isinstance(outer, list) or not outer:
        raise RemoteProtocolError(
            DropReason.SCHEMA, "envelope: expected an array [version, body, signature]"
        )
    version = outer[0]
    if type(version) is int and version != PROTOCOL_VERSION:
        # Said separately from other shape errors: an old peer meeting a newer one should say
        # so plainly in its logs rather than "expected int 1".
        raise RemoteProtocolError(
            DropReason.WRONG_VERSION,
            f"envelope: protocol version {version} is not supported (this peer speaks "
            f"{PROTOCOL_VERSION}); the other peer needs the same version of nerts-p2p",
        )
    _ENVELOPE.check(outer, "envelope")
    body_bytes, signature = outer[1], outer[2]
    assert isinstance(body_bytes, bytes)
    assert isinstance(signature, bytes)
    try:
        body = unpack_bounded(body_bytes, max_len=MAX_BODY, canonical=True)
    except RemoteProtocolError as exc:
        raise RemoteProtocolError(exc.reason, f"envelope body: {exc.message}") from None
    return Envelope(version=PROTOCOL_VERSION, body_bytes=body_bytes, signature=signature, body=body)


def verify_envelope(envelope: Envelope, public_key: bytes) -> None:
    """Raise `RemoteProtocolError(BAD_SIGNATURE)` unless `public_key` signed the body bytes."""
    verify(public_key, envelope.body_bytes, envelope.signature)
