"""Issue 9, "one op at the Lamport ceiling crashes the next move": a replica never authors an
op it cannot send, and nothing about Lamport time raises out of play() or tick()."""

from __future__ import annotations

from nerts_p2p.game.errors import Rejection
from nerts_p2p.game.legal import legal_moves
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import TableReplica
from protocol.clocks import LamportClock
from protocol.envelope import seal
from protocol.messages import MAX_LAMPORT, Op, heartbeat_body
from protocol.sync import MAX_LAMPORT_STEP
from tests.replication.table_helpers import ManualTable, seed_showing


def _table() -> ManualTable:
    rules = Rules(seats=2)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"ceiling{i}") for i in range(2)])
    table.start_round()
    table.settle(0.5)
    return table


def _a_move(player: TableReplica) -> object:
    rnd = player.current_round
    assert rnd is not None
    assert player.seat is not None
    return player.play(legal_moves(rnd.state, player.seat)[0])


def test_one_op_at_the_lamport_ceiling_does_not_crash_the_next_move() -> None:
    """A clock at the ceiling (it heard an op stamped far ahead that its move does not name)
    still stamps the move within a step of what it names: sent, and delivered everywhere."""
    table = _table()
    player, other = table.players
    latest = max(op.lamport for log in player.sync.logs.values() for op in log)
    player.sync.clock = LamportClock(MAX_LAMPORT)
    op = _a_move(player)
    assert isinstance(op, Op)
    assert latest < op.lamport <= latest + MAX_LAMPORT_STEP
    table.collect()
    table.deliver_all()
    assert other.sync.vector() == player.sync.vector()
    player.tick(table.now + 1.0)  # raises nothing either


def test_a_spent_lamport_time_refuses_the_move_and_raises_nothing() -> None:
    """Our own heartbeat stamped at the ceiling comes back (a promise we made): nothing can
    be stamped after it. play() says so, tick() sends no heartbeat, neither raises."""
    table = _table()
    player = table.players[1]
    sync = player.sync
    vector = sync.vector()
    spent = seal(sync.key, heartbeat_body(sync.table, sync.me, MAX_LAMPORT, vector, b""))
    player.receive(spent, "relay", table.now)
    held = sync.delivered(sync.me)
    result = _a_move(player)
    assert isinstance(result, Rejection)
    assert "Lamport time" in result.message
    assert sync.delivered(sync.me) == held
    player.outgoing()
    player.tick(table.now + 1.0)
    assert player.outgoing() == []
