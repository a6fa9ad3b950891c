"""What counts as a sign of life, and what a heartbeat releases or brings: a replayed
heartbeat shows nothing new, one stamped 0 (the schema's least) is still news, a restarted
peer is released by the heartbeat that completes its conditions, and a liar's proof is
served with its ops. (Found by `tools.mutate`, seed 604, `protocol/sync_evidence.py`,
`protocol/sync_restart.py`, `protocol/sync_requests.py`.)"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from protocol import sync_requests
from protocol.envelope import seal
from protocol.messages import Batch, Evidence, Op, decode, decode_op, heartbeat_body, request_body
from protocol.sync import SyncPeer
from tests.protocol.test_hostile import HISTORY, IDS, next_op, observer
from tools.gen_vectors import KEYS, TABLE


def _heartbeat(name: str, lamport: int, vector: Sequence[tuple[bytes, int]]) -> bytes:
    return seal(KEYS[name], heartbeat_body(TABLE, IDS[name], lamport, sorted(vector), b""))


def test_a_replayed_heartbeat_is_no_new_sign_of_life() -> None:
    # A LAN may deliver a datagram twice, and anyone can replay one: Alice's heartbeat
    # heard again at 5.0 says nothing about her at 5.0.
    peer = observer()
    alice = IDS["alice"]
    heartbeat = _heartbeat("alice", peer.logs[alice][-1].lamport + 1, peer.vector())
    peer.receive(heartbeat, "alice", 1.0)
    assert peer.signs_of_life()[alice] == 1.0
    peer.receive(heartbeat, "alice", 5.0)
    assert peer.signs_of_life()[alice] == 1.0


def test_a_first_heartbeat_stamped_zero_is_a_sign_of_life() -> None:
    peer = observer()
    alice = IDS["alice"]
    before = peer.signs_of_life()[alice]
    assert before < 3.0
    peer.receive(_heartbeat("alice", 0, peer.vector()), "alice", 3.0)
    assert peer.signs_of_life()[alice] == 3.0


def test_a_restarted_peer_is_released_by_the_heartbeat_that_completes_its_conditions() -> None:
    # Bob restarted without his log (PROTOCOL.md 14): the table shows him his chain and
    # his own last heartbeat (from before the crash) at 1.0; his hold of a second runs out,
    # and the first heartbeat after it releases him at once, not at his next tick.
    bob = SyncPeer(KEYS["bob"], TABLE)
    bob.quarantine(hold=1.0)
    for i, datagram in enumerate(HISTORY.datagrams()):
        bob.receive(datagram, ("table", i), 1.0)
    vector = bob.vector()
    bob.receive(_heartbeat("bob", 40, vector), "echo", 1.0)
    assert bob.quarantined is not None  # held for a second from that first heartbeat
    bob.receive(_heartbeat("alice", 41, vector), "alice", 2.0)
    assert bob.quarantined is None


@pytest.mark.parametrize("split", [False, True])
def test_a_liars_proof_is_served_with_its_ops(split: bool) -> None:
    # Alice broke the promise of her heartbeat (her next op stamped below it): expelled
    # from that op. A peer asked for her ops serves those that count and the proof, the op
    # and the heartbeat it broke, so the asker reaches the same verdict: once, though the
    # request names her in two ranges.
    peer = observer()
    alice = IDS["alice"]
    last = peer.logs[alice][-1]
    promise = _heartbeat("alice", last.lamport + 100, peer.vector())
    peer.receive(promise, "alice", 1.0)
    lie = next_op("alice", lamport=last.lamport + 50)
    peer.receive(lie, "alice", 1.1)
    assert peer.expelled == {alice: last.seq + 1}
    peer.outgoing()
    ranges = [(alice, 1, 2), (alice, 3, last.seq + 9)] if split else [(alice, 1, last.seq + 9)]
    peer.receive(
        seal(KEYS["bob"], request_body(TABLE, IDS["bob"], ranges)),
        "bob",
        2.0,
    )
    ops: list[Op] = []
    heartbeats: list[bytes] = []
    for destination, datagram in peer.outgoing():
        assert destination == "bob"
        message = decode(datagram, table=TABLE)
        if isinstance(message, Batch):
            ops += [decode_op(body, signature, table=TABLE) for body, signature in message.ops]
        elif isinstance(message, Op):
            ops.append(message)
        elif isinstance(message, Evidence):
            heartbeats += [body for body, _ in message.heartbeats]
    assert sorted(op.seq for op in ops) == list(range(1, last.seq + 2))  # each op once
    assert [op.body for op in ops if op.seq == last.seq + 1] == [decode(lie, table=TABLE).body]
    assert heartbeats == [decode(promise, table=TABLE).body]


def test_an_answer_with_a_liars_proof_still_holds_at_most_max_reply_ops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The proof takes its place in the one answer's budget: a request, whose source could
    # be forged, never brings back more than MAX_REPLY ops (4 here, to see it on a short
    # history), evidence included.
    monkeypatch.setattr(sync_requests, "MAX_REPLY", 4)
    peer = observer()
    alice = IDS["alice"]
    last = peer.logs[alice][-1]
    peer.receive(_heartbeat("alice", last.lamport + 100, peer.vector()), "alice", 1.0)
    peer.receive(next_op("alice", lamport=last.lamport + 50), "alice", 1.1)
    assert peer.expelled == {alice: last.seq + 1}
    peer.outgoing()
    ranges = [(author, 1, seq) for author, seq in peer.vector()]
    peer.receive(seal(KEYS["bob"], request_body(TABLE, IDS["bob"], ranges)), "bob", 2.0)
    served = 0
    for _, datagram in peer.outgoing():
        message = decode(datagram, table=TABLE)
        if isinstance(message, Batch):
            served += len(message.ops)
        elif isinstance(message, Op):
            served += 1
    assert served == 4
