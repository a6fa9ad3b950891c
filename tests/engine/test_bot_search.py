"""The bots' fast move search (`bot_search` for a novice and `aces_first` tables, the
score bands of `bot_best` for the levels that play their best) decides exactly as scoring
every legal move did, and the same seeds still give the same rounds."""

from __future__ import annotations

import random

import pytest

from nerts_p2p.game import simulate
from nerts_p2p.game.bots import CASUAL, EXPERT, NOVICE, BotPlayer
from nerts_p2p.game.deck import seat_seed
from nerts_p2p.game.engine import omniscient_start, play
from nerts_p2p.game.moves import Move
from nerts_p2p.game.position import position_text
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.simulate import simulate_round
from nerts_p2p.game.state import GameState

from .reference_bot import ReferenceBot

decisions: list[int] = []


class TwinBot(BotPlayer):
    """Decides with the fast search, and checks each decision against the old way made
    from the same position, the same habits and the same random state."""

    def act(self, state: GameState) -> Move | None:
        twin = ReferenceBot(self.level, self.seat, random.Random())
        twin.rng.setstate(self.rng.getstate())
        twin._idle, twin._stuck_signature = self._idle, self._stuck_signature
        twin._rotations = self._rotations
        expected = twin.act(state)
        got = super().act(state)
        assert got == expected, position_text(state)
        assert self.rng.getstate() == twin.rng.getstate()
        assert (self._idle, self._stuck_signature) == (twin._idle, twin._stuck_signature)
        decisions.append(1)
        return got


TABLES = [
    Rules(seats=4),
    Rules(seats=3, jokers=2, nerts_builds=True),
    Rules(seats=2, aces_first=True, draw=1, nerts_size=5),
    Rules(seats=3, fill_from_work=False, stuck_ends_round=True, work_piles=5),
    Rules(seats=2, slide_under=False, must_call=True, jokers=1, work_piles=3),
    Rules(seats=2, partnerships=True, nerts_builds=True, aces_first=True),
    # Races between many seats, jokers and builds on Nerts piles in the best-only search.
    Rules(seats=5, jokers=2, nerts_builds=True, draw=1),
    Rules(seats=4, work_piles=6, jokers=1, recycle_rotates=False),
]


@pytest.mark.parametrize("rules", TABLES)
@pytest.mark.parametrize("levels", [(NOVICE,), (CASUAL,), (EXPERT,), (EXPERT, NOVICE, CASUAL)])
def test_the_fast_search_chooses_what_scoring_every_legal_move_chose(
    monkeypatch: pytest.MonkeyPatch, rules: Rules, levels: tuple[object, ...]
) -> None:
    monkeypatch.setattr(simulate, "BotPlayer", TwinBot)
    players = rules.players
    table = [levels[i % len(levels)] for i in range(players)]
    decisions.clear()
    for round_number in (1, 2):
        seeds = [seat_seed(17, round_number, s) for s in range(rules.seats)]
        simulate_round(rules, seeds, table, match_seed=17, round_number=round_number)  # type: ignore[arg-type]
    assert len(decisions) > 50


def test_same_seeds_give_the_same_round_move_for_move() -> None:
    rules = Rules(seats=4)
    seeds = [seat_seed(5, 1, s) for s in range(4)]
    first = simulate_round(rules, seeds, [NOVICE, CASUAL, EXPERT, CASUAL], keep_log=True)
    again = simulate_round(rules, seeds, [NOVICE, CASUAL, EXPERT, CASUAL], keep_log=True)
    assert first.log == again.log
    assert position_text(first.state) == position_text(again.state)
    other = simulate_round(
        rules, [seat_seed(6, 1, s) for s in range(4)], [NOVICE, CASUAL, EXPERT, CASUAL]
    )
    assert position_text(other.state) != position_text(first.state)


def test_a_bot_seated_after_it_was_made_moves_for_its_seat() -> None:
    # Regression: a PeerMesh bot is made with seat -1 and seated when the round starts; its
    # stock turns once carried the seat it was made with and were all refused.
    state = omniscient_start(Rules(seats=2), [seat_seed(2, 1, s) for s in range(2)])
    bot = BotPlayer(CASUAL, -1, random.Random(1))
    bot.seat = 1
    moves = []
    for _ in range(6):
        move = bot.act(state)
        assert move is not None
        moves.append(move)
        state = play(state, move)
    assert {m.seat for m in moves} == {1}
