"""The blind peer, for tests and `nerts-p2p bench blind` (PROTOCOL.md 12 and 13).

A modified peer that never breaks a promise but hides what it saw: its ops and heartbeats
admit only a snapshot of its delivered ops that it refreshes every `staleness` seconds, and it
stamps each op with the lowest Lamport time those admitted deps allow. So its moves sort
before moves the others made up to `staleness` seconds earlier, and it wins those races.
The acknowledgment bound (`ACK_BOUND`) caps `staleness`: a peer that admits less than the
others acknowledge for longer is treated as silent and voted out.

`blind_benchmarks` measures what is left of its advantage: paired rounds (same seed, same
deals and bots) with one seat honest and then blind, comparing the seat's share of the
foundation races it takes part in (read from the final fold, `races`), exact ties apart, and
its score.
"""

from __future__ import annotations

import contextlib
import math
import statistics
from dataclasses import dataclass
from typing import Any

from nerts_p2p.game.bots import EXPERT
from nerts_p2p.game.moves import TO_FOUNDATION
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.presence import ACK_BOUND
from nerts_p2p.table.replica import FoldStep, ReplicatedRound, SeatLagging, TableReplica
from protocol.clocks import LamportClock
from protocol.envelope import seal
from protocol.messages import Kind, Op, heartbeat_body
from protocol.sync import BROADCAST, SyncPeer
from tools.mesh import Faults, MeshIdleError, PeerMesh
from tools.progress import SILENT, ProgressLine


