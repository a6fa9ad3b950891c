"""The Lamport step is part of the wire (PROTOCOL.md 5, rule 2): an op MUST be stamped at
most 2^24 past its floor (its author's previous op, the ops its deps name, its round's
START). Another implementation holds ops to the same number, so it is pinned here as a
number, not as the constant that implements it."""

from __future__ import annotations

from protocol.envelope import seal
from protocol.errors import DropReason
from protocol.messages import Kind
from protocol.sync import OpDelivered, OpRejected
from tests.protocol.test_hostile import IDS
from tools.gen_vectors import KEYS, play_history

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
