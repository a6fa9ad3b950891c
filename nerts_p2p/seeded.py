"""Deterministic randomness for a seeded table.

The core never draws randomness itself; it is handed a source (`randomness(n) -> n bytes`).
Real peers hand it the OS's. A seeded practice table (the same seed deals the same game) and
the simulated tables of tests and tools hand it this one: SHA-256 of `label/1`, `label/2`...
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable


def seeded_bytes(label: str) -> Callable[[int], bytes]:
    """A source of bytes that depend only on `label` (one source per peer: give each its own)."""
    counter = 0

    def draw(n: int) -> bytes:
        nonlocal counter
        out = b""
        while len(out) < n:
            counter += 1
            out += hashlib.sha256(f"{label}/{counter}".encode()).digest()
        return out[:n]

    return draw
