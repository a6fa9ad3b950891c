"""The total order of a round's ops and which prefix of it is stable.

Ops of round r sort by ``(lamport, tiebreak)``. The tiebreak is a coin for this very tie:
``SHA-256("nerts-p2p/tie" || nonce_mix(op) || lamport || author's public key)``, where
``nonce_mix(op)`` hashes the round's commitment mix with every mix nonce (MIX op) the op's
deps cover. Each participant committed to its nonce in its READY, before the START fixed
who plays, and reveals it in a MIX op once the round has started; a MOVE counts only when
its deps cover every participant's nonce (the fold rejects it otherwise). So every exact
tie between MOVEs is decided by randomness that nobody knew when the last commitment was
made, and two ties at different Lamport times are independent coins (PROTOCOL.md 6).
Equal keys are impossible: an author's lamports strictly increase, and two authors' coins
differ (SHA-256 collisions aside).

An op is **stable** once no op that sorts before it can still arrive: every participant has
been heard from at a later Lamport time, either by an op or by a heartbeat that promises
its next op will be later (and we hold all of that participant's ops up to the heartbeat).
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from .messages import Kinds, Op

MIX_DOMAIN = b"nerts-p2p/mix\0"
NONCE_DOMAIN = b"nerts-p2p/mix-nonce\0"
NONCE_MIX_DOMAIN = b"nerts-p2p/nonces\0"
TIE_DOMAIN = b"nerts-p2p/tie\0"
#: Sorts after every tie coin (32 bytes): (lamport, this) ends the ops at that Lamport time.
_AFTER_EVERY_COIN = b"\xff" * 33


def round_mix(commitments: Sequence[bytes]) -> bytes:
    """The round's commitment mix: SHA-256 over the participants' commitments in START order."""
    return hashlib.sha256(MIX_DOMAIN + b"".join(commitments)).digest()


def nonce_commitment(nonce: bytes) -> bytes:
    """What a READY carries for its author's mix nonce."""
    return hashlib.sha256(NONCE_DOMAIN + nonce).digest()


def nonce_mix(mix: bytes, nonces: Sequence[bytes | None]) -> bytes:
    """The commitment mix and the revealed nonces (None: not covered), in START order."""
    parts = [b"\x01" + n if n is not None else b"\x00" for n in nonces]
    return hashlib.sha256(NONCE_MIX_DOMAIN + mix + b"".join(parts)).digest()


def tie_coin(mix_of_nonces: bytes, lamport: int, public_key: bytes) -> bytes:
    """The tiebreak of one op: a fresh coin for every Lamport time."""
    return hashlib.sha256(
        TIE_DOMAIN + mix_of_nonces + lamport.to_bytes(8, "big") + public_key
    ).digest()


