"""The table's byte-exact hashes, which another implementation must reproduce: the deal
commitment a READY carries (and the end marker a partner reveals instead of a seed), and
the lobby's state hash that heartbeats carry before the first round (PROTOCOL.md 9).

Separate because they are part of the wire: test vectors pin them, and nothing else here
needs to change for them to change.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from nerts_p2p.game.deck import SALT_BYTES, SEED_BYTES

COMMIT_DOMAIN = b"nerts-p2p/deal\0"
#: The REVEAL payload of a participant that deals no seed (a partner): its end of the round.
END_MARKER = (bytes(SEED_BYTES), bytes(SALT_BYTES))


LOBBY_HASH_DOMAIN = b"nerts-p2p/lobby\0"


def lobby_state_hash(vector: Sequence[tuple[bytes, int]]) -> bytes:
    """The state hash a heartbeat carries before the first round (PROTOCOL.md section 9): the
    lobby is a function of exactly the ops in the vector, so the vector names it. First 16
    bytes of SHA-256("nerts-p2p/lobby" || 0x00 || author || seq as 4 bytes big-endian ...),
    entries in the vector's order (authors ascending)."""
    data = b"".join(author + seq.to_bytes(4, "big") for author, seq in vector)
    return hashlib.sha256(LOBBY_HASH_DOMAIN + data).digest()[:16]


def deal_commitment(seed: bytes, salt: bytes) -> bytes:
    return hashlib.sha256(COMMIT_DOMAIN + seed + salt).digest()