class BlindSync(SyncPeer):
    """A SyncPeer that admits only a stale snapshot of what it holds (see the module doc)."""

    def __init__(self, *args: Any, staleness: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.staleness = staleness
        self.admitted: dict[bytes, int] = {}
        self._refreshed = float("-inf")

    def _admits(self, author: bytes) -> int:
        if author == self.me:
            return self.delivered(author)
        admitted = min(self.admitted.get(author, 0), self.delivered(author))
        for log in self.epochs.values():
            nonce = log.nonces.get(author)
            if nonce is not None and nonce[0] <= self.delivered(author):
                admitted = max(admitted, nonce[0])  # a move without every nonce never counts
        return admitted

    def deps_for(self, kind: Kind, epoch: int, payload: object) -> list[object]:
        deps = super().deps_for(kind, epoch, payload)
        if epoch == 0 or kind == Kind.START:
            return deps
        return [self._admits(p) for p in self.epochs[epoch].participants]

    def _floor(self, epoch: int, deps: list[object]) -> int:
        """The lowest Lamport time the admitted deps (and our own chain) allow, minus one."""
        floor = self.logs[self.me][-1].lamport if self.logs.get(self.me) else 0
        if epoch and epoch in self.epochs:
            log = self.epochs[epoch]
            floor = max(floor, log.start.lamport)
            for p, n in zip(log.participants, deps, strict=True):
                if isinstance(n, int) and n:
                    floor = max(floor, self.logs[p][n - 1].lamport)
        return floor

    def author(self, kind: Kind, epoch: int, payload: object) -> Op:
        if epoch == 0 or kind == Kind.START:
            return super().author(kind, epoch, payload)
        real = self.clock
        self.clock = LamportClock(self._floor(epoch, self.deps_for(kind, epoch, payload)))
        try:
            return super().author(kind, epoch, payload)
        finally:
            self.clock = real

    def tick(self, now: float) -> None:
        if now - self._refreshed >= self.staleness:
            self._refreshed = now
            self.admitted = {a: len(log) for a, log in self.logs.items()}
        if now < self._next_heartbeat:
            return
        self._next_heartbeat = now + self.heartbeat_interval
        vector = tuple(sorted((a, self._admits(a)) for a in self.logs if self._admits(a)))
        # Its promise: no op of ours below what our admitted view allows (it keeps it).
        lamport = max(
            (self._floor(e, self.deps_for(Kind.MOVE, e, "")) for e in self.epochs), default=0
        )
        lamport = max(lamport, self.logs[self.me][-1].lamport if self.logs.get(self.me) else 0)
        for epoch in self.epochs.values():
            epoch.hear(self.me, lamport)
        body = heartbeat_body(self.table, self.me, lamport, vector, b"")
        self._outbox.append((BROADCAST, seal(self.key, body)))


def make_blind(mesh: PeerMesh, peer: int, staleness: float) -> None:
    """Replace a mesh peer (before the table forms) by a blind one with the same key."""
    old = mesh.replicas[peer]
    blind = BlindSync(
        old.sync.key, old.sync.table, heartbeat_interval=mesh.heartbeat, staleness=staleness
    )
    replica = TableReplica(blind, name=old.name, role=old.role, randomness=old.randomness)
    replica.request_table(mesh.replicas[0].me, 0, mesh.now)
    mesh.replicas[peer] = replica
    mesh._flush(peer)


@dataclass(frozen=True)
class Race:
    """Two seats played the same face to the foundations without either having seen the
    other's op: the one that sorts first gets the card, the other's move no longer fits."""

    winner: int  # seat
    loser: int  # seat
    exact: bool  # same Lamport time: decided by the per-tie coin (PROTOCOL.md 6)


def races(rnd: ReplicatedRound) -> list[Race]:
    """Every race of a round, read from its fold (the same on every peer once final): a
    foundation MOVE that did not apply, and the applied foundation MOVE of the same face by
    another seat that its author had not seen when it played (its deps do not name it)."""
    out: list[Race] = []
    winners: dict[int, FoldStep] = {}  # face -> the latest applied foundation move of it
    index = rnd.log.index
    for step in rnd.steps:
        move = step.move
        if move is None or move.dest_kind != TO_FOUNDATION or step.in_the_air is None:
            continue
        face = move.declare if move.declare >= 0 else move.card & 63
        if step.applied:
            winners[face] = step
            continue
        won = winners.get(face)
        if won is None or won.move is None or won.move.seat == move.seat:
            continue
        seen = step.op.round_deps[index[won.op.author]] >= won.op.seq
        if not seen:
            out.append(Race(won.move.seat, move.seat, won.op.lamport == step.op.lamport))
    return out


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson score interval of a share `wins / n`."""
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def _share(record: list[int]) -> dict[str, Any]:
    won, lost = record
    low, high = wilson(won, won + lost)
    return {
        "won": won,
        "lost": lost,
        "share": round(won / (won + lost), 3) if won + lost else None,
        "ci95": [round(low, 3), round(high, 3)],
    }


def blind_benchmarks(
    rounds: int = 10,
    staleness: float = ACK_BOUND * 0.8,
    pace: float = 0.1,
    delay: tuple[float, float] = (0.02, 0.08),
    progress: ProgressLine = SILENT,
) -> dict[str, Any]:
    """Paired 4-seat rounds (same seeds, deals and bots): the seat of peer 1 honest, then
    blind. Expert bots at `pace` times their human delays on a link of `delay` seconds (a busy
    Wi-Fi LAN), so that moves cross in the air and foundation races happen: on a 1-4 ms link at
    human pace a round has hardly one.
    For each run: the races that seat took part in (all, and exact ties alone) and its share
    of wins, with 95 % intervals; its score; whether it was voted out."""
    peer = 1
    records = {
        (name, kind): [0, 0] for name in ("honest", "blind") for kind in ("all", "exact")
    }  # [won, lost] by the seat, over all pairs
    score_gain: list[int] = []
    departed = 0
    lagging = 0
    progress.expect(rounds)
    for seed in range(rounds):
        progress.step(f"pair {seed + 1} of {rounds}")
        outcome = []
        for blind in (False, True):
            mesh = PeerMesh(
                players=4,
                rules=Rules(seats=4),
                seed=1000 + seed,
                levels=(EXPERT,) * 4,
                faults=Faults(delay=delay),
                pace=pace,
            )
            if blind:
                make_blind(mesh, peer, staleness)
            with contextlib.suppress(MeshIdleError):  # stuck before its end: no final
                mesh.run(until=1500, rounds=1)
            final = mesh.finals[0].get(1)
            if final is None:
                break
            rnd = mesh.replicas[0].rounds[1]
            seat = rnd.seat_of[mesh.replicas[peer].me]
            outcome.append((races(rnd), seat, final.scores[seat].score, seat in final.departed))
            if blind:
                lagging += any(
                    isinstance(e, SeatLagging) and e.seat == seat
                    for events in mesh.events[:peer] + mesh.events[peer + 1 : 4]
                    for e in events
                )
        if len(outcome) < 2:
            continue
        for name, (found, seat, _, _) in zip(("honest", "blind"), outcome, strict=True):
            for race in found:
                if seat not in (race.winner, race.loser):
                    continue
                for kind in ("all", "exact") if race.exact else ("all",):
                    records[(name, kind)][0 if race.winner == seat else 1] += 1
        departed += outcome[1][3]
        score_gain.append(outcome[1][2] - outcome[0][2])
    return {
        "pairs": len(score_gain),
        "staleness_s": staleness,
        "bot_pace": pace,
        "link_delay_s": list(delay),
        "honest_seat_races": _share(records[("honest", "all")]),
        "honest_seat_exact_ties": _share(records[("honest", "exact")]),
        "blind_seat_races": _share(records[("blind", "all")]),
        "blind_seat_exact_ties": _share(records[("blind", "exact")]),
        "score_gain_median": statistics.median(score_gain) if score_gain else None,
        "score_gain_min_max": [min(score_gain), max(score_gain)] if score_gain else None,
        "blind_seat_flagged_lagging": lagging,
        "blind_seat_voted_out": departed,
    }


__all__ = ["BlindSync", "Race", "blind_benchmarks", "make_blind", "races", "wilson"]
