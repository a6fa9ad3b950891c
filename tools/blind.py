"""The blind peer, for tests and `nerts-p2p bench blind` (PROTOCOL.md 12 and 13).

A modified peer that never breaks a promise but hides what it saw: its ops and heartbeats
admit only a snapshot of its delivered ops that it refreshes every `staleness` seconds, and it
stamps each op with the lowest Lamport time those admitted deps allow. So its moves sort
before moves the others made up to `staleness` seconds earlier, and it wins those races.
The acknowledgment bound (`ACK_BOUND`) caps `staleness`: a peer that admits less than the
others acknowledge for longer is treated as silent and voted out.

`blind_benchmarks` measures what is left of its advantage: paired rounds (same seed, same
deals and bots) with one seat honest and then blind, comparing the seat's share of races
and its score.
"""

from __future__ import annotations

import statistics
from typing import Any

from nerts_p2p.game.rules import Rules
from nerts_p2p.table.presence import ACK_BOUND
from nerts_p2p.table.replica import RaceLost, TableReplica
from protocol.clocks import LamportClock
from protocol.envelope import seal
from protocol.messages import Kind, Op, heartbeat_body
from protocol.sync import BROADCAST, SyncPeer
from tools.mesh import PeerMesh


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


def _race_record(mesh: PeerMesh, peer: int) -> tuple[int, int]:
    """(races the peer's seat won, races it lost) over round 1, from the losers' events."""
    seat = mesh.replicas[peer].rounds[1].seat_of[mesh.replicas[peer].me]
    lost = sum(isinstance(e, RaceLost) for e in mesh.events[peer])
    won = sum(
        isinstance(e, RaceLost) and e.winner_seat == seat
        for i, events in enumerate(mesh.events)
        if i != peer
        for e in events
    )
    return won, lost


def blind_benchmarks(rounds: int = 10, staleness: float = ACK_BOUND * 0.8) -> dict[str, Any]:
    """Paired 4-seat rounds: seat of peer 1 honest, then blind (same seeds)."""
    peer = 1
    races = {"honest": [0, 0], "blind": [0, 0]}  # [won, lost] by the seat, over all pairs
    score_gain: list[int] = []
    departed = 0
    for seed in range(rounds):
        outcome = []
        for blind in (False, True):
            mesh = PeerMesh(players=4, rules=Rules(seats=4), seed=1000 + seed)
            if blind:
                make_blind(mesh, peer, staleness)
            mesh.run(until=1500, rounds=1)
            final = mesh.finals[0].get(1)
            if final is None:
                break
            seat = mesh.replicas[0].rounds[1].seat_of[mesh.replicas[peer].me]
            won, lost = _race_record(mesh, peer)
            outcome.append((won, lost, final.scores[seat].score, seat in final.departed))
        if len(outcome) < 2:
            continue
        for name, (won, lost, _, _) in zip(("honest", "blind"), outcome, strict=True):
            races[name][0] += won
            races[name][1] += lost
        departed += outcome[1][3]
        score_gain.append(outcome[1][2] - outcome[0][2])
    return {
        "pairs": len(score_gain),
        "staleness_s": staleness,
        "races_won_lost_honest": races["honest"],
        "races_won_lost_blind": races["blind"],
        "score_gain_median": statistics.median(score_gain) if score_gain else None,
        "score_gain_min_max": [min(score_gain), max(score_gain)] if score_gain else None,
        "blind_seat_voted_out": departed,
    }


__all__ = ["BlindSync", "blind_benchmarks", "make_blind"]
