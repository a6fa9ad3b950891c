"""The wire: game-agnostic, sans-I/O building blocks of the nerts-p2p protocol.

Pure code only: this package imports the standard library, msgpack and PyNaCl, never reads a clock
(times are arguments) and performs no I/O. `protocol.bench` is the one module that reads a
clock, and it is not imported here.
"""

from . import schema as schema
from .clocks import LamportClock, OrderKey, VersionVector, order_key, tiebreak
from .codec import MAX_DATAGRAM, MAX_DEPTH, pack, unpack_bounded
from .counters import DropCounters
from .envelope import (
    ENVELOPE_OVERHEAD,
    MAX_BODY,
    PROTOCOL_VERSION,
    Envelope,
    open_envelope,
    seal,
    verify_envelope,
)
from .errors import DropReason, LocalProtocolError, ProtocolError, RemoteProtocolError
from .ratelimit import TokenBucketLimiter
from .signing import (
    KEY_ID_LEN,
    OP_HASH_LEN,
    PUBLIC_KEY_LEN,
    SEED_LEN,
    SIGNATURE_LEN,
    SigningKeyPair,
    generate_signing_key,
    key_id,
    op_hash,
    sign,
    verify,
)

__all__ = [
    "ENVELOPE_OVERHEAD",
    "KEY_ID_LEN",
    "MAX_BODY",
    "MAX_DATAGRAM",
    "MAX_DEPTH",
    "OP_HASH_LEN",
    "PROTOCOL_VERSION",
    "PUBLIC_KEY_LEN",
    "SEED_LEN",
    "SIGNATURE_LEN",
    "DropCounters",
    "DropReason",
    "Envelope",
    "LamportClock",
    "LocalProtocolError",
    "OrderKey",
    "ProtocolError",
    "RemoteProtocolError",
    "SigningKeyPair",
    "TokenBucketLimiter",
    "VersionVector",
    "generate_signing_key",
    "key_id",
    "op_hash",
    "open_envelope",
    "order_key",
    "pack",
    "schema",
    "seal",
    "sign",
    "tiebreak",
    "unpack_bounded",
    "verify",
    "verify_envelope",
]
