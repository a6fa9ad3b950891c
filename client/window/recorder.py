"""What a player's machine remembers to save a match as a replay.

The replicated log has no clock (its order is Lamport's), so the recorder notes when each
op was first seen here; with the rounds as the replica folded them, that is a `Replay`.
A network session can use the same recorder on its own replica.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from nerts_p2p.game.engine import shown_cards
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import FoldStep, ReplicatedRound, TableReplica

from .replay_file import Replay, ReplayMove, ReplayResult, ReplayRound


@dataclass
class MatchRecorder:
    first_seen: dict[bytes, float] = field(default_factory=dict)
    _seen_ops: int = 0

    def note(self, replica: TableReplica, now: float) -> None:
        """Call after the replica took in new datagrams: new ops are stamped `now`."""
        rnd = replica.current_round
        if rnd is None or len(rnd.log.ops) == self._seen_ops:
            return
        self._seen_ops = len(rnd.log.ops)
        for op in rnd.log.ops:
            self.first_seen.setdefault(op.hash, now)

    def replay(
        self,
        replica: TableReplica,
        rules: Rules,
        names: tuple[str, ...],
        started: dict[int, float],
    ) -> Replay | None:
        """Every round that has started, as the replica folded it (None before the deal);
        `started` says when each round began on the same clock as `note`'s."""
        if not replica.rounds:
            return None
        rounds = []
        for number in sorted(replica.rounds):
            rnd = replica.rounds[number]
            start = started.get(number, 0.0)

            def seen_at(step: FoldStep, index: int, start: float = start) -> float:
                return max(0.0, self.first_seen.get(step.op.hash, start) - start)

            rounds.append(folded_round(number, rnd, seen_at))
        return Replay(rules, names, tuple(rounds))


def folded_round(
    number: int,
    rnd: ReplicatedRound,
    when: Callable[[FoldStep, int], float],
    names: tuple[str, ...] | None = None,
) -> ReplayRound:
    """One round as the replica folded it: its moves, each at `when(step, index)` (index:
    the moves before it), its result once final, and every seat's shown cards."""
    moves: list[ReplayMove] = []
    for step in rnd.steps:
        if step.move is None or step.in_the_air is None:
            continue  # not a move, or one played after its author saw the end
        moves.append(ReplayMove(when(step, len(moves)), step.move, step.in_the_air))
    result = None
    if rnd.final is not None:
        result = ReplayResult(
            rnd.final.scores,
            rnd.final.totals,
            rnd.final.cheaters,
            rnd.state.ended_by or "",
            rnd.state.called_by,
        )
    shown = tuple(shown_cards(rnd.start_state, s) for s in range(rnd.rules.seats))
    seated = rnd.rules if names is not None else None
    return ReplayRound(number, shown, tuple(moves), result, seated, names)
