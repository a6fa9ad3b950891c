"""Legal-move generation: every move `apply` would accept for a seat, without reveals.

Moves that turn a card face up are listed without the card: only the seat knows it, and
`engine.complete` adds it from the seat's own view.
"""

from __future__ import annotations

from nerts_p2p.game.cards import CARD_MASK, RANK_OF, RED_OF, face_index, face_of, is_joker
from nerts_p2p.game.engine import exposed_ace, is_ace_to_centre
from nerts_p2p.game.fit import (
    builds_on_nerts,
    fits_work,
    has_card_play,
    slides_under,
    substack_moves,
)
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
                if fits_work(pile, entry):
                    moves.append(Move(seat, PLAY, card, source, TO_WORK, j))
            if rules.slide_under and has_empty:
                for j, pile in enumerate(work):
                    if pile and slides_under(pile, entry):
                        moves.append(Move(seat, PLAY, card, source, TO_UNDER, j))
        if rules.nerts_builds:
            for v, other in enumerate(state.seats):
                if v != seat and other.nerts_up and builds_on_nerts(other.nerts_up[-1], entry):
                    moves.append(Move(seat, PLAY, card, source, TO_NERTS, v))
    # Every move so far puts a card somewhere other than the seat's own work piles: a card
    # play (what keeps a seat from being stuck, `fit.has_card_play`).
    card_play = bool(moves)
    for k, at, j in substack_moves(work, rules.fill_from_work):
        moves.append(Move(seat, PLAY, work[k][at] & CARD_MASK, k, TO_WORK, j))
    if s.stock:
        moves.append(Move(seat, TURN))
        if s.stuck and len(s.stock) >= 2:
            moves.append(Move(seat, ROTATE))
    elif s.waste:
        moves.append(Move(seat, RECYCLE))
    if not s.stuck and not card_play:
        moves.append(Move(seat, STUCK))
    if not s.nerts_up and not s.nerts_hidden and not rules.must_call:
        moves.append(Move(seat, NERTS))
    if rules.aces_first:
        ace = exposed_ace(s)
        if ace is not None:
            moves = [m for m in moves if is_ace_to_centre(m)]
    return moves


def first_card_play(state: GameState, seat: int) -> Move | None:
    """The first card move `legal_moves` lists that is not between the seat's own work piles:
    what keeps a seat from being stuck (`fit.has_card_play`)."""
    if not has_card_play(state, seat):
        return None
    return next(
        m
        for m in legal_moves(state, seat)
        if m.action == PLAY and not (m.source >= 0 and m.dest_kind == TO_WORK)
    )
