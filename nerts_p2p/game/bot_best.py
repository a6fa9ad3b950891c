"""The move of a bot level that plays its best move (casual, expert), found by priority.

`bot_search.bot_candidates` lists every move a level would consider, in `legal_moves`
order, and the level plays the first of the highest score. For a level that always plays
the best (not `random_choice`), the scores (see `bot_search`) fall into bands that decide
most of the choice before any list is built, so `best_candidate` looks at the groups of
moves from the highest band down and stops at the first group that has a move:

1. A card to a foundation (105 and up; every other move scores 85 at most): the Nerts
   top's first target (130, or 150 in a race) beats everything after it; else the first
   of the highest among the waste top (105 or 125) and the exposed work cards in pile
   order (110 or 130).
2. The Nerts top to a work pile or onto another seat's Nerts pile (85), to an empty work
   pile (80); sliding it under a pile (75) needs an empty pile, so it never beats that.
   These come first in the order, and no later move scores more than 75, so the first of
   the highest among them wins.
3. A sub-stack move (50 to 75): every other move left scores 45 at most.
4. The waste top onto another seat's Nerts pile (45), an exposed work card onto one (45,
   later in the order), the waste top to a work pile (40), under a pile (35), to an empty
   work pile (20, not while an expert keeps it for its Nerts card).

Nothing is listed, no `Move` is built, and the layout's sub-stack moves are worked out
only when the search gets to band 3. The choice is the very one of scoring the full list
(a test replays rounds of every level against the old decision move for move). Not for
`aces_first` tables, where an exposed ace bars every other move (the full search handles
those).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nerts_p2p.game.bot_search import (
    Candidate,
    _add_substacks,
    _foundation_targets,
    _piles,
)
from nerts_p2p.game.cards import CARD_MASK, FACE_SHIFT, RANK_OF
from nerts_p2p.game.fit import GOES_ON, builds_on_nerts, fits_work, slides_under
from nerts_p2p.game.moves import (
    FROM_NERTS,
    FROM_WASTE,
    NEW_FOUNDATION,
    TO_FOUNDATION,
    TO_NERTS,
    TO_UNDER,
    TO_WORK,
)
from nerts_p2p.game.state import GameState, SeatState

if TYPE_CHECKING:
    from nerts_p2p.game.bots import BotLevel


def best_candidate(state: GameState, seat_no: int, level: BotLevel) -> Candidate | None:
    """The move `level` (not `random_choice`) plays at this seat, or None when it has no
    card move at all (it may still call Nerts)."""
    if state.ended_by is not None:
        return None
    seat = state.seats[seat_no]
    wants = state.wants
    races = level.races
    nerts_up, work, waste = seat.nerts_up, seat.work, seat.waste

    # 1. Foundations.
    if nerts_up:
        entry = nerts_up[-1]
        index = entry & 63
        if index >= 52 or index in wants or RANK_OF[index] == 1:
            targets = _foundation_targets(wants, entry)
            if targets:
                score = 130.0
                if races and index < 52 and index in _faces_of_others(state, seat_no):
                    score += 20
                base, declared = targets[0]
                return (score, entry & CARD_MASK, FROM_NERTS, TO_FOUNDATION, base, declared)
    best: Candidate | None = None
    # The faces other seats show, for a level that races them to the foundations; worked
    # out at the first card that could go to one.
    others: set[int] | None = None
    if waste:
        # An ordinary card only (a joker goes to a foundation from the Nerts pile alone);
        # its face is its index, and an ace is never wanted (it starts a foundation).
        index = waste[-1] & 63
        if index < 52 and (index in wants or RANK_OF[index] == 1):
            score = 105.0
            if races:
                others = _faces_of_others(state, seat_no)
                if index in others:
                    score += 20
            takers = wants.get(index)
            base = takers[0] if takers else NEW_FOUNDATION
            best = (score, waste[-1] & CARD_MASK, FROM_WASTE, TO_FOUNDATION, base, -1)
    for k, pile in enumerate(work):
        if pile:
            index = pile[-1] & 63
            if index < 52 and (index in wants or RANK_OF[index] == 1):
                score = 110.0
                if races:
                    if others is None:
                        others = _faces_of_others(state, seat_no)
                    if index in others:
                        score += 20
                if best is None or score > best[0]:
                    takers = wants.get(index)
                    base = takers[0] if takers else NEW_FOUNDATION
                    best = (score, pile[-1] & CARD_MASK, k, TO_FOUNDATION, base, -1)
    if best is not None:
        return best

    rules = state.rules
    slides = level.attacks and rules.slide_under  # under a pile, given an empty one
    builds = level.attacks and rules.nerts_builds

    # 2. The Nerts top elsewhere.
    if nerts_up:
        entry = nerts_up[-1]
        card = entry & CARD_MASK
        face = _shown_face(entry)
        onto, empty = _landing(work, face)
        if onto >= 0:
            return (85.0, card, FROM_NERTS, TO_WORK, onto, -1)
        if builds:
            victim = _build_target(state, seat_no, entry)
            if victim >= 0:
                return (85.0, card, FROM_NERTS, TO_NERTS, victim, -1)
        if empty >= 0:
            # Sliding it under a pile (75) needs an empty pile, where it goes for 80.
            return (80.0, card, FROM_NERTS, TO_WORK, empty, -1)

    # 3. Sub-stacks.
    if level.substacks:
        stacks: list[Candidate] = []
        _add_substacks(state, seat_no, level, _piles(work, rules.fill_from_work).stacks(), stacks)
        if stacks:
            chosen = stacks[0]
            for candidate in stacks:
                if candidate[0] > chosen[0]:
                    chosen = candidate
            return chosen

    # 4. The rest: the waste top and the exposed work cards' builds.
    if builds:
        if waste:
            victim = _build_target(state, seat_no, waste[-1])
            if victim >= 0:
                return (45.0, waste[-1] & CARD_MASK, FROM_WASTE, TO_NERTS, victim, -1)
        for k, pile in enumerate(work):
            if pile:
                victim = _build_target(state, seat_no, pile[-1])
                if victim >= 0:
                    return (45.0, pile[-1] & CARD_MASK, k, TO_NERTS, victim, -1)
    if waste:
        return _waste_to_work(seat, level, slides)
    return None


def best_waste_candidate(state: GameState, seat_no: int, level: BotLevel) -> Candidate | None:
    """`best_candidate` when only the waste top can have a move (`bot_search.
    waste_candidates` for a level that plays its best; see `BotPlayer.act`): to a
    foundation, else to a work pile, under one, to an empty one. Not for tables where the
    level builds on other seats' Nerts piles."""
    seat = state.seats[seat_no]
    waste = seat.waste
    if not waste or state.ended_by is not None:
        return None
    wants = state.wants
    index = waste[-1] & 63
    if index < 52 and (index in wants or RANK_OF[index] == 1):
        score = 105.0
        if level.races and index in _faces_of_others(state, seat_no):
            score += 20
        takers = wants.get(index)
        base = takers[0] if takers else NEW_FOUNDATION
        return (score, waste[-1] & CARD_MASK, FROM_WASTE, TO_FOUNDATION, base, -1)
    return _waste_to_work(seat, level, level.attacks and state.rules.slide_under)


