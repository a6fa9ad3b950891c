"""One round as every peer folds it: its ops in the agreed total order folded through the
rules engine, re-folded from a late op's position, with the round's end and the moves
"in the air" after it (`ReplicatedRound`, one `FoldStep` per op).

Separate from the table because a round is a pure function of its ordered ops; the table
only decides when to fold, re-fold and finish it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from nerts_p2p.game.engine import apply, declare_gone
from nerts_p2p.game.errors import NotationError, Rejection, RejectReason
from nerts_p2p.game.moves import Move, parse_move
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.state import GameState
from protocol.messages import Kinds, Op
from protocol.order import EpochLog

from .events import RoundFinal


@dataclass
class FoldStep:
    op: Op
    move: Move | None
    applied: bool
    reason: str
    #: After the round's end: True if the move counted as in the air, None if its author had
    #: already seen the end (so it is out of the round, and out of the audit's replay too).
    in_the_air: bool | None = False
    #: departed seats declared gone (stuck for good) right after this op; the audit
    #: replays them too
    departed_stuck: tuple[int, ...] = ()


@dataclass
class ReplicatedRound:
    number: int
    rules: Rules
    log: EpochLog
    seat_of: dict[bytes, int]
    commitments: dict[bytes, bytes]  # participant -> its READY commitment
    dealer: dict[int, bytes]  # seat -> the participant whose deck it plays
    start_state: GameState
    states: list[GameState] = field(default_factory=list)  # states[i]: after i ops
    steps: list[FoldStep] = field(default_factory=list)
    end_position: int | None = None
    reveals: dict[bytes, Op] = field(default_factory=dict)  # dealer -> its REVEAL
    final: RoundFinal | None = None
    revealed: bool = False
    shared: bool = False  # partnerships: our seed went to our partner
    announced_stable: int = 0  # ops in the stable prefix when we last said so
    #: our lost races, not yet stable: op hash -> (the move, the op's order key)
    losses: dict[bytes, tuple[Move, tuple[int, bytes]]] = field(default_factory=dict)
    #: op hash -> its move, or why it is unreadable (a re-fold does not parse again)
    parsed: dict[bytes, Move | str] = field(default_factory=dict)
    covered: dict[bytes, bool] = field(default_factory=dict)  # op hash -> nonces_covered

    def __post_init__(self) -> None:
        if not self.states:
            self.states = [self.start_state]

    @property
    def state(self) -> GameState:
        return self.states[-1]

    @property
    def stable_state(self) -> GameState:
        return self.states[min(self.log.stable_count(), len(self.states) - 1)]

    def fold_from(self, position: int) -> list[FoldStep]:
        """Re-fold the ops from `position` on; returns the steps that were replaced."""
        position = min(position, len(self.steps))
        old = self.steps[position:]
        del self.steps[position:]
        del self.states[position + 1 :]
        if self.end_position is not None and self.end_position >= position:
            self.end_position = None
        for op in self.log.ops[position:]:
            self.fold_one(op)
        return old

    def fold_one(self, op: Op) -> None:
        state = self.states[-1]
        step = FoldStep(op, None, False, "")
        position = len(self.steps)
        key = self.log.keys[position] if position < len(self.log.keys) else self.log.order_key(op)
        if op.kind == Kinds.MOVE and self.log.counts(op):
            seat = self.seat_of[op.author]
            result: GameState | Rejection
            parsed = self.parsed.get(op.hash)
            if parsed is None:
                # Parsed once per op: a late op sorting early re-folds the ops after it.
                try:
                    parsed = parse_move(f"{seat} {op.payload}")
                except NotationError as exc:
                    parsed = f"unreadable move: {exc}"
                self.parsed[op.hash] = parsed
            if isinstance(parsed, str):
                result = Rejection(RejectReason.NO_SUCH_PILE, parsed)
            else:
                step.move = parsed
                if self.nonces_covered(op, key):
                    result = self._apply(state, op, step.move, step)
                else:
                    # PROTOCOL.md 6: ties are coins of every participant's nonce, so no move
                    # counts before its author had seen every nonce.
                    result = Rejection(
                        RejectReason.MISSING_REVEAL,
                        "played before every player's mix nonce had arrived",
                    )
            if isinstance(result, Rejection):
                step.reason = result.message
            else:
                step.applied = True
                state = result
        state = self._departed_say_stuck(state, key, step)
        if state.ended_by is not None and self.end_position is None:
            self.end_position = position
        self.steps.append(step)
        self.states.append(state)

    def nonces_covered(self, op: Op, key: tuple[int, bytes]) -> bool:
        """The op's author had every mix nonce it owed at its place in the order."""
        log = self.log
        # Once every nonce is in and nobody departed or was expelled, the answer depends on
        # the op alone: remembered, since a re-fold asks again for every op after a late one.
        settled = (
            not log.departed_at and not log.excluded and len(log.nonces) == len(log.participants)
        )
        if settled:
            known = self.covered.get(op.hash)
            if known is not None:
                return known
        covered = log.covers_owed_nonces(op, key)
        if settled:
            self.covered[op.hash] = covered
        return covered

    def departed_seats(self, key: tuple[int, bytes] | None = None) -> frozenset[int]:
        """Seats all of whose players had departed at `key` in the order (None: by now)."""
        return self.seats_of_only(
            p for p, at in self.log.departed_at.items() if key is None or at <= key
        )

    def seats_of_only(self, players: Iterable[bytes]) -> frozenset[int]:
        """The seats all of whose players are among `players` (two a seat with
        partnerships)."""
        among = set(players)
        gone: dict[int, bool] = {}
        for player, seat in self.seat_of.items():
            gone[seat] = gone.get(seat, True) and player in among
        return frozenset(seat for seat, left in gone.items() if left)

    def _departed_say_stuck(
        self, state: GameState, key: tuple[int, bytes], step: FoldStep
    ) -> GameState:
        """A departed seat is frozen as it lies: it counts as stuck, so the others can
        still end the round by all being stuck."""
        if not self.log.departed_at or state.ended_by is not None:
            return state
        for seat in sorted(self.departed_seats(key)):
            if not state.seats[seat].stuck and state.ended_by is None:
                state = declare_gone(state, seat)
                step.departed_stuck += (seat,)
        return state

    def _apply(self, state: GameState, op: Op, move: Move, step: FoldStep) -> GameState | Rejection:
        if state.ended_by is None or self.end_position is None:
            return apply(state, move)
        end_op = self.steps[self.end_position].op
        seen_end = op.round_deps[self.log.index[end_op.author]] >= end_op.seq
        if seen_end or op.author == end_op.author:
            step.in_the_air = None
            return Rejection(RejectReason.ROUND_OVER, "the round was over when this was played")
        step.in_the_air = True
        return apply(state, move, in_the_air=True)

    def covers_end(self, op: Op) -> bool:
        """Had `op`'s author seen the op that ended the round (its deps name it)?"""
        if self.end_position is None:
            return False
        end_op = self.steps[self.end_position].op
        return op.round_deps[self.log.index[end_op.author]] >= end_op.seq

    def end_is_stable(self) -> bool:
        return self.end_position is not None and self.end_position < self.log.stable_count()

    def moves_in_fold_order(self) -> list[tuple[Move, bool] | int]:
        """Every parsed move with its in-the-air flag, for the audit."""
        out: list[tuple[Move, bool] | int] = []
        for step in self.steps:
            if step.move is not None and step.in_the_air is not None:
                out.append((step.move, step.in_the_air))
            out.extend(step.departed_stuck)
        return out
