"""What a heartbeat makes its receiver send: ops pushed only once they have settled, a
divergence probe not repeated while it stands, and ops packed into BATCH datagrams up to
their exact size bound. (Found by `tools.mutate`, seed 603,
`protocol/sync_heartbeats.py` and `protocol/sync_requests.py`.)"""

from __future__ import annotations

import pytest

from protocol.messages import Batch, Heartbeat, Kind, Op, Request, decode, op_body, seal_op
from protocol.signing import SigningKeyPair
from protocol.sync import SyncPeer
from protocol.sync_limits import MAX_PUSH
from protocol.sync_requests import send_ops
from tests.protocol.test_anti_entropy_rules import _asked, _heartbeat, _sent, _table, _turn
from tests.protocol.test_divergence_probe import _apart, _beat
from tools.gen_vectors import TABLE, play_history


def _pushed_on_heartbeat(sender: SyncPeer, receiver: SyncPeer, now: float) -> int:
    """`sender` ticks and its heartbeat reaches `receiver`: the ops `receiver` sends back."""
    sender.tick(now)
    for _, datagram in sender.outgoing():
        if isinstance(decode(datagram, table=TABLE), Heartbeat):
            receiver.receive(datagram, "sam", now)
    ops = 0
    for destination, datagram in receiver.outgoing():
        message = decode(datagram, table=TABLE)
        assert destination == "sam"
        ops += len(message.ops) if isinstance(message, Batch) else isinstance(message, Op)
    return ops


def test_an_op_is_pushed_to_a_peer_that_lacks_it_only_once_held_for_a_heartbeat_interval() -> None:
    # Bob delivers Alice's new op at 10.0; Sam has not got it yet (it is most likely on its
    # way to him too). Sam's heartbeat before Bob has held it for one of Bob's heartbeat
    # intervals gets no push; his heartbeat at that interval exactly does.
    history = play_history()
    alice, bob, sam = history.peers["alice"], history.peers["bob"], history.peers["sam"]
    bob.heartbeat_interval = 0.25  # a binary fraction: 10.25 - 0.25 is 10.0 exactly
    for peer in (alice, bob, sam):
        peer.outgoing()
    alice.author(Kind.LEAVE, 0, None)
    for _, datagram in alice.outgoing():
        bob.receive(datagram, "alice", 10.0)
    bob.outgoing()
    assert _pushed_on_heartbeat(sam, bob, 10.125) == 0
    assert _pushed_on_heartbeat(sam, bob, 10.25) == 1


def test_a_standing_probe_is_not_repeated_when_the_vector_moves_on() -> None:
    # A mismatch is probed once: a request for the sender's latest ops, which it answers.
    # The table then moves on and the folds still differ: while the probe stands and its
    # answer has not had its retry time to come, nothing more is asked and nothing
    # reported; at the retry time the mismatch is a divergence. (Times past PROBE_FOR, as
    # at a real table.)
    ours, theirs = _apart()
    ours.request_retry = 0.25
    theirs.tick(100.0)
    for _, datagram in theirs.outgoing():
        ours.receive(datagram, "bob", 100.0)
    probe = [d for _, d in ours.outgoing() if isinstance(decode(d, table=TABLE), Request)]
    assert len(probe) == 1
    theirs.receive(probe[0], "alice", 100.0)
    answer = theirs.outgoing()
    assert answer
    for _, datagram in answer:
        ours.receive(datagram, "bob", 100.03125)
    assert ours.outgoing() == []
    ours.author(Kind.MOVE, 1, "turn +5H+7C+9D")
    for _, datagram in ours.outgoing():
        theirs.receive(datagram, "alice", 100.0625)
    ours.set_state_hash(b"A" * 16)
    theirs.set_state_hash(b"B" * 16)
    assert _beat(theirs, ours, 100.125) == (0, 0)
    assert _beat(theirs, ours, 100.25) == (0, 1)


_PACKER = SigningKeyPair(b"\x42" * 32)


