"""Hypothesis strategies for cards, moves and rules, shared by the engine tests."""

from __future__ import annotations

from hypothesis import strategies as st

from nerts_p2p.game.cards import JOKER_INDEXES, is_joker, make_card, with_face
from nerts_p2p.game.moves import (
    FROM_NERTS,
    FROM_WASTE,
    NEW_FOUNDATION,
    PLAY,
    SIMPLE_ACTIONS,
    TO_FOUNDATION,
    TO_NERTS,
    TO_UNDER,
    TO_WORK,
    TURN,
    Move,
)
from nerts_p2p.game.rules import Rules

owners = st.integers(min_value=0, max_value=7)
faces = st.integers(min_value=0, max_value=51)
cards: st.SearchStrategy[int] = st.builds(make_card, owners, st.integers(0, 53))
#: A pile entry: a card, or a joker carrying the identity it was given.
entries: st.SearchStrategy[int] = st.one_of(
    cards,
    st.builds(
        lambda owner, joker, face: with_face(make_card(owner, joker), face),
        owners,
        st.sampled_from(JOKER_INDEXES),
        faces,
    ),
)
sources = st.sampled_from([FROM_NERTS, FROM_WASTE, 0, 1, 2, 3, 4, 5])


@st.composite
def moves(draw: st.DrawFn) -> Move:
    """Any move the notation can write, legal or not."""
    seat = draw(owners)
    action = draw(st.sampled_from([PLAY, PLAY, *SIMPLE_ACTIONS]))
    if action == TURN:
        return Move(seat, TURN, reveals=tuple(draw(st.lists(cards, max_size=3))))
    if action != PLAY:
        return Move(seat, action)
    card = draw(cards)
    kind = draw(st.sampled_from([TO_WORK, TO_FOUNDATION, TO_UNDER, TO_NERTS]))
    if kind == TO_FOUNDATION:
        dest = draw(st.one_of(st.just(NEW_FOUNDATION), cards))
    else:
        dest = draw(st.integers(0, 7 if kind == TO_NERTS else 5))
    declare = draw(st.one_of(st.just(-1), faces)) if is_joker(card) else -1
    reveals = tuple(draw(st.lists(cards, max_size=1)))
    return Move(seat, PLAY, card, draw(sources), kind, dest, declare, reveals)


@st.composite
def rules(draw: st.DrawFn, *, max_seats: int = 4) -> Rules:
    """A table with hypothesis-chosen variants (small enough for quick folds)."""
    return Rules(
        seats=draw(st.integers(2, max_seats)),
        nerts_size=draw(st.sampled_from([13, 13, 5, 1])),
        work_piles=draw(st.integers(1, 6)),
        draw=draw(st.sampled_from([3, 1])),
        recycle_rotates=draw(st.booleans()),
        must_call=draw(st.booleans()),
        jokers=draw(st.integers(0, 2)),
        nerts_builds=draw(st.booleans()),
        aces_first=draw(st.booleans()),
        slide_under=draw(st.booleans()),
        stuck_ends_round=draw(st.booleans()),
        fill_from_work=draw(st.booleans()),
    )
