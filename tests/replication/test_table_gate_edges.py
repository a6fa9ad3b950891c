"""The table's receive gate (`nerts_p2p/table/gate.py`) and the rules on the wire
(`nerts_p2p/table/wire.py`) at their edges: how many players a START may put on one seat,
and rules pairs that are not pairs."""

from __future__ import annotations

import re

import pytest

from nerts_p2p.game.errors import RulesError
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.gate import seating_problem
from nerts_p2p.table.replica import rules_to_wire
from nerts_p2p.table.wire import rules_from_wire
from protocol.errors import LocalProtocolError
from protocol.messages import Kind

from .table_helpers import ManualTable, fixed_randomness


def _ready_table(rules: Rules, players: int) -> ManualTable:
    seeds = [fixed_randomness(bytes(32), f"gate{i}")(32) for i in range(players)]
    table = ManualTable(rules, seeds)
    for player in table.players:
        player.ready()
    table.collect()
    table.deliver_all()
    return table


@pytest.mark.parametrize(
    ("rules", "seats", "players_per_seat"),
    [
        (Rules(seats=2, partnerships=True), [0, 0, 0, 1], 2),
        # Three players at a table of four, seated at the two seats they fill.
        (Rules(seats=4), [0, 1, 1], 1),
    ],
)
def test_a_start_that_puts_one_player_too_many_on_a_seat_is_refused(
    rules: Rules, seats: list[int], players_per_seat: int
) -> None:
    table = _ready_table(rules, len(seats))
    host = table.players[0]
    players = host.ready_players(1)
    assert len(players) == len(seats)
    filled = len(set(seats))
    start_rules = rules_to_wire(Rules.from_dict({**rules.to_dict(), "seats": filled}))
    words = f"the START puts more than {players_per_seat} player(s) on a seat"
    # Every seat is taken, one of them by one player too many: the gate refuses it (the
    # host's own gate refuses to sign it, and every receiver's the same way).
    with pytest.raises(LocalProtocolError, match=re.escape(words)):
        host.sync.author(Kind.START, 1, [players, seats, start_rules])
    assert seating_problem(Rules.from_dict({**rules.to_dict(), "seats": filled}), seats) == words
    assert host.current_round is None


def test_a_start_that_seats_each_partnership_as_a_pair_is_accepted() -> None:
    rules = Rules(seats=2, partnerships=True)
    assert seating_problem(rules, [0, 1, 0, 1]) is None
    assert seating_problem(rules, [1, 1, 0, 0]) is None
    assert seating_problem(rules, [0, 1, 1]) is None, "a partner may be missing (odd player)"


@pytest.mark.parametrize(
    "wire",
    [
        [["seats", 2, 3]],
        [["seats", 2], ["draw"]],
        [["seats", 2], 5],
        [["seats", 2], "draw"],
        [["seats", 2], {"draw": 1}],
        [[3, 2]],
    ],
)
def test_rules_entries_that_are_not_name_value_pairs_are_refused_in_plain_words(
    wire: object,
) -> None:
    with pytest.raises(RulesError, match=re.escape("each rule is a [name, value] pair")):
        rules_from_wire(wire)
