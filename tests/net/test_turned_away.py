"""A joiner turned away from a full table (joiners racing for its last seats): it says
goodbye for itself and its unseated bots; a bot of its that did get a seat stays, served by
its process to the match's end (a table whose seats went to two such bots used to wait on
them, their process gone, until it gave up)."""

from __future__ import annotations

from types import SimpleNamespace

import trio

from client.netplay import Printer, _Watch, _watch_events
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import GameEvent, RoundStarted, TableReplica
from tests.replication.table_helpers import ManualTable, seed_showing


def _four_for_three_seats() -> ManualTable:
    """A 3-seat table with four players at it; the host starts round 1 with the first
    three, so the fourth (who joined before) gets no seat."""
    rules = Rules(seats=3)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"t{i}") for i in range(4)])
    table.ready_all(table.players[:3])
    table.players[0].start()
    table.collect()
    table.deliver_all()
    return table


class _Peer:
    """One peer of the joiner's process, as `_watch_events` sees it: what it was told."""

    def __init__(self, replica: TableReplica) -> None:
        self.node = SimpleNamespace(replica=replica, apply_intent=self.apply_intent)
        self.store = None
        self.intents: list[object] = []

    def apply_intent(self, intent: object) -> None:
        self.intents.append(intent)


async def _watched(table: ManualTable, household: list[_Peer]) -> _Watch:
    we = household[0].node.replica
    send, receive = trio.open_memory_channel[GameEvent](64)
    for event in table.events[table.players.index(we)]:
        send.send_nowait(event)
    send.close()
    watch = _Watch(Printer(True), "t")
    node = SimpleNamespace(replica=we, events=receive)
    await _watch_events(node, household, watch, SimpleNamespace(headless=True))  # type: ignore[arg-type]
    return watch


async def test_a_joiner_turned_away_keeps_its_seated_bot_at_the_table() -> None:
    table = _four_for_three_seats()
    we, seated_bot = table.players[3], table.players[2]
    assert (we.seat, seated_bot.seat) == (None, 2)
    assert RoundStarted(round=1, seat=None) in table.events[3]
    household = [_Peer(we), _Peer(seated_bot)]
    watch = await _watched(table, household)
    # The command goes on (no error yet): its bot is a player of the round.
    assert watch.error is None
    assert watch.said_last == (
        "table full: round 1 started without a seat for us; our bot p2 played on to the match's end"
    )
    assert [type(i).__name__ for i in household[0].intents] == ["Leave"]  # we say goodbye
    assert household[1].intents == [], "the seated bot stays"


async def test_a_joiner_turned_away_with_no_seated_bot_stops_saying_table_full() -> None:
    table = _four_for_three_seats()
    household = [_Peer(table.players[3])]
    watch = await _watched(table, household)
    assert watch.error == "table full: round 1 started without a seat for us"
    assert watch.said_last is None
    assert household[0].intents == []  # the command's own ending says goodbye (finally)
