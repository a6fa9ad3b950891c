"""A headless player whose round began without it: "table full" only when every seat was
taken; with a seat free it sits the round out and plays the next (PROTOCOL.md 13.3: a host
voted out as it started finds its heir's round started without it)."""

from __future__ import annotations

from nerts_p2p.game.rules import Rules
from nerts_p2p.table.status import round_began_full
from tests.replication.table_helpers import ManualTable, seed_showing


def _table(rules: Rules, players: int) -> ManualTable:
    return ManualTable(rules, [seed_showing(rules, [], label=f"noseat{i}") for i in range(players)])


def test_a_player_left_out_of_a_round_with_a_free_seat_sits_it_out() -> None:
    table = _table(Rules(seats=3), 3)
    table.ready_all(table.players[:2])  # the third's READY has not reached the host
    table.players[0].start()
    table.collect()
    table.deliver_all()
    late = table.players[2]
    assert late.rounds[1].seat_of.get(late.me) is None
    assert not round_began_full(late, 1)


def test_a_player_left_out_of_a_round_with_every_seat_taken_hears_the_table_is_full() -> None:
    table = _table(Rules(seats=2), 3)
    table.start_round()  # three ready, two seats: the host seats the first two
    out = next(r for r in table.players if r.me not in r.rounds[1].seat_of)
    assert round_began_full(out, 1)
