"""The bots' decision as it was before `bot_search`: every legal move listed, then scored.

Kept only as the yardstick the fast search must match move for move (and random draw for
random draw); the scoring below is the old `BotPlayer._score` and friends, unchanged."""

from __future__ import annotations

from nerts_p2p.game.bots import BotPlayer
from nerts_p2p.game.cards import RANK_OF, face_of, is_joker
from nerts_p2p.game.fit import build_on_work
from nerts_p2p.game.legal import legal_moves
from nerts_p2p.game.moves import (
    FROM_NERTS,
    FROM_WASTE,
    NERTS,
    PLAY,
    TO_FOUNDATION,
    TO_NERTS,
    TO_UNDER,
    TO_WORK,
    Move,
)
from nerts_p2p.game.state import GameState, SeatState


def _exposed_faces_of_others(state: GameState, seat: int) -> set[int]:
    faces: set[int] = set()
    for i, s in enumerate(state.seats):
        if i == seat:
            continue
        for entry in (s.nerts_top, s.waste_top, *(p[-1] for p in s.work if p)):
            if entry is not None and not is_joker(entry):
                faces.add(entry & 63)
    return faces


def _fits_somewhere(seat: SeatState, state: GameState, entry: int, *, skip: int = -1) -> bool:
    if face_of(entry) in state.wants or (RANK_OF[face_of(entry)] == 1 and not is_joker(entry)):
        return True
    return any(
        pile and j != skip and not isinstance(build_on_work(pile, (entry,)), str)
        for j, pile in enumerate(seat.work)
    )


class ReferenceBot(BotPlayer):
    """A `BotPlayer` deciding the old way: score every move of `legal_moves`."""

    _others: set[int]

    def _score(self, state: GameState, seat: SeatState, move: Move) -> float | None:
        """How much this player wants `move` (None: it does not consider it)."""
        level = self.level
        source, kind = move.source, move.dest_kind
        if move.action == NERTS:
            return 1000.0
        if move.action != PLAY:
            return None
        entry_face = move.card & 63
        if kind == TO_FOUNDATION:
            if is_joker(move.card) and source != FROM_NERTS:
                return None  # a joker is worth more kept as a wild card in the layout
            score = 100.0 + (30 if source == FROM_NERTS else 10 if source >= 0 else 5)
            if level.races and entry_face in self._others:
                score += 20  # someone else could take this foundation slot: go first
            return score
        if kind == TO_WORK:
            dest_empty = not seat.work[move.dest]
            if source == FROM_NERTS:
                return 80.0 + (0 if dest_empty else 5)
            if source == FROM_WASTE:
                if dest_empty:
                    keep = level.keeps_empty_pile and seat.nerts_count > 0
                    return None if keep else 20.0
                return 40.0
            if not level.substacks:
                return None
            return self._substack_score(state, seat, move)
        if kind == TO_UNDER:
            if not level.attacks:
                return None
            return 75.0 if source == FROM_NERTS else 35.0
        if kind == TO_NERTS:
            if not level.attacks:
                return None
            return 85.0 if source == FROM_NERTS else 45.0
        return None

    def _substack_score(self, state: GameState, seat: SeatState, move: Move) -> float | None:
        pile = seat.work[move.source]
        at = next(i for i in range(len(pile) - 1, -1, -1) if pile[i] & 1023 == move.card)
        dest_empty = not seat.work[move.dest]
        if at == 0:
            # Emptying a pile is useful, unless it just moves the whole pile to another hole.
            return None if dest_empty else 50.0
        exposed = pile[at - 1]
        nerts_top = seat.nerts_top
        if nerts_top is not None and not isinstance(build_on_work((exposed,), (nerts_top,)), str):
            return 60.0
        if face_of(exposed) in state.wants:
            return 55.0
        return None

    def _lookahead_bonus(self, state: GameState, seat: SeatState, move: Move) -> float:
        """Expert: a work move that lets the Nerts top go somewhere it could not before."""
        if move.action != PLAY or move.source < 0 or move.dest_kind != TO_WORK:
            return 0.0
        top = seat.nerts_top
        if top is None or _fits_somewhere(seat, state, top):
            return 0.0
        return 15.0

    def act(self, state: GameState) -> Move | None:
        """The next move this player makes, or None to wait (stuck, nothing new to try)."""
        seat_no = self.seat
        seat = state.seats[seat_no]
        if state.rotations != self._rotations:
            self._rotations, self._idle, self._stuck_signature = state.rotations, 0, None
        if self.level.races:
            self._others = _exposed_faces_of_others(state, seat_no)
        scored: list[tuple[float, Move]] = []
        for move in legal_moves(state, seat_no):
            score = self._score(state, seat, move)
            if score is None:
                continue
            if self.level.lookahead:
                score += self._lookahead_bonus(state, seat, move)
            scored.append((score, move))
        if scored and not (
            self.level.miss_chance
            and self.rng.random() < self.level.miss_chance
            and seat.stock
            and scored[0][1].action != NERTS
        ):
            if self.level.random_choice:
                move = self.rng.choice(scored)[1]
            else:
                best = max(score for score, _ in scored)
                move = next(m for score, m in scored if score == best)
            self._idle, self._stuck_signature = 0, None
            return move
        return self._no_play(state, seat)
