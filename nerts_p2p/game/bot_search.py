"""How a bot finds its card move without listing every legal move.

A bot wants one move: the best by its level's priorities, or (a novice) any it notices.
Listing every legal `Move` of a seat, with a worded reason built for each failed fit, only
to pick one cost most of a simulated round. `bot_candidates` walks the same moves in the
same order as `legal.legal_moves`, scores them as the level does, and keeps plain tuples:
a `Move` is built only for the one chosen. It skips whole groups of moves that the level
never plays (sub-stacks for a novice, attacks below casual) or that cannot beat the best
found so far (a tie goes to the earlier move, as before), so the choice, and every random
number drawn for it, are those of scoring the full legal list (a test replays rounds both
ways and compares).

Scores (higher first): call Nerts 1000; a card to a foundation 100 plus 30 from the Nerts
pile, 10 from a work pile, 5 from the waste, plus 20 for a race (another seat shows the
same face); onto another seat's Nerts pile 85 from the Nerts pile, else 45; the Nerts top
to a work pile 85 (80 onto an empty one); slid under 75 from the Nerts pile, else 35; a
sub-stack 60 when it uncovers a card the Nerts top fits, 55 when it uncovers a card a
foundation wants, 50 when it empties a pile onto another card; the waste top to a work
pile 40 (20 onto an empty one, never while keeping it for the Nerts pile); an expert adds
15 to a sub-stack while its Nerts top fits nowhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from nerts_p2p.game.cards import CARD_MASK, FACE_SHIFT, RANK_OF, RED_OF, face_index
from nerts_p2p.game.fit import GOES_ON, builds_on_nerts, fits_work, slides_under, substack_moves
from nerts_p2p.game.moves import (
    FROM_NERTS,
    FROM_WASTE,
    NEW_FOUNDATION,
    TO_FOUNDATION,
    TO_NERTS,
    TO_UNDER,
    TO_WORK,
)
from nerts_p2p.game.state import GameState

if TYPE_CHECKING:
    from nerts_p2p.game.bots import BotLevel

NERTS_CALL = 1000.0
#: The most a sub-stack move can score (60, plus an expert's 15 of look-ahead).
SUBSTACK_MOST = 75.0


class Candidate(NamedTuple):
    """A card move a bot considers, with what it is worth to it."""

    score: float
    card: int
    source: int
    dest_kind: str
    dest: int
    declare: int = -1


def _face(entry: int) -> int:
    return entry & 63 if entry < 1 << FACE_SHIFT else (entry >> FACE_SHIFT) - 1


def _fits_somewhere(state: GameState, work: tuple[tuple[int, ...], ...], entry: int) -> bool:
    face = _face(entry)
    if face in state.wants or (RANK_OF[face] == 1 and (entry & 63) < 52):
        return True
    return any(pile and fits_work(pile, entry) for pile in work)


def _exposed_faces_of_others(state: GameState, seat: int) -> set[int]:
    faces: set[int] = set()
    for i, s in enumerate(state.seats):
        if i == seat:
            continue
        for entry in (s.nerts_top, s.waste_top, *(p[-1] for p in s.work if p)):
            if entry is not None and (entry & 63) < 52:
                faces.add(entry & 63)
    return faces


def _foundation_targets(wants: dict[int, tuple[int, ...]], entry: int) -> list[tuple[int, int]]:
    """(base, declared face) of every foundation move of `entry`, in `legal_moves` order."""
    face = _face(entry)
    if (entry & 63) < 52:
        targets = [(base, -1) for base in wants.get(face, ())]
        if RANK_OF[face] == 1:
            targets.append((NEW_FOUNDATION, -1))
        return targets
    targets = []
    wild = face >= 52

    def allowed(declared: int) -> bool:
        return wild or (RANK_OF[declared] == RANK_OF[face] and RED_OF[declared] == RED_OF[face])

    for wanted in sorted(wants):
        if allowed(wanted):
            targets.extend((base, wanted) for base in wants[wanted])
    for suit in range(4):
        ace = face_index(1, suit)
        if allowed(ace):
            targets.append((NEW_FOUNDATION, ace))
    return targets


def bot_candidates(state: GameState, seat_no: int, level: BotLevel) -> tuple[list[Candidate], bool]:
    """The card moves `level` would consider, in `legal_moves` order, and whether calling
    Nerts is among its choices (it comes last in that order).

    A level that picks the best (not `random_choice`) gets only the candidates that can
    still matter: sub-stacks are skipped once they cannot beat the best so far."""
    if state.ended_by is not None:
        return [], False
    rules = state.rules
    seat = state.seats[seat_no]
    work = seat.work
    wants = state.wants
    can_call = not seat.nerts_up and not seat.nerts_hidden and not rules.must_call
    out: list[Candidate] = []
    best = 0.0
    others: set[int] | None = None
    nerts_top = seat.nerts_up[-1] if seat.nerts_up else None
    singles: list[tuple[int, int]] = []
    if nerts_top is not None:
        singles.append((nerts_top, FROM_NERTS))
    if seat.waste:
        singles.append((seat.waste[-1], FROM_WASTE))
    singles.extend((pile[-1], k) for k, pile in enumerate(work) if pile)
    has_empty = not all(work)
    keeps_empty = level.keeps_empty_pile and seat.nerts_count > 0
    attacks = level.attacks
    for entry, source in singles:
        card = entry & CARD_MASK
        index = entry & 63
        if index < 52:
            face = entry & 63 if entry < 1 << FACE_SHIFT else (entry >> FACE_SHIFT) - 1
            to_foundation = face in wants or RANK_OF[face] == 1
        else:  # a joker goes to a foundation only from the Nerts pile: elsewhere it stays
            to_foundation = source == FROM_NERTS
        if to_foundation:
            targets = _foundation_targets(wants, entry)
            if targets:
                score = 100.0 + (30 if source == FROM_NERTS else 10 if source >= 0 else 5)
                if level.races:
                    if others is None:
                        others = _exposed_faces_of_others(state, seat_no)
                    if index in others:
                        score += 20
                for base, declared in targets:
                    out.append(Candidate(score, card, source, TO_FOUNDATION, base, declared))
                if score > best:
                    best = score
        if source < 0:
            face = entry & 63 if entry < 1 << FACE_SHIFT else (entry >> FACE_SHIFT) - 1
            for j, pile in enumerate(work):
                if pile:
                    top = pile[-1]
                    t = top & 63 if top < 1 << FACE_SHIFT else (top >> FACE_SHIFT) - 1
                    if t < 52 and face < 52:
                        if not GOES_ON[t << 6 | face]:
                            continue
                    elif not fits_work(pile, entry):
                        continue
                if source == FROM_NERTS:
                    score = 85.0 if pile else 80.0
                elif pile:
                    score = 40.0
                elif keeps_empty:
                    continue
                else:
                    score = 20.0
                out.append(Candidate(score, card, source, TO_WORK, j))
                if score > best:
                    best = score
            if attacks and has_empty and rules.slide_under:
                for j, pile in enumerate(work):
                    if pile and slides_under(pile, entry):
                        score = 75.0 if source == FROM_NERTS else 35.0
                        out.append(Candidate(score, card, source, TO_UNDER, j))
                        if score > best:
                            best = score
        if attacks and rules.nerts_builds:
            for v, other in enumerate(state.seats):
                if v != seat_no and other.nerts_up and builds_on_nerts(other.nerts_up[-1], entry):
                    score = 85.0 if source == FROM_NERTS else 45.0
                    out.append(Candidate(score, card, source, TO_NERTS, v))
                    if score > best:
                        best = score
    if level.substacks and (level.random_choice or best < SUBSTACK_MOST):
        out.extend(_substack_candidates(state, seat_no, level))
    if rules.aces_first and _has_exposed_ace(state, seat_no):
        # Only an ace to the centre is legal (and so not the Nerts call either).
        aces = [
            c
            for c in out
            if c.dest_kind == TO_FOUNDATION and (c.card & 63) < 52 and RANK_OF[c.card & 63] == 1
        ]
        return aces, False
    return out, can_call


def _substack_candidates(state: GameState, seat_no: int, level: BotLevel) -> list[Candidate]:
    """Moves of a card and everything on it between work piles that the level would make,
    in `legal_moves` order."""
    seat = state.seats[seat_no]
    work = seat.work
    found = substack_moves(work, state.rules.fill_from_work)
    if not found:
        return []
    wants = state.wants
    nerts_top = seat.nerts_up[-1] if seat.nerts_up else None
    bonus: float | None = None
    out: list[Candidate] = []
    for k, at, j in found:
        pile = work[k]
        if at == 0:
            # Emptying a pile is useful, unless it just moves the pile to a hole.
            if not work[j]:
                continue
            score = 50.0
        else:
            exposed = pile[at - 1]
            if nerts_top is not None and fits_work((exposed,), nerts_top):
                score = 60.0
            elif _face(exposed) in wants:
                score = 55.0
            else:
                continue
        if level.lookahead:
            if bonus is None:
                top_stuck = nerts_top is not None and not _fits_somewhere(state, work, nerts_top)
                bonus = 15.0 if top_stuck else 0.0
            score += bonus
        out.append(Candidate(score, pile[at] & CARD_MASK, k, TO_WORK, j))
    return out


def _has_exposed_ace(state: GameState, seat_no: int) -> bool:
    from nerts_p2p.game.engine import exposed_ace  # the engine's own definition

    return exposed_ace(state.seats[seat_no]) is not None
