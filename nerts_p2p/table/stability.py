"""What the round's stable prefix lets the table announce: stable states (`StableState`)
and our lost races (`RaceLost`, with the seat that won) once they can no longer change.

Separate because announcements wait for stability while folding does not: a loss folded
now may still be undone by a later op until it is stable.
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING

from nerts_p2p.game.moves import TO_FOUNDATION, Move

from .events import RaceLost, StableState
from .round import ReplicatedRound

if TYPE_CHECKING:
    from .replica import TableReplica


def race_winner(rnd: ReplicatedRound, move: Move) -> int | None:
    if move.dest_kind != TO_FOUNDATION:
        return None
    face = move.declare if move.declare >= 0 else move.card & 63
    for step in reversed(rnd.steps):
        m = step.move
        if step.applied and m is not None and m.dest_kind == TO_FOUNDATION:
            their_face = m.declare if m.declare >= 0 else m.card & 63
            if their_face == face and m.seat != move.seat:
                return m.seat
    return None


def note_stability(replica: TableReplica) -> None:
    rnd = replica.current_round
    if rnd is None:
        return
    stable = min(rnd.log.stable_count(), len(rnd.states) - 1)
    if rnd.losses:
        # Each loss is found by its order key (not by a scan of the stable prefix, which
        # would cost the whole prefix on every datagram while a loss waits).
        now_stable = []
        for op_hash, (move, key) in rnd.losses.items():
            at = bisect.bisect_left(rnd.log.keys, key)
            if at < stable and rnd.steps[at].op.hash == op_hash:
                now_stable.append((at, op_hash, move))
        for at, op_hash, move in sorted(now_stable):
            del rnd.losses[op_hash]
            step = rnd.steps[at]
            if not step.applied:
                winner = race_winner(rnd, move)
                replica._events.append(RaceLost(rnd.number, move, step.reason, winner))
    if stable > rnd.announced_stable:
        rnd.announced_stable = stable
        replica._events.append(StableState(rnd.number, stable, rnd.states[stable]))
