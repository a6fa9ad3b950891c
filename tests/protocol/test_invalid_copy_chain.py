"""An invalid copy of an op takes the ops parked behind it with it, and only for now: when
anti-entropy brings the valid op and those same ops again, in a BATCH, they are delivered
(PROTOCOL.md 5). (Found by `tools.mutate`, seed 501, `protocol/sync_delivery.py` `reject`:
the dropped ops' hashes were still taken for ops held, so the BATCH's copies were skipped
as duplicates and the author's chain stopped here for good.)"""

from __future__ import annotations

from protocol.envelope import seal
from protocol.errors import DropReason
from protocol.messages import Kind, batch_body
from protocol.sync_events import OpRejected
from tests.protocol.test_hostile import HISTORY, IDS, next_op, observer, op_of
from tools.gen_vectors import KEYS, TABLE


def test_ops_parked_behind_a_rejected_copy_are_delivered_when_a_batch_brings_them_again() -> None:
    peer = observer()
    alice = IDS["alice"]
    had = peer.delivered(alice)
    previous = peer.logs[alice][-1]
    valid = op_of(next_op("alice", payload="stuck"))
    following = op_of(
        seal(
            KEYS["alice"],
            HISTORY.body(
                "alice",
                Kind.MOVE,
                1,
                "recycle",
                seq=valid.seq + 1,
                prev=valid.hash,
                lamport=valid.lamport + 1,
                deps=[HISTORY.peers["host"].delivered(IDS["host"]), valid.seq],
            ),
        )
    )
    invalid = next_op("alice", payload="turn", lamport=previous.lamport)  # not after op n-1
    peer.receive(following.datagram(), "alice", 1.0)  # parked: it waits for op n
    peer.receive(invalid, "mallory", 1.0)
    assert [e.reason for e in peer.events() if isinstance(e, OpRejected)] == [DropReason.BACKDATED]
    assert peer.delivered(alice) == had
    # Bob's answer brings the valid op n and the op after it.
    answer = seal(KEYS["bob"], batch_body(TABLE, IDS["bob"], [valid, following]))
    peer.receive(answer, "bob", 1.1)
    assert peer.delivered(alice) == had + 2
    assert peer.logs[alice][-1].hash == following.hash


def test_a_refused_op_that_comes_again_in_a_batch_is_refused_again_not_taken_as_held() -> None:
    # The refused copy itself is not held either: relayed again, it is judged again and
    # refused for the same reason, rather than counted as a replay of an op we hold (and
    # as progress in an answer). (Seed 1201: its hash was left among those held.)
    peer = observer()
    alice = IDS["alice"]
    had = peer.delivered(alice)
    previous = peer.logs[alice][-1]
    invalid = op_of(next_op("alice", payload="turn", lamport=previous.lamport))
    for copy in range(2):
        relay = seal(KEYS["bob"], batch_body(TABLE, IDS["bob"], [invalid]))
        peer.receive(relay, "bob", 1.0 + copy)
        assert [e.reason for e in peer.events() if isinstance(e, OpRejected)] == [
            DropReason.BACKDATED
        ]
    assert peer.counters[DropReason.BACKDATED] == 2
    assert peer.counters[DropReason.REPLAYED] == 0
    assert peer.delivered(alice) == had
