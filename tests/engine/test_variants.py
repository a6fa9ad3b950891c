"""The Norwegian and German options: a table that nobody can move ends the round at once,
empty work piles filled only from the Nerts pile or the stock, and matches that end after
an agreed number of rounds or at an agreed spread. Each travels as a rules field."""

from __future__ import annotations

import pytest

from nerts_p2p.game.bots import CASUAL
from nerts_p2p.game.errors import RejectReason as R
from nerts_p2p.game.errors import RulesError
from nerts_p2p.game.legal import legal_moves
from nerts_p2p.game.moves import PLAY, move_text
from nerts_p2p.game.position import parse_position, position_text
from nerts_p2p.game.rules import NORWEGIAN, Rules, parse_rule_options, rule_options_text
from nerts_p2p.game.scoring import MatchScore, SeatScore, score_round
from nerts_p2p.game.simulate import simulate_match
from nerts_p2p.game.state import ENDED_STALEMATE
from nerts_p2p.table.replica import rules_from_wire, rules_to_wire

from .helpers import after, position, rejected, seat, work_text

FULL = "5D,9C,QH,QD.JS"
FULL_1 = "5S,9D,QC,JD"

# --- Norwegian: nobody can move, the round ends ---------------------------------------------


@pytest.mark.parametrize(("rules", "ends_at_once"), [("stuck_ends_round=true", True), ("-", False)])
def test_when_nobody_can_move_the_norwegian_round_ends_without_a_rotation(
    rules: str, ends_at_once: bool
) -> None:
    state = position(
        seat("?12:KS", work=FULL, waste="2S.3S", stuck=True),
        seat("?12:KH", work=FULL_1, waste="5C.6C"),
        rules=rules,
    )
    ended = after(state, "1 stuck")
    if ends_at_once:
        assert (ended.ended_by, ended.rotations) == (ENDED_STALEMATE, 0)
        # Scored as usual, the Nerts-pile penalty included: 13 cards left, -2 each.
        assert [s.score for s in score_round(ended)] == [-26, -26]
        assert rejected(ended, "0 JS w3-w2").reason == R.ROUND_OVER
    else:
        assert (ended.ended_by, ended.rotations) == (None, 1)


def test_a_norwegian_empty_work_pile_takes_only_the_nerts_top_or_the_waste_top() -> None:
    layout = seat("-:8C", work="5D,9C,QH.JS,-", waste="7H")
    norwegian = position(layout, seat("?12:KH", work=FULL_1), rules="fill_from_work=false")
    refused = rejected(norwegian, "0 JS w2-w3")
    assert refused.reason == R.VARIANT_OFF
    assert "only the Nerts top or the waste top" in refused.message
    assert rejected(norwegian, "0 5D w0-w3").reason == R.VARIANT_OFF
    legal = legal_moves(norwegian, 0)
    listed = {move_text(m) for m in legal}
    assert {"0 8C n-w3", "0 7H d-w3"} <= listed
    from_work = [m for m in legal if m.action == PLAY and m.source >= 0 and m.dest_kind == "w"]
    assert not [m for m in from_work if m.dest == 3]
    assert work_text(after(norwegian, "0 7H d-w3"), 0) == "5D,9C,QH.JS,7H"
    assert work_text(after(norwegian, "0 8C n-w3"), 0) == "5D,9C,QH.JS,8C"
    # The default table fills it from another work pile too.
    default = position(layout, seat("?12:KH", work=FULL_1))
    assert work_text(after(default, "0 JS w2-w3"), 0) == "5D,9C,QH,JS"


def test_a_norwegian_table_still_moves_work_cards_onto_cards() -> None:
    state = position(
        seat("?12:KS", work="5D,9C,QH,QD.JS"),
        seat("?12:KH", work=FULL_1),
        rules="fill_from_work=false",
    )
    assert work_text(after(state, "0 JS w3-w2"), 0) == "5D,9C,QH.JS,QD"


def test_the_norwegian_preset_sets_both_fields() -> None:
    rules = Rules.norwegian()
    assert (rules.seats, rules.stuck_ends_round, rules.fill_from_work) == (2, True, False)
    assert rules.to_dict() | NORWEGIAN == rules.to_dict()


# --- German: the match ends after agreed rounds or at an agreed spread ----------------------


def scored(*points: int) -> list[SeatScore]:
    return [SeatScore(i, p, 0, False, p) for i, p in enumerate(points)]


