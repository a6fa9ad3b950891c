"""A heartbeat's claim of its sender's own ops counts only up to the sender's expulsion: the
ops from its equivocation on are neither asked for nor awaited (`counted`), so a claim
that only they would meet holds back no sign of life. (Found by `tools.mutate`, seed 703,
`protocol/sync_liveness.py`.)"""

from __future__ import annotations

from collections.abc import Sequence

from protocol.envelope import seal
from protocol.messages import heartbeat_body
from tests.protocol.test_hostile import IDS, next_op, observer
from tools.gen_vectors import KEYS, TABLE


def _heartbeat(name: str, lamport: int, vector: Sequence[tuple[bytes, int]]) -> bytes:
    return seal(KEYS[name], heartbeat_body(TABLE, IDS[name], lamport, sorted(vector), b""))


def test_a_claim_of_ops_past_the_senders_expulsion_holds_back_no_sign_of_life() -> None:
    peer = observer()
    alice = IDS["alice"]
    last = peer.logs[alice][-1]
    vector = dict(peer.vector())
    vector[alice] = last.seq + 2  # two ops of hers we do not hold yet: a claim from 1.0
    peer.receive(_heartbeat("alice", last.lamport + 10, list(vector.items())), "alice", 1.0)
    peer.receive(_heartbeat("alice", last.lamport + 11, list(vector.items())), "alice", 1.2)
    assert peer.signs_of_life()[alice] == 1.0, "unmet, the claim holds her signs back"
    # Two versions of her next op: expelled from it (the first version is delivered).
    peer.receive(next_op("alice", payload="stuck"), "alice", 1.5)
    peer.receive(next_op("alice", payload="turn"), "alice", 1.5)
    assert peer.expelled == {alice: last.seq + 1}
    # Her claim can no longer be met (her ops from the expulsion on never count), and it
    # no longer holds anything back: her heartbeat at 4.0 is a sign of life at 4.0.
    peer.receive(_heartbeat("alice", last.lamport + 20, list(vector.items())), "alice", 4.0)
    assert peer.signs_of_life()[alice] == 4.0


def test_a_claim_met_by_everything_but_the_expelled_ops_holds_back_nothing() -> None:
    # Her expulsion is found while both versions of her op wait for the op before it, so
    # once that one is delivered, what she can still be owed is exactly what is delivered.
    peer = observer()
    alice = IDS["alice"]
    last = peer.logs[alice][-1]
    vector = dict(peer.vector())
    vector[alice] = last.seq + 3
    peer.receive(_heartbeat("alice", last.lamport + 10, list(vector.items())), "alice", 1.0)
    assert peer.signs_of_life()[alice] == 1.0
    for payload in ("stuck", "turn"):
        peer.receive(
            next_op("alice", seq=last.seq + 2, prev=b"\x01" * 16, payload=payload), "x", 1.5
        )
    assert peer.expelled == {alice: last.seq + 2}
    peer.receive(next_op("alice", payload="stuck"), "alice", 2.0)
    assert peer.delivered(alice) == last.seq + 1
    peer.receive(_heartbeat("alice", last.lamport + 20, list(vector.items())), "alice", 4.0)
    assert peer.signs_of_life()[alice] == 4.0
