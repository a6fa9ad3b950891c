"""`legal_moves` lists every move `apply` accepts, and the rule boundaries nothing else pins.

The completeness check does not trust `legal_moves` for its candidates: it builds every move
a seat could name from its visible cards (every source, every destination, every joker
declaration, every simple action), runs each through `apply` and compares the accepted set
with the listed one, both ways. It runs on positions rich in what random folds rarely reach:
jokers (wild and fixed), Nerts builds, slide-under, stuck seats, aces first at 8 seats.
"""

from __future__ import annotations

import pytest

from nerts_p2p.game.bots import LEVELS
from nerts_p2p.game.cards import CARD_MASK, is_joker, make_card, parse_card
from nerts_p2p.game.deck import seat_seed
from nerts_p2p.game.engine import (
    apply,
    omniscient_start,
    play,
    public_start,
    redact_seat,
    reveals_needed,
    shown_cards,
)
from nerts_p2p.game.errors import NertsError, Rejection
from nerts_p2p.game.legal import legal_moves
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
    parse_move,
)
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.state import UNKNOWN, GameState, seen_mask, slot_card
from tests.engine.helpers import position, rejected, round_states, seat


def _with_reveals(state: GameState, move: Move) -> Move:
    """`move` naming the cards it turns up: the known ones, else unseen cards of the seat."""
    slots = reveals_needed(state, move)
    if not slots:
        return move
    s = state.seats[move.seat]
    unseen = (i for i in range(state.rules.deck_size) if not s.seen >> i & 1)
    cards = []
    for slot in slots:
        if slot >= 0:
            cards.append(slot)
        elif slot != UNKNOWN:
            cards.append(slot_card(slot))
        else:
            cards.append(make_card(move.seat, next(unseen)))
    return move._replace(reveals=tuple(cards))


def every_named_move(state: GameState, seat_no: int) -> list[Move]:
    """Every move the seat can name from what is face up, legal or not."""
    s = state.seats[seat_no]
    pieces = []
    if s.nerts_up:
        pieces.append((s.nerts_up[-1], FROM_NERTS))
    if s.waste:
        pieces.append((s.waste[-1], FROM_WASTE))
    pieces.extend((entry, k) for k, pile in enumerate(s.work) for entry in pile)
    destinations: list[tuple[str, int]] = [(TO_FOUNDATION, NEW_FOUNDATION)]
    destinations += [(TO_FOUNDATION, base) for base in state.foundations]
    destinations += [(kind, j) for kind in (TO_WORK, TO_UNDER) for j in range(len(s.work))]
    destinations += [(TO_NERTS, v) for v in range(len(state.seats))]
    moves = [Move(seat_no, action) for action in SIMPLE_ACTIONS]
    for entry, source in pieces:
        card = entry & CARD_MASK
        for kind, dest in destinations:
            declares = range(52) if kind == TO_FOUNDATION and is_joker(entry) else (-1,)
            moves.extend(Move(seat_no, PLAY, card, source, kind, dest, d) for d in declares)
    return moves


def accepted_moves(state: GameState, seat_no: int) -> set[Move]:
    return {
        move
        for move in every_named_move(state, seat_no)
        if not isinstance(apply(state, _with_reveals(state, move)), Rejection)
    }


def assert_complete(state: GameState) -> None:
    for seat_no in range(len(state.seats)):
        listed = legal_moves(state, seat_no)
        assert len(listed) == len(set(listed)), "a move is listed twice"
        accepted = accepted_moves(state, seat_no)
        missing = accepted - set(listed)
        wrong = set(listed) - accepted
        assert not missing, f"seat {seat_no}: accepted but not listed: {sorted(map(str, missing))}"
        assert not wrong, f"seat {seat_no}: listed but rejected: {sorted(map(str, wrong))}"


JOKERS_AND_BUILDS = "jokers=2;nerts_builds=true"


def run(suit: str, top: str, owner: int = 0) -> str:
    """A foundation from the ace of `suit` up to rank `top`, all cards of `owner`."""
    ranks = "A23456789TJQK"
    return ".".join(f"{r}{suit}@{owner}" for r in ranks[: ranks.index(top) + 1])


