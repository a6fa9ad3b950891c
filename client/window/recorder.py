"""What a player's machine remembers to save a match as a replay.

The replicated log has no clock (its order is Lamport's), so the recorder notes when each
op was first seen here; with the rounds as the replica folded them, that is a `Replay`.
A network session can use the same recorder on its own replica.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nerts_p2p.game.engine import shown_cards
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import TableReplica

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
            moves = []
            for step in rnd.steps:
                if step.move is None or step.in_the_air is None:
                    continue  # not a move, or one played after its author saw the end
                at = self.first_seen.get(step.op.hash, start) - start
                moves.append(ReplayMove(max(0.0, at), step.move, step.in_the_air))
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
            rounds.append(ReplayRound(number, shown, tuple(moves), result))
        return Replay(rules, names, tuple(rounds))
