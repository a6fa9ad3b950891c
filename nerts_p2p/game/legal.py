"""Legal-move generation: every move `apply` would accept for a seat, without reveals.

Moves that turn a card face up are listed without the card: only the seat knows it, and
`engine.complete` adds it from the seat's own view.
"""

from __future__ import annotations

from nerts_p2p.game.cards import CARD_MASK, RANK_OF, RED_OF, SUIT_OF, face_index, face_of, is_joker
from nerts_p2p.game.engine import build_on_work, exposed_ace, is_ace_to_centre, slide_under_pile
from nerts_p2p.game.moves import (
    FROM_NERTS,
    FROM_WASTE,
    NERTS,
    NEW_FOUNDATION,
    PLAY,
    RECYCLE,
    ROTATE,
    STUCK,
    TO_FOUNDATION,
    TO_NERTS,
    TO_UNDER,
    TO_WORK,
    TURN,
    Move,
)
from nerts_p2p.game.state import GameState


def foundation_moves(state: GameState, seat: int, entry: int, source: int) -> list[Move]:
    """Every way `entry` can go to a foundation (a joker: every declaration that fits)."""
    card = entry & CARD_MASK
    face = face_of(entry)
    if not is_joker(entry):
        moves = [
            Move(seat, PLAY, card, source, TO_FOUNDATION, base)
            for base in state.wants.get(face, ())
        ]
        if RANK_OF[face] == 1:
            moves.append(Move(seat, PLAY, card, source, TO_FOUNDATION, NEW_FOUNDATION))
        return moves
    moves = []

    def allowed(declared: int) -> bool:
        # A joker fixed on a work pile keeps its rank and colour; only the suit is free.
        return face >= 52 or (
            RANK_OF[declared] == RANK_OF[face] and RED_OF[declared] == RED_OF[face]
        )

    for wanted in sorted(state.wants):
        if allowed(wanted):
            moves.extend(
                Move(seat, PLAY, card, source, TO_FOUNDATION, base, wanted)
                for base in state.wants[wanted]
            )
    for suit in range(4):
        ace = face_index(1, suit)
        if allowed(ace):
            moves.append(Move(seat, PLAY, card, source, TO_FOUNDATION, NEW_FOUNDATION, ace))
    return moves


def legal_moves(state: GameState, seat: int) -> list[Move]:
    if state.ended_by is not None or not 0 <= seat < len(state.seats):
        return []
    rules = state.rules
    s = state.seats[seat]
    work = s.work
    moves: list[Move] = []
    singles: list[tuple[int, int]] = []
    if s.nerts_up:
        singles.append((s.nerts_up[-1], FROM_NERTS))
    if s.waste:
        singles.append((s.waste[-1], FROM_WASTE))
    singles.extend((pile[-1], k) for k, pile in enumerate(work) if pile)
    has_empty = not all(work)
    for entry, source in singles:
        card = entry & CARD_MASK
        moves.extend(foundation_moves(state, seat, entry, source))
        if source < 0:
            for j, pile in enumerate(work):
                if not isinstance(build_on_work(pile, (entry,)), str):
                    moves.append(Move(seat, PLAY, card, source, TO_WORK, j))
            if rules.slide_under and has_empty:
                for j, pile in enumerate(work):
                    if pile and not isinstance(slide_under_pile(pile, entry), str):
                        moves.append(Move(seat, PLAY, card, source, TO_UNDER, j))
        if rules.nerts_builds and not is_joker(entry):
            face = face_of(entry)
            for v, other in enumerate(state.seats):
                top = other.nerts_top
                if v == seat or top is None or is_joker(top):
                    continue
                tf = top & 63
                if SUIT_OF[tf] == SUIT_OF[face] and abs(RANK_OF[tf] - RANK_OF[face]) == 1:
                    moves.append(Move(seat, PLAY, card, source, TO_NERTS, v))
    for k, pile in enumerate(work):
        for at in range(len(pile) - 1, -1, -1):
            stack = pile[at:]
            for j, target in enumerate(work):
                if j != k and not isinstance(build_on_work(target, stack), str):
                    moves.append(Move(seat, PLAY, pile[at] & CARD_MASK, k, TO_WORK, j))
    if s.stock:
        moves.append(Move(seat, TURN))
        if len(s.stock) >= 2:
            moves.append(Move(seat, ROTATE))
    elif s.waste:
        moves.append(Move(seat, RECYCLE))
    if not s.stuck:
        moves.append(Move(seat, STUCK))
    if not s.nerts_up and not s.nerts_hidden and not rules.must_call:
        moves.append(Move(seat, NERTS))
    if rules.aces_first:
        ace = exposed_ace(s)
        if ace is not None:
            moves = [m for m in moves if is_ace_to_centre(m)]
    return moves