#: Hand-made positions: what a move generator most easily forgets.
POSITIONS = {
    # A wild joker on the Nerts pile (any suit as a new ace, any foundation's next card), a
    # joker fixed as a black 8 on a work pile (only 8C fits, on the clubs), Nerts builds on
    # two other seats (5D onto 4D and onto 6D), a stuck seat, slide-under of TS under 9H.
    "wild and fixed jokers, builds, stuck": position(
        seat("?10:X1", work="9H.X2=8S,-,5D,KC", waste="TS"),
        seat("?11:6D", work="7C,-,-,-"),
        # Stuck: nothing of its fits anywhere (a seat with a card to play cannot be stuck).
        seat("?11:4D", work="JS,8H,QS,KC", stuck=True),
        rules=JOKERS_AND_BUILDS + ";slide_under=true",
        foundations="AH@1.2H@1.3H@1,AS@2,AC@0.2C@0.3C@0.4C@0.5C@0.6C@0.7C@0",
    ),
    # Jokers everywhere a card can be: Nerts top, waste top, work tops; a Nerts top that
    # is a joker takes no builds; builds both ways of rank.
    "jokers on every pile": position(
        seat("?11:QH", work="X1,KS.X2,-,-", waste="3D"),
        seat("?11:X1", work="2D,-,-,-", waste="X2"),
        seat("?10:JH.TH@1", work="4D,KH,-,-"),  # its Nerts top is seat 1's TH, built on
        rules=JOKERS_AND_BUILDS,
        foundations="AD@2",
    ),
    # An empty Nerts pile: the seat may call; its stock is empty, so it may only recycle.
    "empty Nerts pile, waste to recycle": position(
        seat("-:-", work="KC,QC,-,-", stock="-", waste="9C.X1.TC.JC"),
        seat("?11:KD", work="QD,JS,7H,5H", stuck=True),
        rules="jokers=1",
        foundations=",".join([run("S", "K"), run("H", "K"), run("D", "K"), run("C", "8")]),
    ),
    # Aces first: an exposed ace allows only aces to the centre (not a joker declared as
    # one), at the last seat of a full table too.
    "aces first with a joker": position(
        seat("?11:X1", work="AS,AH,2S,-", waste="AD"),
        seat("?11:KD"),
        rules="jokers=2;aces_first=true",
    ),
    "aces first at seat 7 of 8": position(
        *[seat("?11:KD") for _ in range(7)],
        seat("?11:QC", work="AH,5S,-,-", waste="AC"),
        rules="aces_first=true",
    ),
    # Only one card left in the stock: no rotation; the Nerts top reveals from a hidden pile.
    "one stock card, draw one": position(
        seat("*:9C", work="8H,-,-,-", stock="QD", waste="-"),
        seat("?11:TD", work="-,-,-,-"),
        rules="draw=1",
    ),
}


@pytest.mark.parametrize("name", list(POSITIONS))
def test_legal_moves_lists_every_move_apply_accepts_in_crafted_positions(name: str) -> None:
    assert_complete(POSITIONS[name])


def test_the_crafted_positions_hold_what_they_claim() -> None:
    """The positions above exercise what they are named after (or the check is hollow)."""
    rich = POSITIONS["wild and fixed jokers, builds, stuck"]
    listed = {str(m) for m in legal_moves(rich, 0)}
    assert {"0 X1=AD n-f", "0 X1=4H n-fAH@1", "0 X1=2S n-fAS@2", "0 X1=8C n-fAC"} <= listed
    assert "0 X2=8C w0-fAC" in listed
    assert "0 X2=8S w0-fAC" not in listed  # a fixed joker keeps its colour and rank
    assert {"0 5D w2-n1", "0 5D w2-n2", "0 TS d-u0"} <= listed
    # A seat with a card to play cannot declare itself stuck; only a stuck seat rotates.
    assert "0 stuck" not in listed
    assert "1 stuck" not in {str(m) for m in legal_moves(rich, 1)}  # 6D fits on 7C
    stuck_seat = {str(m) for m in legal_moves(rich, 2)}
    assert "2 stuck" not in stuck_seat
    assert "2 rotate" in stuck_seat
    built_on = {str(m) for m in legal_moves(POSITIONS["jokers on every pile"], 2)}
    assert {"2 TH@1 n-w2", "2 TH@1 n-w3"} <= built_on
    assert not any(" JH " in m for m in built_on)  # the card under the top stays put
    empty = POSITIONS["empty Nerts pile, waste to recycle"]
    assert {"0 nerts", "0 recycle"} <= {str(m) for m in legal_moves(empty, 0)}
    eighth = POSITIONS["aces first at seat 7 of 8"]
    assert sorted(str(m) for m in legal_moves(eighth, 7)) == ["7 AC d-f", "7 AH w0-f"]
    assert rejected(eighth, "7 turn").reason.value == "aces_first"
    assert not isinstance(apply(eighth, parse_move("7 AC d-f")), Rejection)


RICH_RULES = [
    Rules(seats=3, jokers=2, nerts_builds=True, slide_under=True),
    Rules(seats=2, jokers=2, draw=1, nerts_size=5, work_piles=2),
    Rules(seats=4, jokers=1, nerts_builds=True, aces_first=True, must_call=True),
    Rules(seats=2, jokers=2, recycle_rotates=False, slide_under=True, work_piles=5),
]


