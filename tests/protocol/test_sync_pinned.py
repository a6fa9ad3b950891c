"""Rules of `SyncPeer` that no other test pinned (found by `tools.mutate`): the exact size
limit, one answer's op count, the heartbeat schedule, what a heartbeat from a stranger asks
for, Lamport times that do not move forward, deps of the wrong shape, and not asking again
for an op already rejected."""

from __future__ import annotations

from collections.abc import Sequence

from nerts_p2p.game.moves import Move
from nerts_p2p.game.rules import Rules
from protocol.envelope import seal
from protocol.errors import DropReason
from protocol.messages import Batch, Request, decode, heartbeat_body
from protocol.signing import SigningKeyPair
from protocol.sync import OpRejected
from tests.protocol.test_hostile import IDS, next_op, observer
from tests.replication.table_helpers import ManualTable, seed_showing
from tools.gen_vectors import KEYS, TABLE


def test_a_datagram_of_exactly_1200_bytes_is_not_oversize_and_one_more_byte_is() -> None:
    peer = observer()
    peer.receive(b"\x00" * 1200, "net", 1.0)
    assert peer.counters[DropReason.OVERSIZE] == 0
    assert peer.counters.total == 1  # dropped, but for what it holds, not for its size
    peer.receive(b"\x00" * 1201, "net", 1.0)
    assert peer.counters[DropReason.OVERSIZE] == 1


def test_one_request_is_answered_with_at_most_64_ops() -> None:
    rules = Rules(seats=2)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"r{i}") for i in range(2)])
    table.start_round()
    mover, asker = table.players
    for _ in range(70):  # turn the stock over and over: 70 more ops of one author
        rnd = mover.current_round
        assert rnd is not None
        mover.play(Move(0, "turn") if rnd.state.seats[0].stock else Move(0, "recycle"))
    table.collect()
    table.deliver_all()
    assert asker.sync.delivered(mover.me) > 70
    asker.sync.request("mover", [(mover.me, 1, 200)], table.now + 1)
    ((_, request),) = asker.sync.outgoing()
    mover.sync.receive(request, "asker", table.now + 1)
    sent = 0
    for destination, datagram in mover.sync.outgoing():
        assert destination == "asker"
        message = decode(datagram, table=mover.sync.table)
        sent += len(message.ops) if isinstance(message, Batch) else 1
    assert sent == 64  # PROTOCOL.md: at most 64 ops per request in all


def test_a_heartbeat_is_sent_once_per_interval_however_often_the_peer_ticks() -> None:
    peer = observer()
    interval = peer.heartbeat_interval
    sent = []
    for step in range(10):
        now = 5.0 + step * interval / 4
        peer.tick(now)
        sent.append(len(peer.outgoing()))
    assert sent == [1, 0, 0, 0, 1, 0, 0, 0, 1, 0]


def test_a_heartbeat_from_a_stranger_asks_it_for_its_first_op() -> None:
    peer = observer()
    stranger = SigningKeyPair(b"\x55" * 32)
    heartbeat = seal(stranger, heartbeat_body(TABLE, stranger.key_id, 3, [], b""))
    peer.receive(heartbeat, "stranger", 1.0)
    ((destination, datagram),) = peer.outgoing()
    assert destination == "stranger"
    request = decode(datagram, table=TABLE)
    assert isinstance(request, Request)
    assert [tuple(r) for r in request.ranges] == [(stranger.key_id, 1, 1)]
    assert peer.counters[DropReason.UNKNOWN_AUTHOR] == 1


def _rejections(peer_events: Sequence[object]) -> list[tuple[DropReason, str]]:
    return [(e.reason, e.message) for e in peer_events if isinstance(e, OpRejected)]


def test_an_op_stamped_at_its_authors_previous_lamport_time_is_backdated() -> None:
    peer = observer()
    last = peer.logs[IDS["alice"]][-1]
    peer.receive(next_op("alice", lamport=last.lamport), "alice", 1.0)
    assert _rejections(peer.events()) == [
        (DropReason.BACKDATED, "its Lamport time is not after the author's previous op")
    ]


def test_a_round_op_with_deps_of_the_wrong_shape_is_rejected_not_left_waiting() -> None:
    peer = observer()
    peer.receive(next_op("alice", deps=[1]), "alice", 1.0)  # round 1 has two participants
    assert _rejections(peer.events()) == [
        (DropReason.SCHEMA, "deps must give one seq per participant of the round")
    ]


def test_a_peer_that_rejected_an_invalid_copy_asks_for_the_valid_twin() -> None:
    """Issue 9, "an invalid twin splits a peer off for good": a rejected copy of Alice's op
    is no proof against the ops Bob holds of hers (he may hold a valid op with that seq), so
    they are asked for, from the rejected seq on."""
    peer = observer()
    alice = IDS["alice"]
    have = peer.delivered(alice)
    last = peer.logs[alice][-1]
    peer.receive(next_op("alice", lamport=last.lamport), "alice", 1.0)  # rejected
    peer.events()
    peer.outgoing()
    vector = [(a, n + 3 if a == alice else n) for a, n in peer.vector()]
    bob_heartbeat = seal(KEYS["bob"], heartbeat_body(TABLE, IDS["bob"], 50, vector, b""))
    peer.receive(bob_heartbeat, "bob", 2.0)
    requests = [
        decode(d, table=TABLE)
        for _, d in peer.outgoing()
        if isinstance(decode(d, table=TABLE), Request)
    ]
    asked = [tuple(r) for q in requests for r in q.ranges if r[0] == alice]  # type: ignore[union-attr]
    assert asked == [(alice, have + 1, have + 3)]
    assert peer.delivered(alice) == have
