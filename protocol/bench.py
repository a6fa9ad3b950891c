"""How much the receive gate costs on top of the signature check it cannot avoid.

A benchmark, not a test: it reads `time.perf_counter`, which is why it lives apart from the pure
modules and `protocol/__init__.py` does not import it. The CLI will print `measure_gate`'s result.

The body imitates a move op of about 130 bytes (kind, table id, round, author id, seq, prev hash,
lamport, a move, a six-author version vector). The interesting number is `full_over_raw`: the
share of raw Ed25519 verification speed the whole gate keeps. Near 1 means decoding and schema
checks are noise next to the signature; much lower means they are worth optimizing.
"""

from __future__ import annotations

import time

import nacl.signing

from .envelope import open_envelope, seal, verify_envelope
from .schema import Bin, Int, ListOf, Str, Tagged, Tuple
from .signing import SigningKeyPair, op_hash

__all__ = ["measure_gate"]

_U32 = Int(0, 2**32 - 1)

_MOVE_KIND = 3
_BENCH_SCHEMA = Tagged(
    {
        _MOVE_KIND: Tuple(
            Bin(exact=8),  # table id
            _U32,  # round
            Bin(exact=8),  # author key id
            _U32,  # seq
            Bin(exact=16),  # prev
            Int(0, 2**63 - 1),  # lamport
            Tuple(Str(max=8), Str(max=8), Str(max=8)),  # card, from, to
            ListOf(Tuple(Bin(exact=8), _U32), max=16),  # version vector
        )
    }
)


def _typical_body(author: SigningKeyPair) -> list[object]:
    version_vector = [[bytes([i]) * 8, 40 + i] for i in range(6)]
    return [
        _MOVE_KIND,
        b"T" * 8,
        2,
        author.key_id,
        41,
        op_hash(b"previous op"),
        1234,
        ["QH", "t2", "f5"],
        version_vector,
    ]


def measure_gate(n: int) -> dict[str, float]:
    """Time `n` raw Ed25519 verifications and `n` full gate passes over one typical datagram.

    Returns ops per second for both (`raw_verify_per_s`, `full_gate_per_s`), their ratio
    (`full_over_raw`) and the sizes measured (`body_bytes`, `datagram_bytes`).
    """
    if n < 1:
        raise ValueError("n must be at least 1")
    author = SigningKeyPair(bytes(range(32)))
    datagram = seal(author, _typical_body(author))
    envelope = open_envelope(datagram)
    verify_key = nacl.signing.VerifyKey(author.public_key)

    start = time.perf_counter()
    for _ in range(n):
        verify_key.verify(envelope.body_bytes, envelope.signature)
    raw_seconds = time.perf_counter() - start

    public_key = author.public_key
    start = time.perf_counter()
    for _ in range(n):
        opened = open_envelope(datagram)
        _BENCH_SCHEMA.check(opened.body, "body")
        verify_envelope(opened, public_key)
    full_seconds = time.perf_counter() - start

    raw_rate = n / raw_seconds
    full_rate = n / full_seconds
    return {
        "raw_verify_per_s": raw_rate,
        "full_gate_per_s": full_rate,
        "full_over_raw": full_rate / raw_rate,
        "body_bytes": float(len(envelope.body_bytes)),
        "datagram_bytes": float(len(datagram)),
    }
