"""Where a card fits: the worded checks `apply` uses, and cheap yes/no twins for hot paths.

`build_on_work` and `slide_under_pile` return the new pile or, when the card does not fit,
the reason in a player's words. Building that sentence costs more than the check itself,
so the legal-move search, the bots and the stuck check ask `fits_work` / `slides_under`
instead: a table lookup for ordinary cards, and the worded check itself whenever a joker
takes part (rare), so that the two can never disagree (a test compares them on every pair).
"""

from __future__ import annotations

import functools

from nerts_p2p.game.cards import (
    FACE_SHIFT,
    RANK_OF,
    RED_OF,
    SUIT_OF,
    colour_suit,
    face_name,
    face_of,
    with_face,
)
from nerts_p2p.game.state import GameState, SeatState


def build_on_work(pile: tuple[int, ...], stack: tuple[int, ...]) -> tuple[int, ...] | str:
    """`pile` with `stack` built on it, or why it does not fit. Piles build down in
    alternating colours; a joker is wild until a card is played on it, then it is fixed."""
    if not pile:
        return pile + stack
    bottom, top = face_of(stack[0]), face_of(pile[-1])
    if top < 52 and bottom < 52:
        if RANK_OF[bottom] == RANK_OF[top] - 1 and RED_OF[bottom] != RED_OF[top]:
            return pile + stack
        if RED_OF[bottom] == RED_OF[top]:
            return (
                f"{face_name(bottom)} cannot go on {face_name(top)}: "
                "work piles alternate red and black"
            )
        return f"{face_name(bottom)} cannot go on {face_name(top)}: work piles build down by one"
    if top < 52:  # an unfixed joker goes on a card: it stays wild until covered
        if RANK_OF[top] == 1:
            return "a joker cannot go on an ace: it would have to be lower than an ace"
        return pile + stack
    if bottom >= 52:
        return "a joker cannot go on a joker that does not stand for a card yet"
    rank, red = RANK_OF[bottom] + 1, not RED_OF[bottom]
    if rank > 13:
        return "a king cannot go on a joker: the joker would have to be higher than a king"
    if len(pile) >= 2:
        below = face_of(pile[-2])
        if RANK_OF[below] - 1 != rank or RED_OF[below] == red:
            colour = "red" if not RED_OF[below] else "black"
            return (
                f"the joker on {face_name(below)} stands for a {colour} "
                f"{RANK_OF[below] - 1}, so {face_name(bottom)} cannot go on it"
            )
    fixed = with_face(pile[-1], colour_suit(red) * 13 + rank - 1)
    return pile[:-1] + (fixed,) + stack


def slide_under_pile(pile: tuple[int, ...], card: int) -> tuple[int, ...] | str:
    bottom, face = face_of(pile[0]), face_of(card)
    if face >= 52 or bottom >= 52:
        return "a joker without a fixed identity cannot take part in sliding under"
    if RANK_OF[face] == RANK_OF[bottom] + 1 and RED_OF[face] != RED_OF[bottom]:
        return (card,) + pile
    return (
        f"{face_name(face)} cannot slide under {face_name(bottom)}: it must be one rank "
        "higher and of the other colour"
    )


def _table(fits: bool) -> bytes:
    """[pile card face * 64 + card face] -> 1 where the card goes on (`fits`) or slides
    under (not `fits`) that pile card; ordinary faces only."""
    table = bytearray(64 * 64)
    for pile_face in range(52):
        for face in range(52):
            step = (
                RANK_OF[pile_face] - RANK_OF[face] if fits else RANK_OF[face] - RANK_OF[pile_face]
            )
            if step == 1 and RED_OF[face] != RED_OF[pile_face]:
                table[pile_face << 6 | face] = 1
    return bytes(table)


GOES_ON = _table(True)
_GOES_UNDER = _table(False)


def fits_work(pile: tuple[int, ...], bottom: int) -> bool:
    """Whether a card (or a sub-stack whose bottom card is `bottom`) may go on `pile`."""
    if not pile:
        return True
    top = pile[-1]
    t = top & 63 if top < 1 << FACE_SHIFT else (top >> FACE_SHIFT) - 1
    b = bottom & 63 if bottom < 1 << FACE_SHIFT else (bottom >> FACE_SHIFT) - 1
    if t < 52 and b < 52:
        return GOES_ON[t << 6 | b] == 1
    return not isinstance(build_on_work(pile, (bottom,)), str)


def slides_under(pile: tuple[int, ...], entry: int) -> bool:
    """Whether `entry` may slide under the (non-empty) `pile`."""
    first = pile[0]
    p = first & 63 if first < 1 << FACE_SHIFT else (first >> FACE_SHIFT) - 1
    f = entry & 63 if entry < 1 << FACE_SHIFT else (entry >> FACE_SHIFT) - 1
    return p < 52 and f < 52 and _GOES_UNDER[p << 6 | f] == 1


