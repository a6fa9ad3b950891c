"""Issue 9's core findings at the table: "one op at the Lamport ceiling crashes the next move"
(a replica never authors an op it cannot send, and nothing about Lamport time raises out of
play() or tick()), and the ops of an expelled author that count nowhere."""

from __future__ import annotations

from nerts_p2p.game.errors import Rejection
from nerts_p2p.game.legal import legal_moves
from nerts_p2p.game.position import state_hash
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import TableReplica
from protocol.clocks import LamportClock
from protocol.messages import (
    MAX_LAMPORT,
    Batch,
    Op,
    Request,
    decode,
)
from protocol.sync import MAX_LAMPORT_STEP
from tests.replication.table_helpers import (
    ManualTable,
    own_promise_returns,
    seed_showing,
    signed_move,
    three_at_play,
)


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
    own_promise_returns(player, MAX_LAMPORT, table.now)
    held = sync.delivered(sync.me)
    result = _a_move(player)
    assert isinstance(result, Rejection)
    assert "Lamport time" in result.message
    assert sync.delivered(sync.me) == held
    player.outgoing()
    player.tick(table.now + 1.0)
    assert player.outgoing() == []


def test_an_expelled_authors_ops_past_the_proof_are_not_pushed_at_peers_forever() -> None:
    """Issue 9 (`fuzz mutate` with order attacks): peer 0 delivered the cheat's op n and
    n+1 before the proof that it equivocated at n; peer 1 had the proof first and never takes
    n+1. Neither pushes nor asks for what counts nowhere, and their folds agree."""
    table = three_at_play("expel")
    holder, prover, cheat = table.players
    base = cheat.sync.clock.value + 1
    last = cheat.sync.logs[cheat.sync.me][-1].hash
    first = signed_move(cheat, 0, last, base)
    other = signed_move(cheat, 0, last, base + 7)
    first_hash = decode(first, table=cheat.sync.table).hash  # type: ignore[union-attr]
    after = signed_move(cheat, 1, first_hash, base + 9)
    for datagram in (first, after):
        holder.receive(datagram, "cheat", table.now)
    for datagram in (other, first):
        prover.receive(datagram, "cheat", table.now)
    holder.receive(other, "prover", table.now)
    assert cheat.me in holder.sync.expelled
    assert cheat.me in prover.sync.expelled
    assert holder.sync.delivered(cheat.me) == prover.sync.delivered(cheat.me) + 1
    holder.outgoing()
    prover.outgoing()
    for now in (table.now + 1.0, table.now + 2.0):
        for sender, receiver in ((prover, holder), (holder, prover)):
            sender.sync._next_heartbeat = 0.0
            sender.tick(now)
            for _, datagram in sender.outgoing():
                receiver.receive(datagram, "net", now)
            for _, datagram in receiver.outgoing():
                message = decode(datagram, table=cheat.sync.table)
                assert not isinstance(message, Batch | Request), message
    assert holder.sync.delivered(cheat.me) == prover.sync.delivered(cheat.me) + 1
    assert state_hash(holder.current_round.state) == state_hash(prover.current_round.state)  # type: ignore[union-attr]


def test_a_promise_one_short_of_the_ceiling_is_the_last() -> None:
    """Our own heartbeat at MAX_LAMPORT - 1 comes back: nothing can be stamped at the
    ceiling, so no heartbeat promises anything more, and a move says why it cannot be
    made. (Found by `tools.mutate`, seed 803: a heartbeat went out at the ceiling.)"""
    table = _table()
    player = table.players[1]
    own_promise_returns(player, MAX_LAMPORT - 1, table.now)
    player.outgoing()
    player.tick(table.now + 1.0)
    assert player.outgoing() == []
    refused = _a_move(player)
    assert isinstance(refused, Rejection)
    assert "Lamport time" in refused.message
