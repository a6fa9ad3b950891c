"""How a bot finds its card move without listing every legal move: the candidate list of a
novice (one random draw over every move it would make) and of any level at an `aces_first`
table. A level that plays its best move elsewhere stops earlier still (`bot_best`).

A bot wants one move: the best by its level's priorities, or (a novice) any it notices.
Listing every legal `Move` of a seat, with a worded reason built for each failed fit, only
to pick one cost most of a simulated round. `bot_candidates` walks the same moves in the
same order as `legal.legal_moves`, scores them as the level does, and keeps plain tuples:
a `Move` is built only for the one chosen. It skips whole groups of moves that the level
never plays (sub-stacks for a novice, attacks below casual) or that cannot beat the best
found so far (a tie goes to the earlier move, as before), so the choice, and every random
number drawn for it, are those of scoring the full legal list (a test replays rounds both
ways and compares).

What a layout of work piles offers (where a card of a given face lands, what it slides
under, the sub-stack moves) is worked out once per layout and kept while the layout lasts
(`_Piles`); a bot whose last search found nothing looks only at its new waste card until
its piles change or a card it waits for is wanted (`waste_candidates`, `watched_faces`,
used by `BotPlayer.act`).

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

from typing import TYPE_CHECKING

from nerts_p2p.game.cards import CARD_MASK, FACE_SHIFT, RANK_OF, RED_OF, face_index
from nerts_p2p.game.fit import (
    FITS_ON,
    GOES_ON,
    builds_on_nerts,
    fits_work,
    slides_under,
    substack_moves_uncached,
)
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

#: The most a sub-stack move can score (60, plus an expert's 15 of look-ahead).
SUBSTACK_MOST = 75.0


#: A card move a bot considers: (score, card, source, destination kind, destination,
#: declared face or -1), the fields of a `Move` after its worth. A plain tuple: thousands
#: are made per round.
Candidate = tuple[float, int, int, str, int, int]


def _face(entry: int) -> int:
    return entry & 63 if entry < 1 << FACE_SHIFT else (entry >> FACE_SHIFT) - 1


def _fits_somewhere(state: GameState, work: tuple[tuple[int, ...], ...], entry: int) -> bool:
    face = _face(entry)
    if face in state.wants or (RANK_OF[face] == 1 and (entry & 63) < 52):
        return True
    return any(pile and fits_work(pile, entry) for pile in work)


def _shown_by_another(state: GameState, seat_no: int, index: int) -> bool:
    """Whether another seat shows a card of this face index on top of a pile (a race for
    the foundation slot). Jokers never race."""
    if index >= 52:
        return False
    for i, s in enumerate(state.seats):
        if i == seat_no:
            continue
        if s.nerts_up and s.nerts_up[-1] & 63 == index:
            return True
        if s.waste and s.waste[-1] & 63 == index:
            return True
        for pile in s.work:
            if pile and pile[-1] & 63 == index:
                return True
    return False


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


class _Piles:
    """What one layout of work piles offers, worked out once for that layout (and only as
    far as a bot asks) and kept while it lasts: a bot decides far more often than its work
    piles change (turning the stock leaves them as they are, the very same tuple)."""

    __slots__ = (
        "_landing",
        "_ordinary",
        "_stacks",
        "_tops",
        "_under",
        "_watched",
        "from_work",
        "has_empty",
        "work",
    )

    def __init__(self, work: tuple[tuple[int, ...], ...], from_work: bool) -> None:
        self.work = work
        self.from_work = from_work
        self.has_empty = not all(work)
        self._tops: tuple[tuple[int, int, int], ...] | None = None
        self._landing: dict[int, tuple[int, ...]] | None = None
        self._ordinary = False
        self._under: dict[int, tuple[int, ...]] = {}
        self._stacks: tuple[tuple[int, int, int], ...] | None = None
        self._watched: frozenset[int] | None = None

    @property
    def tops(self) -> tuple[tuple[int, int, int], ...]:
        """(pile, exposed card, its face) of every pile that is not empty."""
        if self._tops is None:
            self._tops = tuple(
                [
                    (k, p[-1], p[-1] & 63 if p[-1] < 1 << FACE_SHIFT else (p[-1] >> FACE_SHIFT) - 1)
                    for k, p in enumerate(self.work)
                    if p
                ]
            )
        return self._tops

    def landing(self, face: int) -> tuple[int, ...]:
        """The piles a card showing `face` may go on (whether a card fits depends on the
        face it shows alone), in pile order."""
        landing = self._landing
        if landing is None:
            landing = self._landing = {}
            tops = self.tops
            if not self.has_empty and all(t < 52 for _, _, t in tops):
                # No empty pile and no joker on top (the common layout): an ordinary card
                # lands only on the tops it builds down from, two faces per top.
                for k, _, t in tops:
                    for f in FITS_ON[t]:
                        landing[f] = landing.get(f, ()) + (k,)
                self._ordinary = True
        found = landing.get(face)
        if found is None:
            if self._ordinary and face < 52:
                return ()
            fits = []
            for j, pile in enumerate(self.work):
                if pile:
                    top = pile[-1]
                    t = top & 63 if top < 1 << FACE_SHIFT else (top >> FACE_SHIFT) - 1
                    if not (
                        GOES_ON[t << 6 | face] if t < 52 and face < 52 else fits_work(pile, face)
                    ):
                        continue
                fits.append(j)
            found = landing[face] = tuple(fits)
        return found

    def under(self, face: int) -> tuple[int, ...]:
        """The piles a card showing `face` may slide under (given an empty pile)."""
        found = self._under.get(face)
        if found is None:
            found = tuple(j for j, p in enumerate(self.work) if p and slides_under(p, face))
            self._under[face] = found
        return found

    def stacks(self) -> tuple[tuple[int, int, int], ...]:
        if self._stacks is None:
            self._stacks = substack_moves_uncached(self.work, self.from_work)
        return self._stacks

    def watched(self) -> frozenset[int]:
        """The ordinary faces of the exposed cards and of every card a sub-stack move would
        uncover (see `watched_faces`)."""
        if self._watched is None:
            work = self.work
            faces = set()
            for pile in work:
                if pile:
                    entry = pile[-1]
                    faces.add(entry & 63 if entry < 1 << FACE_SHIFT else (entry >> FACE_SHIFT) - 1)
            for k, at, _ in self.stacks():
                if at:
                    entry = work[k][at - 1]
                    faces.add(entry & 63 if entry < 1 << FACE_SHIFT else (entry >> FACE_SHIFT) - 1)
            faces.discard(52)  # a joker that stands for no card is never wanted
            faces.discard(53)
            self._watched = frozenset(faces)
        return self._watched


_PILES: dict[int, _Piles] = {}


def _piles(work: tuple[tuple[int, ...], ...], from_work: bool) -> _Piles:
    # Keyed by identity: the entry holds the tuple itself, so its id stays its own.
    piles = _PILES.get(id(work))
    if piles is None or piles.work is not work or piles.from_work != from_work:
        if len(_PILES) > 256:
            _PILES.clear()
        piles = _PILES[id(work)] = _Piles(work, from_work)
    return piles


def bot_candidates(state: GameState, seat_no: int, level: BotLevel) -> tuple[list[Candidate], bool]:
    """The card moves `level` would consider, in `legal_moves` order, and whether calling
    Nerts is among its choices (it comes last in that order).

    A level that picks the best (not `random_choice`) gets only the candidates that can
    still matter: sub-stacks are skipped once they cannot beat the best so far."""
    if state.ended_by is not None:
        return [], False
    rules = state.rules
    seat = state.seats[seat_no]
    nerts_up, work, waste = seat[1], seat[2], seat[4]  # SeatState fields, read once
    piles = _piles(work, rules.fill_from_work)
    wants = state.wants
    can_call = not nerts_up and not seat[0] and not rules.must_call
    out: list[Candidate] = []
    best = 0.0
    attacks = level.attacks
    builds = attacks and rules.nerts_builds
    # The Nerts top and the waste top: to a foundation, a work pile, under a pile, onto
    # another seat's Nerts pile.
    if nerts_up:
        best = _add_single(state, seat_no, level, piles, FROM_NERTS, nerts_up[-1], out, best)
    if waste:
        best = _add_single(state, seat_no, level, piles, FROM_WASTE, waste[-1], out, best)
    # The exposed card of each work pile: to a foundation, onto another seat's Nerts pile.
    for k, entry, face in piles.tops:
        if (entry & 63) < 52 and (face in wants or RANK_OF[face] == 1):
            best = _add_foundation(state, seat_no, level, entry, k, out, best)
        if builds:
            best = _add_builds(state, seat_no, entry, k, out, best)
    if level.substacks and (level.random_choice or best < SUBSTACK_MOST):
        _add_substacks(state, seat_no, level, piles.stacks(), out)
    if rules.aces_first and _has_exposed_ace(state, seat_no):
        # Only an ace to the centre is legal (and so not the Nerts call either).
        aces = [
            c for c in out if c[3] == TO_FOUNDATION and (c[1] & 63) < 52 and RANK_OF[c[1] & 63] == 1
        ]
        return aces, False
    return out, can_call


def waste_candidates(state: GameState, seat_no: int, level: BotLevel) -> list[Candidate]:
    """Only the waste top's moves: all there is when nothing but the waste changed since a
    search that found no move at all (see `BotPlayer.act`)."""
    rules = state.rules
    seat = state.seats[seat_no]
    out: list[Candidate] = []
    if seat.waste and state.ended_by is None:
        piles = _piles(seat.work, rules.fill_from_work)
        _add_single(state, seat_no, level, piles, FROM_WASTE, seat.waste[-1], out, 0.0)
    return out


def watched_faces(state: GameState, seat_no: int) -> frozenset[int]:
    """The faces whose turn on a foundation could give this seat a move that a search just
    found it does not have, while its work piles and Nerts pile stay as they are: its Nerts
    top, its exposed work cards, and every card a sub-stack move would uncover."""
    seat = state.seats[seat_no]
    watched = _piles(seat.work, state.rules.fill_from_work).watched()
    if seat.nerts_up:
        face = _face(seat.nerts_up[-1])
        if face < 52 and face not in watched:
            return watched | {face}
    return watched


def _add_single(
    state: GameState,
    seat_no: int,
    level: BotLevel,
    piles: _Piles,
    source: int,
    entry: int,
    out: list[Candidate],
    best: float,
) -> float:
    """The moves of the Nerts top or the waste top, added to `out`; the best score so far."""
    rules = state.rules
    work = piles.work
    card = entry & CARD_MASK
    index = entry & 63
    face = index if entry < 1 << FACE_SHIFT else (entry >> FACE_SHIFT) - 1
    if (face in state.wants or RANK_OF[face] == 1) if index < 52 else source == FROM_NERTS:
        best = _add_foundation(state, seat_no, level, entry, source, out, best)
    for j in piles.landing(face):
        if work[j]:
            score = 85.0 if source == FROM_NERTS else 40.0
        elif source == FROM_NERTS:
            score = 80.0
        elif level.keeps_empty_pile and state.seats[seat_no].nerts_count > 0:
            continue
        else:
            score = 20.0
        out.append((score, card, source, TO_WORK, j, -1))
        if score > best:
            best = score
    if level.attacks and piles.has_empty and rules.slide_under:
        for j in piles.under(face):
            score = 75.0 if source == FROM_NERTS else 35.0
            out.append((score, card, source, TO_UNDER, j, -1))
            if score > best:
                best = score
    if level.attacks and rules.nerts_builds:
        best = _add_builds(state, seat_no, entry, source, out, best)
    return best


def _add_foundation(
    state: GameState,
    seat_no: int,
    level: BotLevel,
    entry: int,
    source: int,
    out: list[Candidate],
    best: float,
) -> float:
    targets = _foundation_targets(state.wants, entry)
    if not targets:
        return best
    score = 100.0 + (30 if source == FROM_NERTS else 10 if source >= 0 else 5)
    if level.races and _shown_by_another(state, seat_no, entry & 63):
        score += 20  # someone else could take this foundation slot: go first
    card = entry & CARD_MASK
    for base, declared in targets:
        out.append((score, card, source, TO_FOUNDATION, base, declared))
    return max(best, score)


def _add_builds(
    state: GameState, seat_no: int, entry: int, source: int, out: list[Candidate], best: float
) -> float:
    for v, other in enumerate(state.seats):
        if v != seat_no and other.nerts_up and builds_on_nerts(other.nerts_up[-1], entry):
            score = 85.0 if source == FROM_NERTS else 45.0
            out.append((score, entry & CARD_MASK, source, TO_NERTS, v, -1))
            best = max(best, score)
    return best


def _add_substacks(
    state: GameState,
    seat_no: int,
    level: BotLevel,
    found: tuple[tuple[int, int, int], ...],
    out: list[Candidate],
) -> None:
    """Moves of a card and everything on it between work piles that the level would make,
    in `legal_moves` order."""
    seat = state.seats[seat_no]
    work = seat.work
    if not found:
        return
    wants = state.wants
    nerts_top = seat.nerts_up[-1] if seat.nerts_up else None
    bonus: float | None = None
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
        out.append((score, pile[at] & CARD_MASK, k, TO_WORK, j, -1))


def _has_exposed_ace(state: GameState, seat_no: int) -> bool:
    from nerts_p2p.game.engine import exposed_ace  # the engine's own definition

    return exposed_ace(state.seats[seat_no]) is not None
