"""The shells' questions between rounds (`nerts_p2p/table/status.py`) at their edges: the
fewest players a round can start with, a practice table whose every seat is ready, and the
end of a match (a round that ends without a winner is not a won match).
`test_lobby_questions.py` asks them at a three-player table in the middle of the range."""

from __future__ import annotations

import pytest

from nerts_p2p.game.rules import Rules
from nerts_p2p.table.status import (
    everyone_ready_to_start,
    match_won,
    may_start_full_table,
    others_ready,
    round_began_full,
)

from .table_helpers import ManualTable, call_nerts, fixed_randomness, seed_showing


def _table(rules: Rules, players: int) -> ManualTable:
    seeds = [fixed_randomness(bytes(32), f"edge{i}")(32) for i in range(players)]
    return ManualTable(rules, seeds)


def _ready(table: ManualTable, *indexes: int) -> None:
    for i in indexes:
        table.players[i].ready()
    table.collect()
    table.deliver_all()


def test_the_starter_of_a_two_player_table_may_start_once_the_other_is_ready() -> None:
    table = _table(Rules(seats=2), 2)
    host = table.players[0]
    assert not others_ready(host), "the other player has not said ready"
    _ready(table, 1)
    assert others_ready(host), "two players, the other ready: the host's Start can be pressed"


def test_a_partnerships_table_needs_four_players_before_start_can_be_pressed() -> None:
    rules = Rules(seats=2, partnerships=True)
    three = _table(rules, 3)
    _ready(three, 1, 2)
    assert not others_ready(three.players[0]), "three players cannot fill two partnerships"
    four = _table(rules, 4)
    _ready(four, 1, 2)
    assert not others_ready(four.players[0]), "the fourth player is not ready yet"
    _ready(four, 3)
    assert others_ready(four.players[0]), "four players, the three others ready"


def test_a_practice_table_starts_once_every_seat_is_taken_by_a_ready_player() -> None:
    table = _table(Rules(seats=2), 2)
    host = table.players[0]
    _ready(table, 1)
    assert not may_start_full_table(host), "the host has not said ready"
    _ready(table, 0)
    assert may_start_full_table(host), "both seats taken and ready"
    assert not may_start_full_table(table.players[1]), "only the starter starts"
    assert everyone_ready_to_start(host)


def _one_card_round(target: int) -> ManualTable:
    """Two seats, Nerts piles of one card; seat 0 plays its ace and calls Nerts: it scores
    1 (the ace), seat 1 scores -2 (one card left in its Nerts pile)."""
    rules = Rules(seats=2, nerts_size=1, target=target)
    seeds = [
        seed_showing(rules, [], nerts_top="AS", label=f"won{target}/caller"),
        seed_showing(rules, [], label=f"won{target}/other"),
    ]
    table = ManualTable(rules, seeds)
    table.start_round()
    table.settle(0.3)
    assert not match_won(table.players[0]), "the round is being played"
    call_nerts(table)
    return table


def test_a_round_that_ends_below_the_target_is_not_a_won_match() -> None:
    table = _one_card_round(target=100)
    for replica in table.players:
        rnd = replica.current_round
        assert rnd is not None
        assert rnd.final is not None, "the round is over"
        assert rnd.final.match_winner is None
        assert not match_won(replica), "1 point of 100: the match goes on"


def test_a_round_that_brings_a_seat_to_the_target_wins_the_match() -> None:
    table = _one_card_round(target=1)
    for replica in table.players:
        assert match_won(replica), "the caller's ace reaches a target of 1"


@pytest.mark.parametrize(("seats", "players", "full"), [(2, 2, True), (3, 2, False)])
def test_a_round_began_full_when_its_players_took_every_seat(
    seats: int, players: int, full: bool
) -> None:
    # A player left out of a full round is turned away ("table full"); with a seat free it
    # sits the round out and plays the next. (Found by `tools.mutate`, seed 804.)
    table = _table(Rules(seats=seats), players)
    host = table.players[0]
    assert not round_began_full(host, 1), "no round yet"
    table.start_round()
    assert round_began_full(host, 1) is full