@pytest.mark.parametrize("rules", RICH_RULES, ids=lambda r: f"{r.seats}seats")
def test_legal_moves_lists_every_move_apply_accepts_along_simulated_rounds(rules: Rules) -> None:
    levels = [LEVELS["novice"]] * rules.seats
    seeds = [seat_seed(7, 1, s) for s in range(rules.seats)]
    states = round_states(rules, seeds, levels)
    for state in states[:: max(1, len(states) // 25)]:
        assert_complete(state)


def test_a_seat_the_table_does_not_have_has_no_legal_moves() -> None:
    # Asked for a seat past the last (a bot or a window with a stale seat number), the
    # answer is "nothing", not a crash (found by `tools.mutate`, seed 901).
    rules = Rules(seats=3)
    state = omniscient_start(rules, [seat_seed(5, 1, s) for s in range(rules.seats)])
    assert legal_moves(state, rules.seats - 1)
    for seat_no in (rules.seats, rules.seats + 1, -1):
        assert legal_moves(state, seat_no) == []


# --- public_start: what a READY may show --------------------------------------------------


def _shown(rules: Rules) -> list[list[int]]:
    state = omniscient_start(rules, [seat_seed(3, 1, s) for s in range(rules.seats)])
    return [list(shown_cards(state, s)) for s in range(rules.seats)]


def test_public_start_refuses_a_ready_showing_the_same_card_twice() -> None:
    rules = Rules(seats=3)
    shown = _shown(rules)
    assert public_start(rules, shown).seats[1].work[0] == (shown[1][1],)
    shown[1][2] = shown[1][1]
    with pytest.raises(NertsError, match="seat 1 shows cards that are not distinct"):
        public_start(rules, shown)


def test_public_start_refuses_a_ready_showing_another_decks_card() -> None:
    rules = Rules(seats=3)
    for other in (0, 2):
        shown = _shown(rules)
        shown[1][0] = make_card(other, shown[1][0] & 63)
        with pytest.raises(NertsError, match="seat 1 shows cards that are not distinct"):
            public_start(rules, shown)


def test_public_start_refuses_wrong_counts_and_jokers_at_a_table_without() -> None:
    rules = Rules(seats=2)
    shown = _shown(rules)
    with pytest.raises(NertsError, match="2 seats must each show"):
        public_start(rules, shown[:1])
    with pytest.raises(NertsError, match="seat 0 must show 1 \\+ 4 cards"):
        public_start(rules, [shown[0][:-1], shown[1]])
    shown[0][0] = parse_card("X1", default_owner=0)
    with pytest.raises(NertsError, match="joker"):
        public_start(rules, shown)


# --- what is public knowledge: a card turned up twice is refused ---------------------------


def test_every_card_a_seat_has_shown_counts_as_seen_all_round_long() -> None:
    """`seen` (the seat's cards that are public) is what a reveal is checked against: it must
    be exactly the seat's cards that are face up or known anywhere, at every step."""
    for rules in RICH_RULES[:2]:
        seeds = [seat_seed(3, 1, s) for s in range(rules.seats)]
        states = round_states(rules, seeds, [LEVELS["casual"]] * rules.seats)
        starts = [
            states[0],
            public_start(rules, [shown_cards(states[0], i) for i in range(rules.seats)]),
        ]
        for state in [*starts, *states]:
            for i, s in enumerate(state.seats):
                assert s.seen == seen_mask(state.seats, state.foundations, i), (i, state)


def test_a_public_view_refuses_a_reveal_of_a_card_already_shown() -> None:
    rules = Rules(seats=2, draw=1)
    start = omniscient_start(rules, [seat_seed(4, 1, s) for s in range(2)])
    public = public_start(rules, [shown_cards(start, i) for i in range(2)])
    for seat_no in (0, 1):
        for card in shown_cards(start, seat_no):
            turn = Move(seat_no, TURN, reveals=(card,))
            result = apply(public, turn)
            assert isinstance(result, Rejection)
            assert "already seen" in result.message
    # And a card turned up from the stock, in a view that knew it, is seen from then on.
    s = start.seats[0]
    turned = slot_card(s.stock[0])
    after_turn = play(start, Move(0, TURN, reveals=(turned,)))
    forgotten = redact_seat(after_turn, 0)
    assert forgotten.seats[0].seen >> (turned & 63) & 1
    # The next stock card is unknown to this view: it cannot be the one just turned up.
    again = apply(forgotten, Move(0, TURN, reveals=(turned,)))
    assert isinstance(again, Rejection)
    assert "already seen" in again.message


def test_an_unfixed_joker_cannot_slide_under_and_is_told_why() -> None:
    state = position(
        seat("?11:KD", work="9H,-,-,-", waste="X1"),
        seat(),
        rules="jokers=1;slide_under=true",
    )
    assert "joker without a fixed identity" in rejected(state, "0 X1 d-u0").message


def test_a_player_knows_its_own_face_down_cards_from_its_seed_and_only_those() -> None:
    rules = Rules(seats=3)
    seeds = [seat_seed(6, 1, s) for s in range(3)]
    shown = [list(shown_cards(omniscient_start(rules, seeds), s)) for s in range(3)]
    for own in (0, 1, 2):
        view = public_start(rules, shown, own_seat=own, own_seed=seeds[own])
        for seat_no, s in enumerate(view.seats):
            known = [slot != UNKNOWN for slot in (*s.nerts_hidden, *s.stock)]
            assert all(known) if seat_no == own else not any(known)
            assert shown_cards(view, seat_no) == tuple(shown[seat_no])
        other = seeds[(own + 1) % 3]
        with pytest.raises(NertsError, match=f"seat {own}'s seed does not deal the cards it shows"):
            public_start(rules, shown, own_seat=own, own_seed=other)
