"""Card, move and position text: round-trips, and readable errors for anything else."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nerts_p2p.game.bots import CASUAL, EXPERT
from nerts_p2p.game.cards import (
    card_name,
    card_text,
    face_text,
    make_card,
    parse_card,
    parse_face,
    with_face,
)
from nerts_p2p.game.errors import NotationError
from nerts_p2p.game.moves import FROM_NERTS, PLAY, TO_WORK, Move, move_text, parse_move
from nerts_p2p.game.position import parse_position, position_text, state_hash
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.state import public_projection

from .helpers import position, round_states, seat
from .strategies import entries, moves, owners

# --- cards --------------------------------------------------------------------------------


@given(st.integers(0, 53))
def test_face_text_round_trips(face: int) -> None:
    assert parse_face(face_text(face)) == face


@given(entries, st.one_of(st.none(), owners))
def test_card_text_round_trips_with_or_without_an_implied_owner(
    entry: int, default_owner: int | None
) -> None:
    text = card_text(entry, default_owner=default_owner)
    assert parse_card(text, default_owner=default_owner) == entry
    assert ("@" in text) is (default_owner is None or default_owner != entry >> 6 & 7)


def test_cards_read_loosely_and_are_named_in_words() -> None:
    assert parse_face("10h") == parse_face("TH") == parse_face(" th ")
    assert card_text(make_card(2, parse_face("5H"))) == "5H@2"
    assert card_text(make_card(2, parse_face("5H")), default_owner=2) == "5H"
    assert card_name(make_card(0, parse_face("7C"))) == "7 of clubs"
    assert card_name(make_card(0, parse_face("AS"))) == "ace of spades"
    assert card_name(make_card(0, parse_face("QD"))) == "queen of diamonds"
    assert card_name(make_card(0, parse_face("X1"))) == "joker"
    assert card_name(with_face(make_card(0, 52), parse_face("9H"))) == "joker (as 9 of hearts)"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("ZZ@0", "'ZZ' is not a card"),
        ("1H@0", "'1H' is not a card"),
        ("5H@8", "seat number 0..7"),
        ("5H", "say whose card it is"),
        ("5H=6H@0", "only a joker"),
        ("X1=X2@0", "ordinary card"),
    ],
)
def test_card_parse_errors_say_what_is_wrong(text: str, words: str) -> None:
    with pytest.raises(NotationError) as info:
        parse_card(text)
    assert words in str(info.value)


# --- moves --------------------------------------------------------------------------------

DOCSTRING_MOVES = [
    "0 5H n-w2 +7C",
    "1 9S w0-w3",
    "2 AH d-f",
    "2 2H w1-fAH",
    "3 3H@2 n-fAH@2",
    "0 X1=5H w0-fAH@1",
    "0 8D n-u2",
    "0 6H w1-n2",
    "0 turn +5H+7C+9D",
    "0 recycle",
    "0 rotate",
    "0 stuck",
    "0 nerts",
]


@pytest.mark.parametrize("text", DOCSTRING_MOVES)
def test_the_moves_in_the_notation_docstring_round_trip(text: str) -> None:
    move = parse_move(text)
    assert move_text(move) == text
    assert str(move) == text


def test_a_move_names_its_card_source_destination_and_revealed_card() -> None:
    move = parse_move("0 5H n-w2 +7C")
    five, seven = make_card(0, parse_face("5H")), make_card(0, parse_face("7C"))
    assert move == Move(0, PLAY, five, FROM_NERTS, TO_WORK, 2, reveals=(seven,))
    assert move.without_reveals() == Move(0, PLAY, five, FROM_NERTS, TO_WORK, 2)
    joker = parse_move("0 X1=5H w0-fAH@1")
    assert (joker.card, joker.declare, joker.dest) == (
        make_card(0, 52),
        parse_face("5H"),
        make_card(1, parse_face("AH")),
    )
    assert parse_move("0 turn +5H +7C +9D") == parse_move("0 turn +5H+7C+9D")
    assert parse_move("0 10H n-w1") == parse_move("0 TH n-w1")


@given(moves())
def test_any_move_round_trips_through_its_text(move: Move) -> None:
    assert parse_move(move_text(move)) == move


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("ZZ", "is not a move"),
        ("", "is not a move"),
        ("5H n-q3", "the seat must be a number"),
        ("0 5H n-q3", "the destination must be"),
        ("9 turn", "seats are numbered 0..7"),
        ("0 turn 5H", "'turn' takes no card or pile"),
        ("0 nerts +5H", "only 'turn' names revealed cards"),
        ("0 5H n-w2 +7C+8D", "turns up at most one card"),
        ("0 5H x-w1", "the source must be n (Nerts), d (waste) or wK"),
        ("0 ZZ n-w1", "'ZZ' is not a card"),
        ("0 5H=6H n-f", "only a joker can be declared"),
        ("0 5H nw2", "source-destination"),
        ("0 5H n-w", "the destination must be a number"),
        ("0 5H n-w²", "the destination must be a number"),
        ("² turn", "the seat must be a number"),
    ],
)
def test_move_parse_errors_are_notation_errors_in_words(text: str, words: str) -> None:
    with pytest.raises(NotationError) as info:
        parse_move(text)
    assert words in str(info.value)


NOTATION_CHARS = "0123456789 AKQJTXSHDCnwdfu=@+-?.:,/²t"


@given(st.one_of(st.text(max_size=30), st.text(alphabet=NOTATION_CHARS, max_size=30)))
def test_parse_move_returns_a_move_or_raises_notation_error(text: str) -> None:
    try:
        move = parse_move(text)
    except NotationError as exc:
        error = exc
    else:
        assert parse_move(move_text(move)) == move
        return
    assert str(error)


# --- positions ----------------------------------------------------------------------------

PLAYED_TABLES = [
    pytest.param(Rules(seats=2), id="default-2"),
    pytest.param(Rules(seats=3, jokers=2, draw=1), id="jokers-draw1-3"),
    pytest.param(Rules.german(seats=4), id="german-4"),
    pytest.param(Rules(seats=2, jokers=1, work_piles=6, recycle_rotates=False), id="6-piles"),
]


@pytest.mark.parametrize("rules", PLAYED_TABLES)
def test_positions_reached_by_play_round_trip(rules: Rules) -> None:
    seeds = [f"notation {i}".encode() for i in range(rules.seats)]
    states = round_states(rules, seeds, ([EXPERT, CASUAL] * rules.seats)[: rules.seats])
    for state in states:
        text = position_text(state)
        parsed = parse_position(text)
        assert position_text(parsed) == text
        assert state_hash(parsed) == state_hash(state) == state_hash(public_projection(state))
        # A peer that starts from the text judges reveals as one that folded every move.
        assert [s.seen for s in parsed.seats] == [s.seen for s in state.seats]


def test_position_texts_of_a_round_do_not_depend_on_what_was_written_before() -> None:
    # Parts of states are remembered by identity (a move changes one seat): a text written
    # after many others must be the text written from nothing.
    import nerts_p2p.game.position as position_module

    rules = Rules(seats=3, jokers=2, draw=1)
    states = round_states(rules, [b"a", b"b", b"c"], [EXPERT, CASUAL, EXPERT])
    warm = [position_text(state) for state in states]
    cold = []
    for state in reversed(states):
        position_module._written.clear()
        cold.append(position_text(state))
    assert warm == cold[::-1]
    assert len(set(warm)) > len(states) // 2  # the round moved: the texts are not all one


def test_a_position_can_be_written_by_hand() -> None:
    text = "nerts1 seats=2 play/0/0 - ?11:7C.5H/9S,8D,-,KC/?36/-/- ?12:AS/2D,3C,4H,5S/?35/-/-"
    state = parse_position(text)
    assert position_text(state) == text
    assert state.seats[0].nerts_count == 13
    assert state.seats[1].nerts_top == make_card(1, parse_face("AS"))


BASE = position_text(position(seat("?11:7C", work="9H,8C,-,-", waste="8D"), seat()))


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        (
            " ?12:KS",
            " ?12:KS ?12:KS/-,-,-,-/?39/-/-",
            "the rules say 2 seats but the position has 3",
        ),
        (" ?12:KS/-,-,-,-/?39/-/-", "", "a position starts with 'nerts1'"),
        ("/8D/", "/9H/", "seat 0's cards appear more than once"),
        ("?37", "?36", "seat 0's cards add up to 51, not 52"),
        ("?39", "?40", "seat 1's cards add up to 53, not 52"),
        ("nerts1", "nerts2", "a position starts with 'nerts1'"),
        ("seats=2", "seats=9", "position rules: seats must be 2..8"),
        ("play/0/0", "play/x/0", "must look like play/0/0"),
        ("play/0/0", "nerts@2/0/0", "there is no such seat"),
        ("play/0/0", "won/0/0", "must be play, nerts@S or stalemate"),
        ("play/0/0 - ", "play/0/0 2S@0 ", "must run from the ace up in one suit"),
        ("9H,8C,-,-", "9H,8C,-", "seat 0 has 3 work piles; the rules say 4"),
        ("?11:7C", "?12:-", "shows its top"),
        ("/8D/", "/X1/", "seat 0 has a joker"),
        ("?39", "?38.5H@0", "seat 1's face-down piles hold seat 0's card"),
        ("/8D/-", "/8D/x", "must be hidden:up/work/stock/waste/flag"),
        ("/8D/", "/8D..5C/", "'' is not a card"),
        ("?37", "?99", "is not a run of unknown cards"),
        ("play/0/0 - ", "play/0/0 AS ", "'AS': say whose card it is"),
        ("play/0/0 - ", "play/0/0 AS@5 ", "AS@5 belongs to seat 5, but the table has seats 0..1"),
        ("/8D/", "/8D.5H@5/", "5H@5 belongs to seat 5"),
        ("play/0/0", "play/²/0", "must look like play/0/0"),
    ],
)
def test_bad_positions_raise_notation_errors_saying_why(old: str, new: str, words: str) -> None:
    assert old in BASE
    with pytest.raises(NotationError) as info:
        parse_position(BASE.replace(old, new, 1))
    assert words in str(info.value)


@settings(max_examples=200)
@given(
    st.lists(
        st.tuples(st.integers(0, 200), st.sampled_from([*NOTATION_CHARS, "", "--", "?2"])),
        min_size=1,
        max_size=3,
    )
)
def test_a_damaged_position_parses_or_raises_notation_error(
    edits: list[tuple[int, str]],
) -> None:
    text = BASE
    for at, replacement in edits:
        at %= len(text)
        text = text[:at] + replacement + text[at + 1 :]
    try:
        state = parse_position(text)
    except NotationError as exc:
        error = exc
    else:
        again = position_text(state)
        assert position_text(parse_position(again)) == again
        return
    assert str(error)
