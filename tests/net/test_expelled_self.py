"""A peer whose key signed two different ops for one place in its chain (a copy of its data
dir playing elsewhere) is thrown out of the table, and it is told so in words: it used to
play on counting for nothing and hang at the match's end, silent."""

from __future__ import annotations

from types import SimpleNamespace

import trio

from client.netplay import Printer, _Watch, _watch_events
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import GameEvent, PeerExpelled
from protocol.envelope import seal
from tests.replication.table_helpers import ManualTable, ready_and_its_twin, seed_showing


def _clone_signs_our_ready_again() -> tuple[ManualTable, list[GameEvent]]:
    rules = Rules(seats=3)
    seeds = [seed_showing(rules, [], label=f"x{i}", stuck=True) for i in range(3)]
    table = ManualTable(rules, seeds)
    we = table.players[2]
    _, twin = ready_and_its_twin(table, rules, seeds, 2)
    we.receive(seal(we.sync.key, twin), 0, 0.0)  # the clone's op, signed with our key
    return table, we.events()


def test_a_peer_learns_it_was_thrown_out_for_two_ops_signed_with_its_key() -> None:
    table, events = _clone_signs_our_ready_again()
    we = table.players[2]
    assert [e.author for e in events if isinstance(e, PeerExpelled)] == [we.me]


async def test_the_command_stops_in_words_when_its_own_peer_is_thrown_out() -> None:
    table, events = _clone_signs_our_ready_again()
    we = table.players[2]
    send, receive = trio.open_memory_channel[GameEvent](10)
    watch = _Watch(Printer(True), "t")
    node = SimpleNamespace(replica=we, events=receive)
    for event in events:
        send.send_nowait(event)
    send.close()
    household = [SimpleNamespace(node=node, store=None)]  # this process: our peer alone
    await _watch_events(node, household, watch, None)  # type: ignore[arg-type]
    assert watch.error is not None
    assert "thrown out of the table" in watch.error
    assert "copy of this data dir" in watch.error
