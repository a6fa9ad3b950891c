"""A peer restored from its store stays quiet until caught up (PROTOCOL.md 14), judged from
the first heartbeat it hears from each peer: it holds every op those name, and it has
heard every other participant of the round, or waited the hold out. Pinned step by step
on a three-player table. (Found by `tools.mutate`, seed 101, `protocol/sync_restart.py`.)"""

from __future__ import annotations

from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import TableReplica
from protocol.messages import Heartbeat, Request, decode
from tests.protocol.test_anti_entropy_rules import _heartbeat, _turn
from tests.replication.table_helpers import ManualTable, restored_from_store, seed_showing


def _restored(old: TableReplica) -> TableReplica:
    """`old` restarted from a store that kept every op it held."""
    return restored_from_store(old, "p2")


def _says(replica: TableReplica) -> list[object]:
    return [decode(d, table=replica.sync.table) for _, d in replica.outgoing()]


def test_a_restored_peer_resumes_once_it_holds_what_it_heard_of_and_heard_everyone() -> None:
    rules = Rules(seats=3)
    seeds = [seed_showing(rules, [], label=f"quiet/{i}") for i in range(3)]
    table = ManualTable(rules, seeds)
    table.start_round()
    table.settle(0.5)
    first, second, old = table.players
    # The first player moves twice; only the second player hears of it before `old` dies.
    for datagram in _turn(first, 2):
        second.receive(datagram, 0, table.now)
    second.outgoing()
    restored = _restored(old)
    assert not restored.can_author
    now = table.now + 1.0

    # The second player's heartbeat names the two moves the store never had: quiet, and
    # asking for them.
    restored.receive(_heartbeat(second, now), 1, now)
    assert not restored.can_author
    said = _says(restored)
    assert not any(isinstance(m, Heartbeat) for m in said)
    assert any(isinstance(m, Request) and first.me in [r[0] for r in m.ranges] for m in said)
    # They arrive; the first player is not heard from yet, and the hold (1 s) is not over.
    for op in first.sync.logs[first.me][-2:]:
        restored.receive(op.datagram(), 0, now + 0.01)
    assert restored.sync.delivered(first.me) == first.sync.delivered(first.me)
    restored.tick(now + 0.02)
    assert not restored.can_author
    assert not any(isinstance(m, Heartbeat) for m in _says(restored))

    # The first player's heartbeat: every other participant heard, everything held. It
    # resumes at once, and its first word is a heartbeat that shows it caught up.
    restored.receive(_heartbeat(first, now + 0.03), 0, now + 0.03)
    assert restored.can_author
    beats = [m for m in _says(restored) if isinstance(m, Heartbeat)]
    assert beats
    assert dict(beats[0].vector)[first.me] == first.sync.delivered(first.me)
