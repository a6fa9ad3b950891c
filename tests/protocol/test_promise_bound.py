"""The promises a peer keeps per author are bounded, but the latest heartbeat's is never
pushed out before its op arrives (PROTOCOL.md 7): it raised the author's horizon, and an op
stamped below it would reorder what was already stable. (Found by `tools.mutate`, seed
501, `protocol/sync_evidence.py`: the relay shortcut's survivor showed a liar could flood
that promise out of `PromiseBook` with heartbeats stamped earlier naming more of its ops.)"""

from __future__ import annotations

from protocol.envelope import seal
from protocol.errors import DropReason
from protocol.messages import heartbeat_body
from tests.protocol.test_hostile import IDS, next_op, observer
from tools.gen_vectors import KEYS, TABLE


def test_heartbeats_stamped_earlier_cannot_push_out_the_latest_promise_unchecked() -> None:
    peer = observer()
    alice = IDS["alice"]
    last = peer.logs[alice][-1]
    held = dict(peer.vector())
    # Alice's latest heartbeat: her next op is to be stamped after last + 100.
    promise = heartbeat_body(TABLE, alice, last.lamport + 100, sorted(held.items()), b"")
    peer.receive(seal(KEYS["alice"], promise), "alice", 1.0)
    # Then eight heartbeats stamped earlier, each naming more ops of hers than we hold.
    for more in range(1, 9):
        vector = {**held, alice: last.seq + more}
        body = heartbeat_body(TABLE, alice, last.lamport + 10 + more, sorted(vector.items()), b"")
        peer.receive(seal(KEYS["alice"], body), "alice", 1.0)
    # Her next op is stamped below the latest promise: the lie is caught all the same.
    peer.receive(next_op("alice", lamport=last.lamport + 50), "alice", 1.1)
    assert peer.delivered(alice) == last.seq + 1
    assert peer.expelled.get(alice) == last.seq + 1
    assert peer.counters[DropReason.BROKEN_PROMISE] == 1


def test_an_op_waiting_on_a_liars_later_op_is_delivered_the_moment_the_lie_is_proved() -> None:
    # Alice's next op breaks a promise that has not arrived yet; the host's next op names
    # one more of hers, which never comes, so it waits. The promise arrives: Alice is
    # expelled from the lying op on, nobody waits for her ops from there, and the host's
    # op is delivered in that same receive. (Seed 1201: without the delivery pass after
    # the expulsion it waited for whatever datagram came next.)
    peer = observer()
    host, alice = IDS["host"], IDS["alice"]
    last = peer.logs[alice][-1]
    promise = heartbeat_body(TABLE, alice, last.lamport + 10, peer.vector(), b"")
    peer.receive(next_op("alice", lamport=last.lamport + 5), "alice", 1.0)
    had = peer.delivered(host)
    peer.receive(next_op("host", deps=[had, last.seq + 2]), "host", 1.1)
    assert peer.delivered(host) == had  # it waits for Alice's op last.seq + 2
    peer.receive(seal(KEYS["alice"], promise), "alice", 1.2)
    assert peer.expelled.get(alice) == last.seq + 1
    assert peer.delivered(host) == had + 1


def test_a_heartbeat_naming_none_of_its_senders_ops_is_held_against_its_first_op() -> None:
    # Alice signs a heartbeat that names none of her own ops, stamped at her first op's
    # time: it promises that her first op comes later. We hold that op and more, so the
    # promise is judged at once, against op 1 (not op 2, stamped later, which keeps it):
    # she is expelled from her first op. (Found by `tools.mutate`, seed 20: a default of 1
    # for an unnamed author judged the promise against her second op.)
    peer = observer()
    alice = IDS["alice"]
    ops = peer.logs[alice]
    assert len(ops) >= 2
    assert ops[1].lamport > ops[0].lamport
    held = [(author, seq) for author, seq in peer.vector() if author != alice]
    promise = heartbeat_body(TABLE, alice, ops[0].lamport, sorted(held), b"")
    peer.receive(seal(KEYS["alice"], promise), "alice", 1.0)
    assert peer.expelled.get(alice) == 1
    assert peer.counters[DropReason.BROKEN_PROMISE] == 1
