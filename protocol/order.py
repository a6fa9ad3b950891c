"""The total order of a round's ops and which prefix of it is stable.

Ops of round r sort by ``(lamport, tiebreak)``, where ``tiebreak = SHA-256(mix || author's
public key)`` and ``mix`` is fixed by the round's START op (it hashes the participants' deal
commitments, which nobody could choose after seeing the others). Equal keys are impossible:
an author's lamports strictly increase, and two authors have different tiebreaks.

An op is **stable** once no op that sorts before it can still arrive: every participant has
been heard from at a later Lamport time, either by an op or by a heartbeat that promises
its next op will be later (and we hold all of that participant's ops up to the heartbeat).
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from .clocks import tiebreak
from .messages import Op

MIX_DOMAIN = b"nerts-p2p/mix\0"


def round_mix(commitments: Sequence[bytes]) -> bytes:
    """The round's seed mix: SHA-256 over the participants' commitments in START order."""
    return hashlib.sha256(MIX_DOMAIN + b"".join(commitments)).digest()


@dataclass
class EpochLog:
    """The ordered ops of one round, as this peer knows them so far."""

    epoch: int
    participants: tuple[bytes, ...]  # author ids in START order
    public_keys: dict[bytes, bytes]
    mix: bytes
    start: Op
    tiebreaks: dict[bytes, bytes] = field(default_factory=dict)
    keys: list[tuple[int, bytes]] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)
    #: participant -> highest Lamport time after which it can author nothing that sorts earlier
    horizon: dict[bytes, int] = field(default_factory=dict)
    excluded: dict[bytes, int] = field(default_factory=dict)  # expelled author -> first bad seq

    def __post_init__(self) -> None:
        for author in self.participants:
            self.tiebreaks[author] = tiebreak(self.mix, self.public_keys[author])
            self.horizon.setdefault(author, 0)
        # A host may start a round it does not play: its START is ordered like any op (it
        # authors nothing else in the round, so it does not hold back stability).
        host = self.start.author
        if host not in self.tiebreaks:
            self.tiebreaks[host] = tiebreak(self.mix, self.public_keys[host])
        self.index = {author: i for i, author in enumerate(self.participants)}

    def order_key(self, op: Op) -> tuple[int, bytes]:
        return op.lamport, self.tiebreaks[op.author]

    def insert(self, op: Op) -> int:
        """Add a delivered op; returns its position (less than the old length: a late op)."""
        key = self.order_key(op)
        at = bisect.bisect_right(self.keys, key)
        self.keys.insert(at, key)
        self.ops.insert(at, op)
        self.hear(op.author, op.lamport)
        return at

    def hear(self, author: bytes, lamport: int) -> None:
        if author in self.horizon and lamport > self.horizon[author]:
            self.horizon[author] = lamport

    def exclude(self, author: bytes, from_seq: int) -> None:
        """An expelled author: its ops from `from_seq` on no longer count, and it no longer
        holds back stability."""
        self.excluded[author] = min(from_seq, self.excluded.get(author, from_seq))

    def counts(self, op: Op) -> bool:
        bad = self.excluded.get(op.author)
        return bad is None or op.seq < bad

    def counts_author(self, author: bytes) -> bool:
        """False once the author is expelled (its later ops do not count)."""
        return author not in self.excluded

    def stable_bound(self) -> int:
        live = [h for a, h in self.horizon.items() if a not in self.excluded]
        return min(live) if live else 2**62

    def stable_count(self) -> int:
        """How many ops from the start of the order are stable."""
        return bisect.bisect_right(self.keys, (self.stable_bound(), b"\xff" * 33))

    def __iter__(self) -> Iterator[Op]:
        return iter(self.ops)

    def __len__(self) -> int:
        return len(self.ops)