def _waste_to_work(seat: SeatState, level: BotLevel, slides: bool) -> Candidate | None:
    """The waste top's best move among its own piles (40, 35 or 20), or None."""
    work = seat.work
    entry = seat.waste[-1]
    card = entry & CARD_MASK
    face = _shown_face(entry)
    onto, empty = _landing(work, face)
    if onto >= 0:
        return (40.0, card, FROM_WASTE, TO_WORK, onto, -1)
    if slides and empty >= 0:
        slid = _under_target(work, face)
        if slid >= 0:
            return (35.0, card, FROM_WASTE, TO_UNDER, slid, -1)
    if empty >= 0 and not (level.keeps_empty_pile and seat.nerts_count > 0):
        return (20.0, card, FROM_WASTE, TO_WORK, empty, -1)
    return None


def _faces_of_others(state: GameState, seat_no: int) -> set[int]:
    """The face indexes on top of the other seats' piles (`bot_search._shown_by_another`
    for every face at once); a joker's index (52 or 53) may be among them, and a joker
    never races."""
    faces = set()
    for i, s in enumerate(state.seats):
        if i != seat_no:
            if s.nerts_up:
                faces.add(s.nerts_up[-1] & 63)
            if s.waste:
                faces.add(s.waste[-1] & 63)
            for pile in s.work:
                if pile:
                    faces.add(pile[-1] & 63)
    return faces


def _shown_face(entry: int) -> int:
    return entry & 63 if entry < 1 << FACE_SHIFT else (entry >> FACE_SHIFT) - 1


def _landing(work: tuple[tuple[int, ...], ...], face: int) -> tuple[int, int]:
    """The first work pile a card showing `face` goes on (-1 where there is none) and,
    where there is none, the first empty pile (-1 where there is none of those either).
    Whether a card fits depends on the face it shows alone."""
    empty = -1
    for j, pile in enumerate(work):
        if not pile:
            if empty < 0:
                empty = j
            continue
        top = pile[-1]
        t = top & 63 if top < 1 << FACE_SHIFT else (top >> FACE_SHIFT) - 1
        if GOES_ON[t << 6 | face] if t < 52 and face < 52 else fits_work(pile, face):
            return j, empty
    return -1, empty


def _under_target(work: tuple[tuple[int, ...], ...], face: int) -> int:
    """The first pile a card showing `face` slides under, or -1."""
    for j, pile in enumerate(work):
        if pile and slides_under(pile, face):
            return j
    return -1


def _build_target(state: GameState, seat_no: int, entry: int) -> int:
    """The first other seat whose Nerts top `entry` may go on, or -1."""
    for v, other in enumerate(state.seats):
        if v != seat_no and other.nerts_up and builds_on_nerts(other.nerts_up[-1], entry):
            return v
    return -1
