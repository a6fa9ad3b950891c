"""Whole matches between bots: they end with a rightful winner, replay exactly from a seed,
never peek at face-down cards, and the better bots win."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from nerts_p2p.game.bots import CASUAL, EXPERT, NOVICE, BotLevel, BotPlayer
from nerts_p2p.game.deck import seat_seed
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.simulate import match_record, round_record, simulate_match, simulate_round
from nerts_p2p.game.state import public_projection

from .helpers import round_states

MIXED = (EXPERT, CASUAL, NOVICE, CASUAL)


def levels_for(rules: Rules) -> list[BotLevel]:
    return [MIXED[i % len(MIXED)] for i in range(rules.players)]


MATCHES = [
    pytest.param(Rules(seats=2), id="2-seats"),
    pytest.param(Rules(seats=4), id="4-seats"),
    pytest.param(Rules(seats=8), id="8-seats"),
    pytest.param(Rules(seats=4, draw=1), id="draw-1"),
    pytest.param(Rules(seats=3, jokers=2), id="jokers-2"),
    pytest.param(Rules.german(seats=4), id="german"),
    pytest.param(Rules(seats=4, partnerships=True), id="partnerships-8-players"),
    pytest.param(Rules(seats=3, caller_bonus=10, nerts_penalty=1, target=60), id="house-rules"),
]


def test_novices_also_finish_a_match_through_stalemates() -> None:
    rules = Rules(seats=2, target=40)
    endings = []
    for result, match in simulate_match(rules, [NOVICE, NOVICE], seed=4):
        endings.append(result.ended_by)
        finished = match.finished
    assert finished
    assert "stalemate" in endings
    assert set(endings) <= {"nerts", "stalemate"}


@pytest.mark.parametrize("seed", [2024, 99])
@pytest.mark.parametrize("rules", MATCHES)
def test_a_match_ends_with_the_highest_total_at_or_over_the_target(rules: Rules, seed: int) -> None:
    running = [0] * rules.seats
    finished = []
    # The match is a live object that each round updates: read it inside the loop.
    for number, (result, match) in enumerate(
        simulate_match(rules, levels_for(rules), seed=seed), start=1
    ):
        assert result.round == number
        assert result.state.ended
        for s in result.scores:
            penalty = rules.nerts_penalty * s.nerts_left
            assert s.score == s.foundation_cards - penalty + (rules.caller_bonus if s.called else 0)
            assert s.nerts_left == result.state.seats[s.seat].nerts_count
            running[s.seat] += s.score
        assert [s.called for s in result.scores].count(True) == (result.ended_by == "nerts")
        assert (match.rounds, match.totals) == (number, running)
        finished.append(match.finished)
    assert finished[-1]
    assert not any(finished[:-1])  # the match stops as soon as it has a winner
    assert match.winner is not None
    best = match.totals[match.winner]
    assert best >= rules.target
    assert sorted(match.totals)[-2] < best


def records(rules: Rules, seed: int) -> list[dict[str, object]]:
    out = []
    for result, match in simulate_match(rules, levels_for(rules), seed=seed, max_rounds=3):
        out.append(round_record(result, match))
    out.append(match_record(match))
    return out


@pytest.mark.parametrize("rules", [Rules(seats=4), Rules(seats=3, jokers=2, draw=1)])
def test_the_same_seed_plays_the_same_match(rules: Rules) -> None:
    first = records(rules, seed=7)
    assert records(rules, seed=7) == first
    assert records(rules, seed=8) != first


def test_a_round_with_racing_bots_rejects_the_slower_hand() -> None:
    rules = Rules(seats=4)
    rejected = 0
    for round_number in range(1, 6):
        seeds = [seat_seed(11, round_number, s) for s in range(rules.seats)]
        result = simulate_round(rules, seeds, [EXPERT] * 4, round_number=round_number)
        assert result.moves + result.rejected > 0
        rejected += result.rejected
    assert rejected > 0


@pytest.mark.parametrize(
    "rules",
    [
        Rules(seats=2),
        Rules(seats=3, jokers=2, draw=1),
        Rules.german(seats=3),
        Rules(seats=2, partnerships=True, recycle_rotates=False),
    ],
    ids=["default", "jokers", "german", "partnerships"],
)
def test_bots_decide_the_same_without_seeing_face_down_cards(rules: Rules) -> None:
    seeds = [f"peek {i}".encode() for i in range(rules.seats)]
    states = round_states(rules, seeds, levels_for(rules))
    compared = hidden = 0
    for step, state in enumerate(states):
        public = public_projection(state)
        hidden += public != state  # the projection forgot some face-down card
        for seat in range(rules.seats):
            for level in (NOVICE, CASUAL, EXPERT):
                rng_seed = step * 31 + seat  # equal fresh sources for both players
                knowing = BotPlayer(level, seat, random.Random(rng_seed)).act(state)
                blind = BotPlayer(level, seat, random.Random(rng_seed)).act(public)
                assert knowing == blind, (step, seat, level.name)
                compared += 1
    assert compared > 50
    assert hidden > 10


def head_to_head(better: BotLevel, worse: BotLevel, rounds: int = 40) -> int:
    """Rounds out of `rounds` in which `better` outscores `worse` (they swap seats)."""
    wins = 0
    for r in range(rounds):
        levels: Sequence[BotLevel] = (better, worse) if r % 2 == 0 else (worse, better)
        seeds = [seat_seed(5, r, s) for s in range(2)]
        result = simulate_round(Rules(seats=2), seeds, levels, match_seed=5, round_number=r)
        mine, theirs = result.scores[r % 2].score, result.scores[1 - r % 2].score
        wins += mine > theirs
    return wins


@pytest.mark.parametrize(("better", "worse"), [(EXPERT, CASUAL), (CASUAL, NOVICE)])
def test_a_better_bot_wins_most_rounds(better: BotLevel, worse: BotLevel) -> None:
    assert head_to_head(better, worse) > 20
