"""A heartbeat acknowledges a START (PROTOCOL.md 13.3) whether it comes from its sender or
relayed in another peer's EVIDENCE (7.1): a spectator that hears the players of a round
only through the host, and holds that round's ops waiting for its START to be confirmed,
delivers them in the receive of the relay that confirms it, not at the host's next
heartbeat. (Found by `tools.mutate`, seed 15, `protocol/sync_evidence.py` `on_evidence`.)"""

from __future__ import annotations

from nerts_p2p.game.rules import Rules
from protocol.envelope import seal
from protocol.messages import Kind, evidence_body
from tests.replication.table_helpers import ManualTable, call_nerts, seed_showing, tick_together


def test_a_relayed_heartbeat_confirms_a_start_and_delivers_the_round_waiting_for_it() -> None:
    rules = Rules(seats=3, nerts_size=1, target=500)
    seeds = [
        seed_showing(rules, [], nerts_top="AS", label="relayed-ack/host"),
        *(seed_showing(rules, [], label=f"relayed-ack/{i}") for i in (1, 2)),
    ]
    table = ManualTable(rules, seeds, spectators=1)
    host, first, second, watcher = table.players
    table.start_round()
    table.settle(0.3)
    call_nerts(table)
    assert all(p.rounds[1].final is not None for p in table.players)
    # Round 2 among the players; the watcher hears none of it.
    players = [host, first, second]
    table.ready_all(players)
    host.start()
    now = tick_together(players, table.now, 0.5)
    assert all(p.sync.start_confirmed(2) for p in players)
    # The watcher is sent every op, but no heartbeat of the players: the START cannot be
    # confirmed, so the round's ops wait.
    for op in sorted((o for log in host.sync.logs.values() for o in log), key=lambda o: o.lamport):
        watcher.receive(op.datagram(), 0, now)
    assert 2 in watcher.sync.epochs
    assert not watcher.sync.start_confirmed(2)
    waiting = sum(len(q) for q in watcher.sync.pending.values())
    assert waiting > 0
    assert all(op.kind == Kind.MIX for q in watcher.sync.pending.values() for op in q.values())
    # The host relays the two players' latest heartbeats: they acknowledge the START.
    relay = seal(
        host.sync.key,
        evidence_body(
            host.sync.table, host.me, [host.sync.promises.latest[p.me] for p in (first, second)]
        ),
    )
    watcher.receive(relay, 0, now)
    assert watcher.sync.start_confirmed(2)
    assert not watcher.sync.pending
    assert watcher.sync.vector() == host.sync.vector()