def _start_of_body_size(size: int) -> Op:
    """A START whose body is exactly `size` bytes (925 to 940), padded with rules."""
    rules: list[list[object]] = [[f"rule{i:02d}" + "x" * 18, i] for i in range(31)]
    rules.append(["p" * (size - 914), 1])
    op = seal_op(
        _PACKER,
        op_body(
            Kind.START,
            TABLE,
            _PACKER.key_id,
            2,
            bytes(16),
            5,
            1,
            [1, 1],
            [[_PACKER.key_id, b"\x01" * 8], [0, 1], rules],
        ),
    )
    assert len(op.body) == size
    return op


@pytest.mark.parametrize(("body_size", "in_a_batch"), [(928, True), (929, False)])
def test_an_op_shares_a_batch_up_to_1000_bytes_with_its_signature_and_framing(
    body_size: int, in_a_batch: bool
) -> None:
    # An op costs its body, its 64-byte signature and 8 bytes of framing in a BATCH, which
    # packs at most 1000 bytes of them (the datagram stays under 1200); an op that alone
    # costs more goes in its own envelope.
    peer = SyncPeer(SigningKeyPair(b"\x43" * 32), TABLE)
    op = _start_of_body_size(body_size)
    send_ops(peer, "bob", [op])
    ((destination, datagram),) = peer.outgoing()
    assert destination == "bob"
    message = decode(datagram, table=TABLE)
    if in_a_batch:
        assert isinstance(message, Batch)
        assert [body for body, _ in message.ops] == [op.body]
    else:
        assert isinstance(message, Op)
        assert message.body == op.body


def test_an_op_authored_after_a_tick_is_pushed_only_once_held_for_a_heartbeat_interval() -> None:
    # The clock a peer reads is the time its shell last gave it, by a datagram or a tick:
    # Alice hears nothing for ten seconds, ticks at 10.0 and then authors. Her op is held
    # since 10.0, not since the last datagram she received, so Sam's heartbeat at 10.125
    # (it is most likely still on its way to him) draws no push, and his next one does.
    history = play_history()
    alice, sam = history.peers["alice"], history.peers["sam"]
    alice.heartbeat_interval = 0.25
    alice.tick(10.0)
    alice.author(Kind.LEAVE, 0, None)
    alice.outgoing()
    sam.outgoing()
    assert _pushed_on_heartbeat(sam, alice, 10.125) == 0
    assert _pushed_on_heartbeat(sam, alice, 10.25) == 1


def test_a_peer_far_behind_gets_a_full_push_and_our_heartbeat_so_it_asks_for_the_rest() -> None:
    # The watcher has missed 40 of the mover's ops, and its heartbeat reaches the mover:
    # the mover pushes MAX_PUSH of them and then, to the watcher alone, its latest
    # heartbeat again, so the watcher asks for the other 8 at once rather than at the
    # mover's next heartbeat. (Seed 15: the heartbeat was never sent again.)
    table = _table()
    mover, watcher = table.players
    missed = _turn(mover, MAX_PUSH + 8)
    now = table.now + 1.0
    _heartbeat(mover, now)  # heard by nobody: the watcher knows nothing of the 40
    mover.receive(_heartbeat(watcher, now), "watcher", now)
    sent = mover.outgoing()
    assert {destination for destination, _ in sent} == {"watcher"}
    messages = [decode(datagram, table=mover.sync.table) for _, datagram in sent]
    assert sum(len(m.ops) for m in messages if isinstance(m, Batch)) == MAX_PUSH
    assert [m.sender for m in messages if isinstance(m, Heartbeat)] == [mover.me]
    before = watcher.sync.delivered(mover.me)
    for _, datagram in sent:
        watcher.receive(datagram, "mover", now)
    assert watcher.sync.delivered(mover.me) == before + MAX_PUSH
    assert _asked(_sent(watcher), mover.me) == [(before + MAX_PUSH + 1, before + len(missed))]
