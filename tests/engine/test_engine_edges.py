"""Boundaries of the rules that no other scenario pins: the state a deal starts from, the
cards a READY may show, an ace played onto a work pile under aces first, a two-card waste
turned over. Found by `tools.mutate` (exhaustive run of engine.py): each test fails with a
constant or comparison of the engine off by one."""

from __future__ import annotations

import pytest

from nerts_p2p.game.cards import make_card
from nerts_p2p.game.engine import omniscient_start, public_start, shown_cards
from nerts_p2p.game.errors import NertsError, RejectReason
from nerts_p2p.game.position import position_text
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.state import GameState

from .helpers import after, position, rejected, seat, seat_text

R = RejectReason

#: Two decks whose deals leave neither seat a card to play: no ace among the five cards
#: face up, and neither Nerts top fits a work card (seat 0 shows 8S over 3H 5S 7H 4C,
#: seat 1 4H over 4S 6C TS TD). The 3H could move onto the 4C, but moves between a seat's
#: own work piles do not keep it from being stuck (RULE_DECISIONS.md).
STUCK_DEAL = (b"stuck 1 a", b"stuck 1 b")


def _starts() -> list[GameState]:
    """The all-knowing start of the stuck deal, and the public one built from what the two
    seats show (each peer's view before any move)."""
    rules = Rules(seats=2)
    full = omniscient_start(rules, STUCK_DEAL)
    return [full, public_start(rules, [shown_cards(full, s) for s in range(2)])]


def status(state: GameState) -> str:
    return position_text(state).split()[2]


@pytest.mark.parametrize("view", ["all-knowing", "public"])
def test_a_new_round_starts_with_no_rotation_and_no_card_moved(view: str) -> None:
    # NOTATION.md: the status of a fresh deal is play/0/0. Every peer hashes the position
    # text, so a start that read play/0/1 or play/1/0 would split the table.
    start = _starts()[["all-knowing", "public"].index(view)]
    assert position_text(start) == (
        "nerts1 seats=2 play/0/0 - ?12:8S/3H,5S,7H,4C/?35/-/- ?12:4H/4S,6C,TS,TD/?35/-/-"
    )


@pytest.mark.parametrize("view", ["all-knowing", "public"])
def test_the_first_all_stuck_of_a_fresh_deal_rotates_the_stocks(view: str) -> None:
    # Nobody can play from the deal on: the first time every seat is stuck the stocks are
    # rotated (RULES.md: only a second all-stuck with no move in between ends the round).
    start = _starts()[["all-knowing", "public"].index(view)]
    rotated = after(start, "0 stuck", "1 stuck")
    assert rotated.ended_by is None
    assert status(rotated) == "play/1/0"
    assert [s.stuck for s in rotated.seats] == [False, False]


def test_the_all_knowing_start_needs_one_seed_for_every_seat() -> None:
    rules = Rules(seats=3)
    with pytest.raises(NertsError, match="3 seats need 3 seeds, got 2"):
        omniscient_start(rules, STUCK_DEAL)


def test_a_ready_may_show_only_the_jokers_its_deck_has() -> None:
    # A one-joker deck has X1 (index 52) but not X2 (index 53): showing X2 is showing a
    # card that does not exist, even though the table plays jokers.
    rules = Rules(seats=2, jokers=1)
    full = omniscient_start(rules, STUCK_DEAL)
    shown = [list(shown_cards(full, s)) for s in range(2)]
    # Seat 1's deal shows no joker: its Nerts top may be replaced by X1, not by X2.
    shown[1][0] = make_card(1, 52)
    assert public_start(rules, shown).seats[1].nerts_up == (make_card(1, 52),)
    shown[1][0] = make_card(1, 53)
    with pytest.raises(NertsError) as refused:
        public_start(rules, shown)
    assert str(refused.value) == (
        "seat 1 shows a card its deck does not have: this table plays with 1 joker(s) per deck"
    )


def test_aces_first_holds_up_a_seat_whose_exposed_ace_lies_on_a_work_pile_card() -> None:
    # The ace was played onto the 2 of hearts: it is the pile's exposed card (its top), not
    # its bottom one, and under aces first it must go to the centre before anything else.
    state = position(seat("?11:7C", work="2H.AS,8H,-,-"), seat(), rules="aces_first=true")
    refused = rejected(state, "0 turn +2D+3D+4D")
    assert refused.reason == R.ACES_FIRST
    assert "play your ace of spades before anything else" in refused.message
    assert after(state, "0 AS w0-f").foundations


@pytest.mark.parametrize(("rules", "stock"), [("-", "3S.2S"), ("recycle_rotates=false", "2S.3S")])
def test_turning_over_a_two_card_waste_still_puts_its_first_card_at_the_bottom(
    rules: str, stock: str
) -> None:
    # The Norwegian text (`recycle_rotates`): the top card of the new stock goes to the
    # bottom, however few cards there are; with two, the order of the pair flips.
    state = position(seat("*:KS", stock="-", waste="2S.3S"), seat(), rules=rules)
    assert seat_text(after(state, "0 recycle"), 0).split("/")[2:4] == [stock, "-"]
