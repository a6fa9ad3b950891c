"""A departure is agreed the moment its last vote is delivered (PROTOCOL.md 13), on the
peer that casts that vote too: the voter's own DEPART settles it at once, with the event
and the new starter, not at its next heartbeat. (Found by `tools.mutate`, seed 501,
`protocol/sync.py` `SyncPeer.author`.)"""

from __future__ import annotations

from nerts_p2p.game.rules import Rules
from protocol.messages import Kind
from protocol.sync_events import DeparturesChanged
from tests.replication.table_helpers import ManualTable, exchange, seed_showing


def test_the_last_voter_sees_the_departure_it_completes_at_once() -> None:
    rules = Rules(seats=3)
    seeds = [seed_showing(rules, [], label=f"own-vote/{i}") for i in range(3)]
    table = ManualTable(rules, seeds)
    table.start_round()
    table.settle(0.3)
    host, first, last = table.players
    now = table.now + 0.1
    first.sync.author(Kind.DEPART, 1, [host.me, first.sync.delivered(host.me)])
    exchange([first, last], now)
    assert host.me not in last.sync.epochs[1].departed
    last.sync.events()
    last.sync.author(Kind.DEPART, 1, [host.me, last.sync.delivered(host.me)])
    # No tick, nothing received since: the vote it just cast is the one that settles it.
    assert host.me in last.sync.epochs[1].departed
    changed = [e for e in last.sync.events() if isinstance(e, DeparturesChanged)]
    assert [e.added for e in changed] == [(host.me,)]
    assert last.sync.starter(2) == first.me
