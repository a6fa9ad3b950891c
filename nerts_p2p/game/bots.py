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

import random
from dataclasses import dataclass, field
from typing import Final

from nerts_p2p.game.bot_best import best_candidate, best_waste_candidate
from nerts_p2p.game.bot_search import bot_candidates, waste_candidates, watched_faces
from nerts_p2p.game.legal import first_card_play
from nerts_p2p.game.moves import (
    NERTS,
    PLAY,
    RECYCLE,
    STUCK,
    TURN,
    Move,
)
from nerts_p2p.game.state import GameState, SeatState

_new_move = tuple.__new__


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


@dataclass
class BotPlayer:
    """One player's hands and habits: a level, a seat and a seeded random source."""

    level: BotLevel
    seat: int
    rng: random.Random
    _idle: int = 0
    _stuck_signature: tuple[object, ...] | None = None
    _rotations: int = 0
    #: (work piles, Nerts pile, faces its moves wait for) after a search that found no move.
    _quiet: tuple[object, object, frozenset[int]] | None = field(
        default=None, init=False, repr=False
    )
    #: This seat's `turn` and `recycle` moves.
    _stock_moves: tuple[Move, Move] | None = field(default=None, init=False, repr=False)

    def delay(self, move: Move | None) -> float:
        """Simulated seconds before this player decides again after `move`."""
        if move is None:
            return 0.5
        base = self.level.flip if move.action in (TURN, RECYCLE) else self.level.think
        return base * (0.7 + 0.6 * self.rng.random())

    def act(self, state: GameState) -> Move | None:
        """The next move this player makes, or None to wait (stuck, nothing new to try)."""
        if state.rotations != self._rotations:
            self._rotations, self._idle, self._stuck_signature = state.rotations, 0, None
        if self.level.random_choice or state.rules.aces_first:
            return self._act_listing(state)
        return self._act_best(state)

    def _quiet_holds(self, state: GameState, seat: SeatState) -> bool:
        """Whether only the waste can have changed what this player may do: the last search
        found nothing; since then the work piles and the Nerts pile are the same (the very
        same objects: state parts are immutable) and no card the search looked at is wanted
        by a foundation now. Not where an ace on the waste would bar every other move
        (`aces_first`) or where the player builds on the other seats' Nerts piles."""
        quiet = self._quiet
        rules = state.rules
        return (
            quiet is not None
            and quiet[0] is seat.work
            and quiet[1] is seat.nerts_up
            and state.wants.keys().isdisjoint(quiet[2])
            and not rules.aces_first
            and not (self.level.attacks and rules.nerts_builds)
        )

    def _remember_search(self, state: GameState, seat: SeatState, found: bool) -> None:
        """After a search: forget the quiet layout if it found a move, else remember what
        it looked at (once per layout)."""
        if found:
            self._quiet = None
            return
        quiet = self._quiet
        if quiet is None or quiet[0] is not seat.work or quiet[1] is not seat.nerts_up:
            self._quiet = (seat.work, seat.nerts_up, watched_faces(state, self.seat))

    def _act_best(self, state: GameState) -> Move | None:
        """A level that plays its best move: found by priority (`bot_best`), no list."""
        seat_no = self.seat
        seat = state.seats[seat_no]
        level = self.level
        rules = state.rules
        work, nerts_up = seat.work, seat.nerts_up
        quiet = self._quiet
        # `_quiet_holds` and `_remember_search`, inlined: this runs for every decision (and
        # `aces_first`, which bars the quiet look, never comes here).
        if (
            quiet is not None
            and quiet[0] is work
            and quiet[1] is nerts_up
            and state.wants.keys().isdisjoint(quiet[2])
            and not (level.attacks and rules.nerts_builds)
        ):
            best = best_waste_candidate(state, seat_no, level)
            can_call = False
        else:
            best = best_candidate(state, seat_no, level)
            can_call = (
                not nerts_up
                and not seat.nerts_hidden
                and not rules.must_call
                and state.ended_by is None
            )
        found = best is not None
        if found or can_call:
            self._quiet = None
        elif quiet is None or quiet[0] is not work or quiet[1] is not nerts_up:
            self._quiet = (work, nerts_up, watched_faces(state, seat_no))
        if (found or can_call) and not (
            level.miss_chance
            and self.rng.random() < level.miss_chance
            and seat.stock
            and found  # calling Nerts is never overlooked
        ):
            self._idle, self._stuck_signature = 0, None
            if can_call or best is None:
                return Move(seat_no, NERTS)
            _, card, source, kind, dest, declare = best
            # `tuple.__new__` rather than the generated constructor: once per card move.
            return _new_move(Move, (seat_no, PLAY, card, source, kind, dest, declare, ()))
        return self._no_play(state, seat)

    def _act_listing(self, state: GameState) -> Move | None:
        """A novice (one random draw over every move it would make), and any level at an
        `aces_first` table: the moves listed in `legal_moves` order (`bot_search`)."""
        seat_no = self.seat
        seat = state.seats[seat_no]
        level = self.level
        if self._quiet_holds(state, seat):
            candidates, can_call = waste_candidates(state, seat_no, level), False
        else:
            candidates, can_call = bot_candidates(state, seat_no, level)
        self._remember_search(state, seat, bool(candidates) or can_call)
        if (candidates or can_call) and not (
            level.miss_chance
            and self.rng.random() < level.miss_chance
            and seat.stock
            and candidates  # calling Nerts is never overlooked
        ):
            self._idle, self._stuck_signature = 0, None
            if level.random_choice:
                # One draw over every choice, the Nerts call last, as `rng.choice` does.
                index = self.rng.choice(range(len(candidates) + can_call))
                if index == len(candidates):
                    return Move(seat_no, NERTS)
                chosen = candidates[index]
            elif can_call:
                return Move(seat_no, NERTS)
            else:
                # The first of the best, in one pass (a tie goes to the earlier move).
                chosen = candidates[0]
                for candidate in candidates:
                    if candidate[0] > chosen[0]:
                        chosen = candidate
            return Move(seat_no, PLAY, *chosen[1:])
        return self._no_play(state, seat)

    def _no_play(self, state: GameState, seat: SeatState) -> Move | None:
        if seat.stuck:
            if _signature(state) == self._stuck_signature:
                return None
            # Something changed in the centre: go through the stock again.
            self._idle, self._stuck_signature = 0, None
        cards = len(seat.stock) + len(seat.waste)
        one_pass = -(-cards // state.rules.draw) + 1  # turns to see every card, plus one
        if self._idle > one_pass or cards == 0:
            if seat.stuck:
                return None
            play = first_card_play(state, self.seat)
            if play is not None:
                # The rules refuse "stuck" while a card can be played (one this player
                # passed over, such as a waste card it would rather not put on an empty
                # pile): play it, as a player told "you are not stuck" would.
                return play
            self._stuck_signature = _signature(state)
            return Move(self.seat, STUCK)
        self._idle += 1
        # Half of all decisions: the two moves are made once per seat (a table may seat the
        # player after it is made, see tools/mesh.py, so the seat is checked).
        moves = self._stock_moves
        if moves is None or moves[0].seat != self.seat:
            moves = self._stock_moves = (Move(self.seat, TURN), Move(self.seat, RECYCLE))
        return moves[0] if seat.stock else moves[1]


def _signature(state: GameState) -> tuple[object, ...]:
    """What a stuck player watches: something new in the centre sends it back to its stock."""
    return (
        sum(len(f.cards) for f in state.foundations.values()),
        state.rotations,
        tuple(s.nerts_top for s in state.seats),
    )
