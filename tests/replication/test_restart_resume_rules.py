"""When a peer restored from its store may speak again (PROTOCOL.md 14), case by case on a
three-player table driven by hand. (Found by `tools.mutate`, seeds 401 and 501,
`protocol/sync_restart.py`.)"""

from __future__ import annotations

from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import TableReplica
from protocol.codec import unpack_bounded
from protocol.envelope import seal
from protocol.messages import Heartbeat
from tests.protocol.test_anti_entropy_rules import _heartbeat, _turn
from tests.replication.table_helpers import ManualTable, seed_showing
from tests.replication.test_quiet_restart import _restored, _says


def _three_players() -> tuple[ManualTable, TableReplica, TableReplica, TableReplica]:
    rules = Rules(seats=3)
    seeds = [seed_showing(rules, [], label=f"quiet/{i}") for i in range(3)]
    table = ManualTable(rules, seeds)
    table.start_round()
    table.settle(0.5)
    first, second, old = table.players
    return table, first, second, old


def test_a_restored_peer_that_heard_everyone_stays_quiet_while_a_named_op_is_missing() -> None:
    table, first, second, old = _three_players()
    moves = _turn(first, 2)
    for datagram in moves:
        second.receive(datagram, 0, table.now)
    second.outgoing()
    restored = _restored(old)
    now = table.now + 1.0
    # Both other players are heard, and both name the two moves the store never had: the
    # restored peer has heard everyone, but it must hold what they named before it speaks.
    restored.receive(_heartbeat(second, now), 1, now)
    restored.receive(_heartbeat(first, now + 0.01), 0, now + 0.01)
    restored.tick(now + 0.02)
    assert not restored.can_author
    assert not any(isinstance(m, Heartbeat) for m in _says(restored))
    # The moves arrive (within the hold): it resumes at its next tick, with a heartbeat
    # that shows them.
    for datagram in moves:
        restored.receive(datagram, 0, now + 0.03)
    restored.tick(now + 0.04)
    assert restored.can_author
    beats = [m for m in _says(restored) if isinstance(m, Heartbeat)]
    assert beats
    assert dict(beats[0].vector)[first.me] == first.sync.delivered(first.me)


def test_a_restored_peer_that_hears_only_some_players_resumes_one_hold_after_the_first() -> None:
    table, _, second, old = _three_players()
    restored = _restored(old)
    now = table.now + 1.0
    # Only the second player is heard from (the first is silent), and it names nothing
    # the store lacks: the restored peer waits the hold (1 s) from that heartbeat, no more.
    restored.receive(_heartbeat(second, now), 1, now)
    restored.tick(now + 0.9)
    assert not restored.can_author
    assert not any(isinstance(m, Heartbeat) for m in _says(restored))
    restored.tick(now + 1.0)
    assert restored.can_author
    assert any(isinstance(m, Heartbeat) for m in _says(restored))


def test_a_restored_peer_does_not_wait_for_an_op_whose_copy_it_rejected() -> None:
    table, first, second, old = _three_players()
    (move,) = _turn(first, 1)
    second.receive(move, 0, table.now)
    second.outgoing()
    restored = _restored(old)
    now = table.now + 1.0
    # The restored peer got a copy of that op stamped no later than the one before it:
    # rejected (its seq is now "dead" here until a valid copy arrives).
    op = first.sync.logs[first.me][-1]
    body = unpack_bounded(op.body)
    assert isinstance(body, list)
    body[5] = first.sync.logs[first.me][-2].lamport
    restored.receive(seal(first.sync.key, body), 0, now)
    assert restored.sync.dead == {first.me: op.seq}
    # Both others are heard, and both name that op: nothing else is missing, so it
    # resumes at once rather than wait the hold out for a copy it called invalid.
    restored.receive(_heartbeat(second, now + 0.01), 1, now + 0.01)
    restored.receive(_heartbeat(first, now + 0.02), 0, now + 0.02)
    restored.tick(now + 0.03)
    assert restored.can_author