def winner_of(match: MatchScore) -> int | None:
    return match.winner


def test_a_match_of_agreed_rounds_ends_after_them_and_the_highest_total_wins() -> None:
    match = MatchScore(Rules(seats=3, match_rounds=2))
    match.add_round(scored(10, 20, 5))
    assert (winner_of(match), match.finished) == (None, False)
    match.add_round(scored(15, 0, 5))  # 25, 20, 10: two rounds played, far below the target
    assert (winner_of(match), match.finished, match.rounds) == (0, True, 2)


def test_a_tie_at_the_top_after_the_agreed_rounds_is_played_off() -> None:
    match = MatchScore(Rules(seats=2, match_rounds=1))
    match.add_round(scored(7, 7))
    assert (winner_of(match), match.finished) == (None, False)
    match.add_round(scored(1, 3))
    assert winner_of(match) == 1


def test_a_match_ends_when_the_first_leads_the_last_by_the_agreed_spread() -> None:
    match = MatchScore(Rules(seats=3, match_spread=30))
    match.add_round(scored(20, 5, -9))  # spread 29
    assert winner_of(match) is None
    match.add_round(scored(1, 5, 0))  # 21, 10, -9: spread 30
    assert winner_of(match) == 0


def test_the_target_still_ends_a_match_with_the_german_options() -> None:
    match = MatchScore(Rules(seats=2, target=20, match_rounds=10, match_spread=100))
    match.add_round(scored(25, 19))
    assert winner_of(match) == 0


def test_a_simulated_match_of_agreed_rounds_stops_after_them() -> None:
    rules = Rules(seats=2, match_rounds=2, target=10_000)
    played = list(simulate_match(rules, [CASUAL, CASUAL], seed=4))
    _, match = played[-1]
    assert len(played) >= 2
    if len(played) > 2:  # played off: the totals were level at the top until the last round
        assert all(m.winner is None for _, m in played[:-1])
    assert match.finished


# --- the fields as rules: validation, text, wire ---------------------------------------------


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"match_rounds": -1}, "match_rounds must be 0 (no limit) or 1..1000, got -1"),
        ({"match_rounds": 1001}, "match_rounds must be 0 (no limit) or 1..1000"),
        ({"match_spread": -5}, "match_spread must be 0 (off) or 1..10000, got -5"),
        ({"match_spread": 10_001}, "match_spread must be 0 (off) or 1..10000"),
        ({"match_rounds": True}, "match_rounds must be int, got True"),
        ({"stuck_ends_round": 1}, "stuck_ends_round must be bool"),
        ({"fill_from_work": "no"}, "fill_from_work must be bool"),
    ],
)
def test_the_new_fields_refuse_values_the_game_does_not_allow(
    options: dict[str, object], words: str
) -> None:
    with pytest.raises(RulesError) as info:
        Rules.from_dict(options)
    assert words in str(info.value)
    with pytest.raises(RulesError):
        rules_from_wire([[name, value] for name, value in options.items()])


ALL_NEW = Rules(
    seats=2, stuck_ends_round=True, fill_from_work=False, match_rounds=7, match_spread=40
)


def test_the_new_fields_travel_on_the_wire_and_round_trip() -> None:
    wire = rules_to_wire(ALL_NEW)
    assert ["match_rounds", 7] in wire
    assert ["fill_from_work", False] in wire
    assert rules_from_wire(wire) == ALL_NEW
    assert rules_from_wire([tuple(pair) for pair in wire]) == ALL_NEW


@pytest.mark.parametrize(
    "wire",
    [
        17,
        "seats=2",
        [["seats"]],
        [[2, "seats"]],
        [["seats", 2], ["seats", 3]],
        [["match_rounds", "5"]],
        [["stuck_ends_round", None]],
        [["norwegian", True]],
    ],
)
def test_a_receiver_refuses_malformed_rules(wire: object) -> None:
    with pytest.raises(RulesError):
        rules_from_wire(wire)


def test_the_new_fields_are_in_the_position_notation() -> None:
    text = rule_options_text(ALL_NEW)
    assert text == (
        "fill_from_work=false;match_rounds=7;match_spread=40;seats=2;stuck_ends_round=true"
    )
    assert parse_rule_options(text) == ALL_NEW
    state = position(seat("?12:KS", work=FULL), seat("?12:KH", work=FULL_1), rules=text)
    line = position_text(state)
    assert line.split()[1] == text
    assert parse_position(line).rules == ALL_NEW