def goes_to_foundation(wants: dict[int, tuple[int, ...]], entry: int) -> bool:
    """Whether `entry` has a foundation to go to: a pile that wants its face, or a new one
    for an ace. A wild joker may always start one (declared as an ace); a joker fixed on a
    work pile keeps its rank and colour, only the suit is free."""
    face = entry & 63 if entry < 1 << FACE_SHIFT else (entry >> FACE_SHIFT) - 1
    if (entry & 63) < 52:
        return face in wants or RANK_OF[face] == 1
    if face >= 52 or RANK_OF[face] == 1:
        return True
    rank, red = RANK_OF[face], RED_OF[face]
    return any(RANK_OF[w] == rank and RED_OF[w] == red for w in wants)


def builds_on_nerts(top: int | None, entry: int) -> bool:
    """Whether `entry` may go on another seat's Nerts top `top` (`nerts_builds`): same
    suit, one rank up or down, no jokers."""
    if top is None or (top & 63) >= 52 or (entry & 63) >= 52:
        return False
    t, f = top & 63, face_of(entry)
    return SUIT_OF[t] == SUIT_OF[f] and abs(RANK_OF[t] - RANK_OF[f]) == 1


def has_card_play(state: GameState, seat_no: int) -> bool:
    """Whether the seat has a card to play: a legal card move other than moving cards
    between its own work piles. Those moves alone never mean a seat can go on (a pile can
    be moved back and forth for ever), so a seat without any other card move is stuck.
    Only face-up cards count: what lies in a stock is the owner's to find by turning it."""
    rules = state.rules
    seat: SeatState = state.seats[seat_no]
    work = seat.work
    wants = state.wants
    for pile in work:
        if pile and goes_to_foundation(wants, pile[-1]):
            return True
    has_empty = not all(work)
    for entry in (seat.nerts_top, seat.waste_top):
        if entry is None:
            continue
        if goes_to_foundation(wants, entry):
            return True
        if has_empty or any(fits_work(pile, entry) for pile in work):
            return True
    if rules.nerts_builds:
        singles = [seat.nerts_top, seat.waste_top, *(p[-1] for p in work if p)]
        for v, other in enumerate(state.seats):
            if v != seat_no and other.nerts_up:
                top = other.nerts_up[-1]
                if any(e is not None and builds_on_nerts(top, e) for e in singles):
                    return True
    return False


#: The faces that go on an ordinary face on a work pile: one rank lower, other colour.
FITS_ON: tuple[tuple[int, ...], ...] = tuple(
    tuple(f for f in range(52) if RANK_OF[f] == RANK_OF[t] - 1 and RED_OF[f] != RED_OF[t])
    for t in range(52)
)


@functools.lru_cache(maxsize=256)
def substack_moves(
    work: tuple[tuple[int, ...], ...], from_work: bool
) -> tuple[tuple[int, int, int], ...]:
    """Every legal move between these work piles as (source pile, position, target pile),
    in `legal_moves` order (source pile, then the card from the top down, then target).

    It depends on the piles alone, which change far less often than a bot decides, so it
    is remembered (`substack_moves_uncached` for a caller that keeps its own)."""
    return substack_moves_uncached(work, from_work)


def substack_moves_uncached(
    work: tuple[tuple[int, ...], ...], from_work: bool
) -> tuple[tuple[int, int, int], ...]:
    """`substack_moves`, worked out. Most cards fit nowhere: a card is tried on the targets
    only when its face is one that goes on some pile's top, or an empty pile or a joker
    could take it."""
    tops = [
        (p[-1] & 63 if p[-1] < 1 << FACE_SHIFT else (p[-1] >> FACE_SHIFT) - 1) if p else -1
        for p in work
    ]
    found: list[tuple[int, int, int]] = []
    if not ((from_work and -1 in tops) or max(tops) >= 52):
        # The common layout (no empty pile that a work card may fill, no joker on top): a
        # card goes only onto the tops it builds down from, two faces per top.
        onto: dict[int, list[int]] = {}
        for j, t in enumerate(tops):
            if t >= 0:
                for face in FITS_ON[t]:
                    onto.setdefault(face, []).append(j)
        for k, pile in enumerate(work):
            for at in range(len(pile) - 1, -1, -1):
                entry = pile[at]
                face = entry & 63 if entry < 1 << FACE_SHIFT else (entry >> FACE_SHIFT) - 1
                targets: list[int] | None
                if face >= 52:  # a joker that stands for no card yet
                    targets = [
                        j for j, t in enumerate(tops) if t >= 0 and fits_work(work[j], entry)
                    ]
                else:
                    targets = onto.get(face)
                    if targets is None:
                        continue
                for j in targets:
                    if j != k:
                        found.append((k, at, j))
        return tuple(found)
    # An empty pile or a joker on top: any card may have somewhere to go.
    for k, pile in enumerate(work):
        for at in range(len(pile) - 1, -1, -1):
            entry = pile[at]
            face = entry & 63 if entry < 1 << FACE_SHIFT else (entry >> FACE_SHIFT) - 1
            for j, t in enumerate(tops):
                if j == k:
                    continue
                if t < 0:
                    fits = from_work
                elif t < 52 and face < 52:
                    fits = GOES_ON[t << 6 | face] == 1
                else:
                    fits = fits_work(work[j], entry)
                if fits:
                    found.append((k, at, j))
    return tuple(found)