@dataclass
class EpochLog:
    """The ordered ops of one round, as this peer knows them so far."""

    epoch: int
    participants: tuple[bytes, ...]  # author ids in START order
    public_keys: dict[bytes, bytes]
    mix: bytes
    start: Op
    keys: list[tuple[int, bytes]] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)
    #: participant -> highest Lamport time after which it can author nothing that sorts earlier
    horizon: dict[bytes, int] = field(default_factory=dict)
    excluded: dict[bytes, int] = field(default_factory=dict)  # expelled author -> first bad seq
    #: participant -> (seq of its MIX op, its nonce)
    nonces: dict[bytes, tuple[int, bytes]] = field(default_factory=dict)
    #: departed participant -> the last of its seqs that counts (PROTOCOL.md 13)
    departed: dict[bytes, int] = field(default_factory=dict)
    #: the order key of the DEPART op at which the departures were agreed
    departed_at: dict[bytes, tuple[int, bytes]] = field(default_factory=dict)

    depart_ops: int = 0  # DEPART ops ordered so far
    #: (DEPART ops, expulsions) when departures were last worked out
    depart_seen: tuple[int, int] = (0, 0)
    #: the START can no longer be voided (`sync_starters.start_confirmed`): we may act
    confirmed: bool = False

    def __post_init__(self) -> None:
        for author in self.participants:
            self.horizon.setdefault(author, 0)
        self.index = {author: i for i, author in enumerate(self.participants)}
        #: the nonces an op covers (None where it covers none) -> their nonce mix. Each
        #: participant's nonce is set once, so there are at most 2^participants entries;
        #: every op of the round needs one, and most share it.
        self._mixes: dict[tuple[bytes | None, ...], bytes] = {}

    def order_key(self, op: Op) -> tuple[int, bytes]:
        return op.lamport, tie_coin(self.nonce_mix_of(op), op.lamport, self.public_keys[op.author])

    def covered_nonces(self, op: Op) -> tuple[bytes | None, ...]:
        """Each participant's nonce if the op covers it (its author had delivered that
        participant's MIX when it made the op), else None."""
        deps = op.round_deps
        if len(deps) != len(self.participants):
            return (None,) * len(self.participants)
        nonces = self.nonces
        covered: list[bytes | None] = []
        for participant, seen in zip(self.participants, deps, strict=True):
            held = nonces.get(participant)
            covered.append(held[1] if held is not None and held[0] <= seen else None)
        return tuple(covered)

    def nonce_mix_of(self, op: Op) -> bytes:
        covered = self.covered_nonces(op)
        mixed = self._mixes.get(covered)
        if mixed is None:
            mixed = self._mixes[covered] = nonce_mix(self.mix, covered)
        return mixed

    def covers_owed_nonces(self, op: Op, key: tuple[int, bytes]) -> bool:
        """The op covers the nonce of every participant that owes one at `key` in the order
        (`owes_nonce`): what a MOVE needs to count (PROTOCOL.md 6)."""
        deps = op.round_deps
        if len(deps) != len(self.participants):
            return not any(self.owes_nonce(p, key) for p in self.participants)
        nonces = self.nonces
        for participant, seen in zip(self.participants, deps, strict=True):
            held = nonces.get(participant)
            if (held is None or held[0] > seen) and self.owes_nonce(participant, key):
                return False
        return True

    def owes_nonce(self, participant: bytes, before: tuple[int, bytes]) -> bool:
        """A MOVE sorting at `before` must cover `participant`'s nonce: it still plays then."""
        if participant in self.excluded:
            return False  # expelled for equivocation: its nonce cannot be trusted either way
        at = self.departed_at.get(participant)
        return at is None or at > before

    def insert(self, op: Op) -> int:
        """Add a delivered op; returns its position (less than the old length: a late op)."""
        if op.kind == Kinds.MIX and op.author in self.index and op.author not in self.nonces:
            self.nonces[op.author] = (op.seq, op.payload)
        elif op.kind == Kinds.DEPART:
            self.depart_ops += 1
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
        holds back stability. They leave the order too, so positions (and the stable
        prefix's length) count only ops that count: an op caught breaking a promise the moment
        it arrives takes no slot that another peer, which never ordered it, would not have."""
        self.excluded[author] = min(from_seq, self.excluded.get(author, from_seq))
        kept = [i for i, op in enumerate(self.ops) if self.counts(op)]
        if len(kept) != len(self.ops):
            self.keys = [self.keys[i] for i in kept]
            self.ops = [self.ops[i] for i in kept]

    def orders(self, author: bytes) -> bool:
        """The round orders this author's ops: a participant, or the host that started it
        (a host may start a round it does not play; its START is ordered like any op)."""
        return author in self.index or author == self.start.author

    def counts_for_order(self, op: Op) -> bool:
        """Ordered here: not an op of an expelled author from its equivocation on. (A
        departed author's late ops are ordered but do not count: a departure is a function
        of the ops, so a late DEPART could still move it.)"""
        bad = self.excluded.get(op.author)
        return bad is None or op.seq < bad

    def counts(self, op: Op) -> bool:
        if not self.counts_for_order(op):
            return False
        cut = self.departed.get(op.author)
        return cut is None or op.seq <= cut

    def counts_author(self, author: bytes) -> bool:
        """False once the author is expelled or departed (its later ops do not count)."""
        return author not in self.excluded and author not in self.departed

    def stable_bound(self) -> int:
        if not self.excluded and not self.departed:
            return min(self.horizon.values(), default=2**62)
        live = [
            h for a, h in self.horizon.items() if a not in self.excluded and a not in self.departed
        ]
        return min(live) if live else 2**62

    def stable_count(self) -> int:
        """How many ops from the start of the order are stable."""
        return bisect.bisect_right(self.keys, (self.stable_bound(), _AFTER_EVERY_COIN))

    def __iter__(self) -> Iterator[Op]:
        return iter(self.ops)

    def __len__(self) -> int:
        return len(self.ops)
