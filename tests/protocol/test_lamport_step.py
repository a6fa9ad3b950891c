"""The Lamport step is part of the wire (PROTOCOL.md 5, rule 2): an op MUST be stamped at
most 2^24 past its floor (its author's previous op, the ops its deps name, its round's
START). Another implementation holds ops to the same number, so it is pinned here as a
number, not as the constant that implements it."""

from __future__ import annotations

from protocol.envelope import seal
from protocol.errors import DropReason
from protocol.messages import PLAYER, Kind
from protocol.sync import OpDelivered, OpRejected, SyncPeer
from tests.protocol.test_hostile import IDS
from tools.gen_vectors import KEYS, TABLE, play_history

STEP = 2**24


def test_an_op_may_be_stamped_2_to_the_24_past_its_floor_and_not_one_more() -> None:
    history = play_history()
    alice, bob, host = (history.peers[n] for n in ("alice", "bob", "host"))
    # Alice's LEAVE names the OPEN and her own previous op: its floor is the later of them.
    floor = max(alice.logs[IDS["alice"]][-1].lamport, host.logs[IDS["host"]][0].lamport)
    for lamport in (floor + STEP + 1, floor + STEP):
        leave = history.body("alice", Kind.LEAVE, 0, None, lamport=lamport)
        bob.receive(seal(KEYS["alice"], leave), "alice", 1.0)
    events = bob.events()
    assert [(e.op.lamport, e.reason) for e in events if isinstance(e, OpRejected)] == [
        (floor + STEP + 1, DropReason.BACKDATED)
    ]
    assert [e.op.lamport for e in events if isinstance(e, OpDelivered)] == [floor + STEP]


def test_a_newcomer_can_join_a_table_whose_lamport_time_ran_past_2_to_the_24() -> None:
    # A member's op a whole step ahead carries the host's clock past 2^24; the host's ADMIT
    # of Mallory is stamped there. Mallory has no op of her own yet: her JOIN's floor is
    # the ADMIT it names, so she stamps it after the ADMIT (stamping it within a step of
    # nothing would put it before the ADMIT, and it could never be sent).
    history = play_history()
    alice, host = history.peers["alice"], history.peers["host"]
    floor = max(alice.logs[IDS["alice"]][-1].lamport, host.logs[IDS["host"]][0].lamport)
    ahead = history.body("alice", Kind.LEAVE, 0, None, lamport=floor + STEP)
    host.receive(seal(KEYS["alice"], ahead), "alice", 1.0)
    mallory_key = KEYS["mallory"]
    admit = history.author("host", Kind.ADMIT, 0, [mallory_key.public_key, PLAYER])
    assert admit.lamport > STEP
    mallory = SyncPeer(mallory_key, TABLE)
    for n, datagram in enumerate(history.datagrams()):
        mallory.receive(datagram, ("table", n), 2.0)
    join = mallory.author(Kind.JOIN, 0, [mallory_key.public_key, "mallory", PLAYER])
    assert admit.lamport < join.lamport <= admit.lamport + STEP
    host.receive(join.datagram(), "mallory", 2.0)
    assert mallory_key.key_id in host.members
