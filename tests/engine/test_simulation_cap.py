"""A broken rule makes the simulator fail loudly instead of hanging the suite."""

from __future__ import annotations

import pytest

from nerts_p2p.game import simulate
from nerts_p2p.game.bots import LEVELS
from nerts_p2p.game.deck import seat_seed
from nerts_p2p.game.engine import apply
from nerts_p2p.game.errors import NertsError, Rejection
from nerts_p2p.game.moves import Move
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.state import GameState

RULES = Rules(seats=2)
SEEDS = [seat_seed(5, 1, s) for s in range(2)]
LEVELS_2 = [LEVELS["casual"]] * 2


def test_a_round_where_stalemate_never_ends_play_fails_past_the_rotation_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def never_stalemate(state: GameState, move: Move) -> GameState | Rejection:
        result = apply(state, move)
        if isinstance(result, Rejection) or result.ended_by != "stalemate":
            return result
        # The broken rule: a second all-stuck rotation without progress rotates again.
        seats = tuple(s._replace(stuck=False) for s in result.seats)
        return result._replace(ended_by=None, seats=seats, rotations=result.rotations + 1)

    monkeypatch.setattr(simulate, "apply", never_stalemate)
    monkeypatch.setattr(simulate, "MAX_ROTATIONS_PER_ROUND", 20)
    # Two novices end most rounds in a stalemate; with these deals (match seed 1) round 1 does.
    seeds = [seat_seed(1, 1, s) for s in range(2)]
    with pytest.raises(NertsError, match="21 all-stuck rotations: a rule lets a round go on"):
        simulate.simulate_round(RULES, seeds, [LEVELS["novice"]] * 2, match_seed=1)


def test_a_round_where_moves_change_nothing_fails_past_the_event_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def accepts_and_ignores(state: GameState, move: Move) -> GameState | Rejection:
        return state  # the broken rule: every move is accepted and nothing happens

    monkeypatch.setattr(simulate, "apply", accepts_and_ignores)
    monkeypatch.setattr(simulate, "WRAP_UP_AFTER", float("inf"))  # no safety net either
    monkeypatch.setattr(simulate, "MAX_EVENTS_PER_ROUND", 3000)
    with pytest.raises(NertsError, match="did not end after 3000 moves and decisions"):
        simulate.simulate_round(RULES, SEEDS, LEVELS_2)


def test_ordinary_rounds_stay_far_below_the_caps() -> None:
    for players in (2, 8):
        rules = Rules(seats=players)
        for round_number in (1, 2):
            seeds = [seat_seed(11, round_number, s) for s in range(players)]
            result = simulate.simulate_round(rules, seeds, [LEVELS["novice"]] * players)
            assert result.state.ended_by is not None
            assert result.moves + result.rejected < simulate.MAX_EVENTS_PER_ROUND // 20
            assert result.state.rotations < simulate.MAX_ROTATIONS_PER_ROUND // 20
