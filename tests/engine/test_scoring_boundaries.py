"""Scoring boundaries: the match target reached exactly, ties at the top, round scores."""

from __future__ import annotations

from nerts_p2p.game.rules import Rules
from nerts_p2p.game.scoring import MatchScore, SeatScore, match_winner, score_round
from tests.engine.helpers import position, seat

TARGET_100 = Rules(seats=3, target=100)


def test_a_seat_reaching_the_target_exactly_wins_the_match() -> None:
    assert match_winner([100, 40, 99], TARGET_100, 1) == 0
    assert match_winner([99, 40, 98], TARGET_100, 1) is None
    assert match_winner([40, 101, 100], TARGET_100, 1) == 1
    match = MatchScore(Rules(seats=2, target=30))
    match.add_round([SeatScore(0, 10, 0, True, 30), SeatScore(1, 5, 3, False, -1)])
    assert match.totals == [30, -1]
    assert match.rounds == 1
    assert match.winner == 0
    assert match.finished


def test_a_tie_at_the_top_over_the_target_is_played_off() -> None:
    assert match_winner([120, 120, 3], TARGET_100, 1) is None
    assert match_winner([120, 120, 130], TARGET_100, 1) == 2


def test_round_scores_count_own_cards_penalty_bonus_and_cheaters() -> None:
    state = position(
        seat("-:-", work="-,-,-,-"),
        seat("?2:9D", work="-,-,-,-"),
        foundations="AH@0.2H@1.3H@0,AS@1",
        rules="caller_bonus=10;nerts_penalty=2",
        status="nerts@0/0/0",
    )
    scores = score_round(state)
    assert [(s.foundation_cards, s.nerts_left, s.called, s.score) for s in scores] == [
        (2, 0, True, 12),
        (2, 3, False, -4),
    ]
    caught = score_round(state, cheaters=frozenset({0}))
    assert [s.score for s in caught] == [0, -4]
    assert score_round(state, cheaters=frozenset({1}))[1].score == -4  # zero caps gains only
