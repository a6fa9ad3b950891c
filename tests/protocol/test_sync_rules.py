"""Delivery rules of `SyncPeer` that protect honest peers from their own and others' slips."""

from __future__ import annotations

import pytest

from nerts_p2p.game.rules import Rules
from protocol.envelope import seal
from protocol.errors import DropReason, LocalProtocolError
from protocol.messages import NO_PREV, PLAYER, Kind, Request, decode, op_body, request_body
from protocol.sync import MAX_REPLY, OpDelivered, OpRejected, SyncPeer
from tests.protocol.test_hostile import HISTORY, IDS, observer, op_of
from tests.replication.table_helpers import ManualTable, seed_showing
from tools.gen_vectors import KEYS, TABLE, play_history


def test_a_spectator_authoring_a_move_is_refused_locally_and_its_chain_lives_on() -> None:
    sam = play_history().peers["sam"]
    before = sam.delivered(sam.me)
    with pytest.raises(LocalProtocolError, match="spectator"):
        sam.author(Kind.MOVE, 1, "turn")
    assert sam.outgoing() == []
    assert sam.delivered(sam.me) == before
    assert sam.me not in sam.dead
    leave = sam.author(Kind.LEAVE, 0, None)  # the seq it did not use is still free
    assert leave.seq == before + 1


def test_lobby_ops_name_only_the_open_and_their_own_previous_op() -> None:
    bob = play_history().peers["bob"]
    op = bob.author(Kind.LEAVE, 0, None)
    assert {author for author, _ in op.lobby_deps} == {IDS["host"], IDS["bob"]}


def test_a_join_that_names_nothing_waits_for_the_tables_open_then_is_not_admitted() -> None:
    mallory = KEYS["mallory"]
    bare_join = seal(
        mallory,
        op_body(
            Kind.JOIN,
            TABLE,
            mallory.key_id,
            1,
            NO_PREV,
            1,
            0,
            [],
            [mallory.public_key, "mallory", PLAYER],
        ),
    )
    peer = SyncPeer(KEYS["sam"], TABLE)
    peer.receive(bare_join, "net", 0.0)
    assert peer.events() == []
    opener = HISTORY.datagrams(1)[0]
    peer.receive(opener, "net", 0.0)
    events = peer.events()
    kinds = [e.op.kind for e in events if isinstance(e, OpDelivered)]
    assert kinds == [Kind.OPEN]
    # Its deps cover no ADMIT of its key by the host (PROTOCOL.md 17): never a member.
    assert [(e.op.kind, e.reason) for e in events if isinstance(e, OpRejected)] == [
        (Kind.JOIN, DropReason.NOT_A_MEMBER)
    ]
    assert mallory.key_id not in peer.members


def test_a_round_op_stamped_before_its_round_started_is_backdated() -> None:
    rules = Rules(seats=2)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"b{i}") for i in range(2)])
    host, other = table.players
    for replica in table.players:
        replica.ready()
    table.collect()
    table.deliver_all()
    host.start()  # not delivered to the other player: it authors nothing after START
    log = host.sync.epoch(1)
    assert log is not None
    start = log.start
    sync = other.sync
    last = sync.logs[sync.me][-1]
    assert last.lamport < start.lamport
    deps = [sync.delivered(p) for p in log.participants]
    body = op_body(
        Kind.MOVE, sync.table, sync.me, last.seq + 1, last.hash, start.lamport, 1, deps, "turn"
    )
    host.sync.receive(seal(sync.key, body), 1, 1.0)
    rejections = [e for e in host.sync.events() if isinstance(e, OpRejected)]
    assert [(e.reason, e.message) for e in rejections] == [
        (DropReason.BACKDATED, "its Lamport time is before its round started")
    ]


def test_one_request_is_answered_with_at_most_a_bounded_number_of_ops() -> None:
    peer = observer()
    ranges = [(author, 1, 10_000) for author in IDS.values()] * 3
    request = seal(KEYS["bob"], request_body(TABLE, IDS["bob"], ranges[:16]))
    peer.receive(request, "bob", 1.0)
    sent = 0
    for _, datagram in peer.outgoing():
        message = decode(datagram, table=TABLE)
        assert not isinstance(message, Request)
        sent += len(getattr(message, "ops", [None]))
    assert 0 < sent <= MAX_REPLY


def test_an_op_backdated_only_against_an_equivocated_op_is_judged_again() -> None:
    # Alice equivocates at her next seq: version A stamped high, version B stamped low. Bob
    # saw B and stamps his op just above it. A peer that holds A calls Bob's op backdated;
    # once it learns of B (and expels Alice), it judges Bob's op again and delivers it.
    history = play_history()
    base = history.peers["alice"].clock.value
    high = seal(KEYS["alice"], history.body("alice", Kind.MOVE, 1, "turn", lamport=base + 50))
    low = seal(KEYS["alice"], history.body("alice", Kind.MOVE, 1, "stuck", lamport=base + 1))
    seq = op_of(low).seq
    body = history.body(
        "bob", Kind.READY, 0, [2, b"\x01" * 32, [], bytes(32), bytes(104)], lamport=base + 2
    )
    deps = body[7]
    assert isinstance(deps, list)
    body[7] = sorted([*deps, [IDS["alice"], seq]])
    bob_ready = seal(KEYS["bob"], body)
    peer = observer()
    peer.receive(high, "alice", 1.0)
    peer.receive(bob_ready, "bob", 1.0)
    first = peer.events()
    assert [e.reason for e in first if isinstance(e, OpRejected)] == [DropReason.BACKDATED]
    peer.receive(low, "bob", 1.0)  # the other version: equivocation
    later = peer.events()
    assert any(isinstance(e, OpDelivered) and e.op.author == IDS["bob"] for e in later)
    assert IDS["alice"] in peer.expelled
