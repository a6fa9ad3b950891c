"""What an expulsion changes at its very edge: the op the author was expelled at (deps
on it are not waited for; its last honest op before it is still served), and an op judged
again after an expulsion (judged once more, not every time the author is expelled again).
(Found by `tools.mutate`, seed 603, `protocol/sync_delivery.py`, `protocol/sync_requests.py`,
`protocol/sync_evidence.py`.)"""

from __future__ import annotations

from protocol.codec import pack
from protocol.envelope import PROTOCOL_VERSION, seal
from protocol.errors import DropReason
from protocol.messages import Batch, Kind, Op, decode, request_body
from protocol.sync import AuthorExpelled, OpDelivered, OpRejected, SyncPeer
from protocol.sync_limits import MAX_LAMPORT_STEP
from tests.protocol.test_hostile import HISTORY, IDS, next_op, observer, op_of
from tools.gen_vectors import KEYS, TABLE, play_history


def _host_twins(peer: SyncPeer, seq: int, prev: bytes, lamport: int) -> tuple[bytes, bytes]:
    """Two versions of the host's round op `seq`: the proof that it equivocated there."""
    deps = [seq - 1, peer.delivered(IDS["alice"])]
    return tuple(  # type: ignore[return-value]
        seal(
            KEYS["host"],
            HISTORY.body(
                "host", Kind.MOVE, 1, payload, seq=seq, prev=prev, lamport=lamport + i, deps=deps
            ),
        )
        for i, payload in enumerate(("recycle", "turn"))
    )


def test_a_round_op_naming_the_op_its_author_was_expelled_at_does_not_wait_for_it() -> None:
    # The host's op h+1 is on its way; its two versions of op h+2 arrive first (parked
    # behind h+1) and prove the host equivocated at h+2. Alice had seen one of them and
    # names it: a dep past the host's expulsion is not waited for (nobody can tell which
    # version she saw), so her op is delivered at once, before the host's op h+1 comes.
    peer = observer()
    host, alice = IDS["host"], IDS["alice"]
    held, mine = peer.delivered(host), peer.delivered(alice)
    missing = op_of(next_op("host", payload="stuck"))
    one, other = _host_twins(peer, held + 2, missing.hash, missing.lamport + 1)
    peer.receive(one, "host", 1.0)
    peer.receive(other, "mallory", 1.0)
    assert [e.seq for e in peer.events() if isinstance(e, AuthorExpelled)] == [held + 2]
    assert peer.delivered(host) == held
    moved = seal(
        KEYS["alice"],
        HISTORY.body(
            "alice", Kind.MOVE, 1, "stuck", lamport=op_of(other).lamport + 1, deps=[held + 2, mine]
        ),
    )
    peer.receive(moved, "alice", 1.1)
    assert [e.op.body for e in peer.events() if isinstance(e, OpDelivered)] == [op_of(moved).body]
    assert peer.delivered(alice) == mine + 1
    assert peer.delivered(host) == held  # still without the host's op h+1


def _served(peer: SyncPeer, author: bytes, first: int, last: int) -> list[Op]:
    request = seal(KEYS["bob"], request_body(TABLE, IDS["bob"], [(author, first, last)]))
    peer.outgoing()
    peer.receive(request, "bob", 2.0)
    ops: list[Op] = []
    for destination, datagram in peer.outgoing():
        assert destination == "bob"
        message = decode(datagram, table=TABLE)
        if isinstance(message, Batch):
            ops.extend(op_of(_datagram(body, signature)) for body, signature in message.ops)
        elif isinstance(message, Op):
            ops.append(message)
    return ops


def _datagram(body: bytes, signature: bytes) -> bytes:
    """The datagram of an op carried in a BATCH (its body and signature, as sent)."""
    return pack([PROTOCOL_VERSION, body, signature])


def test_an_expelled_authors_ops_before_its_expulsion_are_all_served() -> None:
    # The host equivocates at op h+1. Its ops 1..h still count (PROTOCOL.md 8), so a peer
    # asked for them serves every one, up to op h exactly, and the two versions of op h+1
    # as the proof; nothing of the host's past its expulsion.
    peer = observer()
    host = IDS["host"]
    held = peer.delivered(host)
    last = peer.logs[host][-1]
    one, other = _host_twins(peer, held + 1, last.hash, HISTORY.peers["host"].clock.value + 1)
    peer.receive(one, "host", 1.0)
    peer.receive(other, "mallory", 1.0)
    assert peer.expelled == {host: held + 1}
    served = _served(peer, host, 1, held + 5)
    proof = [op for op in served if op.seq == held + 1]
    assert sorted(op.body for op in proof) == sorted([op_of(one).body, op_of(other).body])
    counted = sorted(op.seq for op in served if op.seq != held + 1)
    assert counted == list(range(1, held + 1))


def test_an_op_judged_again_after_an_expulsion_is_not_judged_again_at_the_next() -> None:
    # Alice equivocates at her next seq s: version A stamped as far ahead as she may, B
    # just above her last op. Bob's READY names her op s and is stamped between the two:
    # backdated against A. The proof (B) expels Alice from s, and Bob's READY is judged
    # again without that dep: now it is stamped far past everything it names, rejected on
    # its own account. A later proof that Alice equivocated earlier too (at s-1) expels her
    # from there: Bob's READY is not brought back and rejected a third time (one rejection
    # per judgement, counted once each).
    history = play_history()
    base = history.peers["alice"].clock.value
    high = seal(
        KEYS["alice"],
        history.body("alice", Kind.MOVE, 1, "turn", lamport=base + MAX_LAMPORT_STEP),
    )
    low = seal(KEYS["alice"], history.body("alice", Kind.MOVE, 1, "stuck", lamport=base + 1))
    seq = op_of(low).seq
    body = history.body(
        "bob",
        Kind.READY,
        0,
        [2, b"\x01" * 32, [], bytes(32), bytes(104)],
        lamport=base + MAX_LAMPORT_STEP - 1,
    )
    deps = body[7]
    assert isinstance(deps, list)
    body[7] = sorted([*deps, [IDS["alice"], seq]])
    peer = observer()
    peer.receive(high, "alice", 1.0)
    peer.receive(seal(KEYS["bob"], body), "bob", 1.0)
    assert [(e.reason, e.message) for e in peer.events() if isinstance(e, OpRejected)] == [
        (DropReason.BACKDATED, "its Lamport time is not after an op it had seen")
    ]
    peer.receive(low, "carol", 1.0)
    assert [(e.reason, e.message) for e in peer.events() if isinstance(e, OpRejected)] == [
        (DropReason.BACKDATED, "its Lamport time is far past everything it names")
    ]
    # A second version of Alice's op s-1 (held here): she equivocated there too.
    log = peer.logs[IDS["alice"]]
    earlier = log[seq - 2]
    twin = history.body(
        "alice",
        Kind.MOVE,
        1,
        "stuck",
        seq=seq - 1,
        prev=log[seq - 3].hash,
        lamport=earlier.lamport,
        deps=list(earlier.round_deps),
    )
    peer.receive(seal(KEYS["alice"], twin), "carol", 2.0)
    events = peer.events()
    assert [e.seq for e in events if isinstance(e, AuthorExpelled)] == [seq - 1]
    assert [e for e in events if isinstance(e, OpRejected)] == []
    assert peer.counters[DropReason.BACKDATED] == 2
    assert peer.delivered(IDS["bob"]) == history.peers["bob"].delivered(IDS["bob"])
