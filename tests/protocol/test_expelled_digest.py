"""The expelled digest a heartbeat carries is defined in bytes (PROTOCOL.md 9), so any
implementation can compute it: SHA-256 of the domain and, for each expelled author in
ascending order, its 8-byte id and the 4-byte seq it is expelled from. (Found by
`tools.mutate`, seed 1201, `protocol/sync.py`: the seq written in 3 bytes kept every
test green, since none had an author expelled when it compared the bytes.)"""

from __future__ import annotations

import hashlib

from protocol.sync import SyncPeer
from tools.gen_vectors import KEYS, TABLE

EARLY, LATE = b"\x01" * 8, b"\xf0" * 8


def _as_written(expelled: list[tuple[bytes, int]]) -> bytes:
    body = b"".join(author + seq.to_bytes(4, "big") for author, seq in sorted(expelled))
    return hashlib.sha256(b"nerts-p2p/expelled" + b"\x00" + body).digest()[:8]


def test_the_expelled_digest_is_the_documented_bytes_and_follows_the_set() -> None:
    peer = SyncPeer(KEYS["sam"], TABLE)
    assert peer.expelled_digest() == _as_written([])
    peer.expelled[LATE] = 70_000  # more than two bytes of seq
    peer.expelled[EARLY] = 3
    assert peer.expelled_digest() == _as_written([(EARLY, 3), (LATE, 70_000)])
    peer.expelled[EARLY] = 2  # an earlier proof of the same author: another digest
    assert peer.expelled_digest() == _as_written([(EARLY, 2), (LATE, 70_000)])
