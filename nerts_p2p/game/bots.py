"""Bots of three levels. A bot sees only the public state (`state.seats[*]` face-up cards,
foundations, pile sizes) and its own seat; it never reads a face-down slot, so it plays
the same from an all-knowing view as from a public one (a test checks exactly that).

The levels differ in skill and in speed:

- ``novice``: plays cards to foundations and work piles as it happens to see them, misses
  a third of what it could play, never moves sub-stacks; slow hands.
- ``casual``: plays the best move by fixed priorities (foundations, then freeing the Nerts
  pile, then useful work-pile moves); misses one move in ten; human pace.
- ``expert``: adds races (cards other seats could also play go first), keeps an empty
  work pile for its Nerts card, slides under, builds on others' Nerts piles, and looks one
  move ahead for work-pile moves that free its Nerts top; quick hands.

Times are seconds of *simulated* time for the simulator, and real time for live bots.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Final

from nerts_p2p.game.cards import RANK_OF, face_of, is_joker
from nerts_p2p.game.fit import build_on_work
from nerts_p2p.game.legal import first_card_play, legal_moves
from nerts_p2p.game.moves import (
    FROM_NERTS,
    FROM_WASTE,
    NERTS,
    PLAY,
    RECYCLE,
    STUCK,
    TO_FOUNDATION,
    TO_NERTS,
    TO_UNDER,
    TO_WORK,
    TURN,
    Move,
)
from nerts_p2p.game.state import GameState, SeatState


@dataclass(frozen=True)
class BotLevel:
    name: str
    rank: int
    miss_chance: float  # chance to overlook a productive move and turn the stock instead
    think: float  # mean seconds to decide a card move
    flip: float  # mean seconds to turn the stock
    reach: float  # seconds for the hand to carry a card (a move lands this long after)
    substacks: bool
    races: bool
    keeps_empty_pile: bool
    attacks: bool
    lookahead: bool
    random_choice: bool


NOVICE: Final = BotLevel("novice", 1, 0.35, 1.6, 0.9, 0.45, False, False, False, False, False, True)
CASUAL: Final = BotLevel("casual", 2, 0.10, 1.0, 0.55, 0.35, True, False, False, True, False, False)
EXPERT: Final = BotLevel("expert", 3, 0.0, 0.6, 0.35, 0.25, True, True, True, True, True, False)
LEVELS: Final = {level.name: level for level in (NOVICE, CASUAL, EXPERT)}
LEVELS_BY_RANK: Final = {level.rank: level for level in (NOVICE, CASUAL, EXPERT)}


def level_named(name: str) -> BotLevel:
    key = name.strip().lower()
    if key.isdigit() and int(key) in LEVELS_BY_RANK:
        return LEVELS_BY_RANK[int(key)]
    if key not in LEVELS:
        raise ValueError(f"unknown bot level {name!r}: choose novice, casual or expert (1-3)")
    return LEVELS[key]


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


@dataclass
class BotPlayer:
    """One player's hands and habits: a level, a seat and a seeded random source."""

    level: BotLevel
    seat: int
    rng: random.Random
    _idle: int = 0
    _stuck_signature: tuple[object, ...] | None = None
    _rotations: int = 0
    _others: set[int] = field(default_factory=set)

    def delay(self, move: Move | None) -> float:
        """Simulated seconds before this player decides again after `move`."""
        if move is None:
            return 0.5
        base = self.level.flip if move.action in (TURN, RECYCLE) else self.level.think
        return base * (0.7 + 0.6 * self.rng.random())

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

    def _no_play(self, state: GameState, seat: SeatState) -> Move | None:
        signature = (
            sum(len(f.cards) for f in state.foundations.values()),
            state.rotations,
            tuple(s.nerts_top for s in state.seats),
        )
        if seat.stuck:
            if signature == self._stuck_signature:
                return None
            # Something changed in the centre: go through the stock again.
            self._idle, self._stuck_signature = 0, None
        cards = len(seat.stock) + len(seat.waste)
        one_pass = math.ceil(cards / state.rules.draw) + 1
        if self._idle > one_pass or cards == 0:
            if seat.stuck:
                return None
            play = first_card_play(state, self.seat)
            if play is not None:
                # The rules refuse "stuck" while a card can be played (one this player
                # passed over, such as a waste card it would rather not put on an empty
                # pile): play it, as a player told "you are not stuck" would.
                return play
            self._stuck_signature = signature
            return Move(self.seat, STUCK)
        self._idle += 1
        return Move(self.seat, TURN if seat.stock else RECYCLE)
