"""What a `SyncPeer` refuses, and keeps refusing, whatever happens next: authoring while it
restarts, serving a key the table turned away, judging again an op it rightly called
backdated. (Found by `tools.mutate`, seed 47: each refusal could be lost with every other
test green.)"""

from __future__ import annotations

import pytest

from protocol.envelope import seal
from protocol.errors import DropReason, LocalProtocolError
from protocol.messages import (
    NO_PREV,
    PLAYER,
    Batch,
    Kind,
    Op,
    decode,
    decode_op,
    heartbeat_body,
    op_body,
    request_body,
)
from protocol.sync import OpDelivered, OpRejected, SyncEvent, SyncPeer
from tests.protocol.test_hostile import HISTORY, IDS, observer, op_of
from tools.gen_vectors import KEYS, TABLE

# --- a restarted peer authors nothing until the table has shown it its own chain -----------


def test_a_peer_restarted_without_its_log_refuses_to_author_and_sends_nothing() -> None:
    # Bob restarts with his key but without his log (PROTOCOL.md 14). The table's ops reach
    # him, his own have not yet: a JOIN authored now would be a second seq 1, an
    # equivocation that gets him expelled everywhere.
    bob = SyncPeer(KEYS["bob"], TABLE)
    bob.quarantine()
    for i, (name, op) in enumerate(HISTORY.ops):
        if name != "bob":
            bob.receive(op.datagram(), ("table", i), 1.0)
    assert bob.open_op is not None
    bob.outgoing()
    with pytest.raises(LocalProtocolError, match="restarting"):
        bob.author(Kind.JOIN, 0, [KEYS["bob"].public_key, "bob", PLAYER])
    assert bob.delivered(bob.me) == 0
    assert bob.outgoing() == []


def test_a_peer_restored_from_its_store_refuses_to_author_until_caught_up() -> None:
    # Restored from its store (every op it made is there), but not yet caught up with the
    # table: its next op could name fewer ops than its last heartbeats promised.
    bob = SyncPeer(KEYS["bob"], TABLE)
    bob.load(HISTORY.datagrams())
    held = bob.delivered(bob.me)
    assert held >= 1
    bob.resume()
    with pytest.raises(LocalProtocolError, match="restarting"):
        bob.author(Kind.LEAVE, 0, None)
    assert bob.delivered(bob.me) == held
    assert bob.outgoing() == []


def test_a_stored_record_that_is_no_op_of_this_table_is_counted_and_the_rest_load() -> None:
    # A store holds what its own node wrote, but a file can be damaged or copied from
    # another table's: such a record is counted under its reason, like any datagram, and
    # loading goes on. (Found by `tools.mutate`, seed 801.)
    bob = SyncPeer(KEYS["bob"], TABLE)
    other_table = seal(KEYS["bob"], HISTORY.body("bob", Kind.LEAVE, 0, None, table=bytes(8)))
    forged = seal(KEYS["mallory"], HISTORY.body("bob", Kind.LEAVE, 0, None))
    bob.load([b"\x00not msgpack", other_table, forged, *HISTORY.datagrams()])
    assert bob.counters.total == 3
    assert bob.counters[DropReason.WRONG_TABLE] == 1
    assert bob.counters[DropReason.BAD_SIGNATURE] == 1
    assert bob.delivered(IDS["host"]) == sum(name == "host" for name, _ in HISTORY.ops)


# --- a key the table turned away stays a stranger ------------------------------------------


def _ops_sent(peer: SyncPeer, destination: str) -> list[Op]:
    ops: list[Op] = []
    for where, datagram in peer.outgoing():
        message = decode(datagram, table=TABLE)
        if isinstance(message, Batch):
            assert where == destination
            ops += [decode_op(body, signature, table=TABLE) for body, signature in message.ops]
        elif isinstance(message, Op):
            ops.append(message)
    return ops


def test_a_key_whose_join_was_refused_is_served_as_a_stranger() -> None:
    # Mallory sends a JOIN the host never admitted: refused, but it was signed, so the
    # peer now holds her key. Holding a key does not make her a member: her requests get
    # the first op of each author (what any newcomer gets) and her heartbeats draw no ops.
    peer = observer()
    mallory = KEYS["mallory"]
    host, alice = IDS["host"], IDS["alice"]
    lamport = HISTORY.peers["host"].clock.value + 1
    join = op_body(
        Kind.JOIN, TABLE, mallory.key_id, 1, NO_PREV, lamport, 0, [[host, 1]],
        [mallory.public_key, "mallory", PLAYER],
    )  # fmt: skip
    peer.receive(seal(mallory, join), "mallory", 1.0)
    assert [e.reason for e in peer.events() if isinstance(e, OpRejected)] == [
        DropReason.NOT_A_MEMBER
    ]
    assert mallory.key_id not in peer.members
    peer.outgoing()

    wanted = [(host, 1, 50), (alice, 1, 50)]
    peer.receive(seal(mallory, request_body(TABLE, mallory.key_id, wanted)), "mallory", 1.1)
    answered = _ops_sent(peer, "mallory")
    assert sorted((op.author, op.seq) for op in answered) == sorted([(host, 1), (alice, 1)])

    beat = heartbeat_body(TABLE, mallory.key_id, lamport + 1, [], b"")
    peer.receive(seal(mallory, beat), "mallory", 1.2)
    assert _ops_sent(peer, "mallory") == []  # nothing pushed at a stranger
    assert peer.counters[DropReason.UNKNOWN_AUTHOR] == 1  # answered as from a stranger
    assert "mallory" not in peer.peers.values()


# --- an op rightly called backdated is judged again only for the author it failed on ------


def _rejections_of(events: list[SyncEvent], author: bytes) -> list[DropReason]:
    return [e.reason for e in events if isinstance(e, OpRejected) and e.op.author == author]


def _alice_equivocates() -> tuple[bytes, bytes, int]:
    """Two versions of Alice's next move in the vectors' history: stamped high and low."""
    base = HISTORY.peers["alice"].clock.value
    high = seal(KEYS["alice"], HISTORY.body("alice", Kind.MOVE, 1, "turn", lamport=base + 50))
    low = seal(KEYS["alice"], HISTORY.body("alice", Kind.MOVE, 1, "stuck", lamport=base + 1))
    return high, low, op_of(low).seq


def _bob_ready(lamport: int, dep: tuple[bytes, int]) -> bytes:
    """Bob's next op (a READY for round 2) stamped at `lamport`, naming `dep` as seen."""
    body = HISTORY.body(
        "bob", Kind.READY, 0, [2, b"\x01" * 32, [], bytes(32), bytes(104)], lamport=lamport
    )
    deps = body[7]
    assert isinstance(deps, list)
    body[7] = sorted([pair for pair in deps if pair[0] != dep[0]] + [list(dep)])
    return seal(KEYS["bob"], body)


def test_an_op_backdated_against_an_honest_op_stays_rejected_when_someone_else_is_expelled() -> (
    None
):
    peer = observer()
    host_last = peer.logs[IDS["host"]][-1]
    # Bob's READY claims the host's latest op as seen but is stamped at its very time.
    backdated = _bob_ready(host_last.lamport, (IDS["host"], host_last.seq))
    peer.receive(backdated, "bob", 1.0)
    events = peer.events()
    assert _rejections_of(events, IDS["bob"]) == [DropReason.BACKDATED]
    # Alice equivocates and is expelled: nothing about Bob's op or the host's changes.
    high, low, _ = _alice_equivocates()
    peer.receive(high, "alice", 1.1)
    peer.receive(low, "carol", 1.2)
    assert IDS["alice"] in peer.expelled
    later = peer.events()
    assert _rejections_of(later, IDS["bob"]) == []  # not judged (and rejected) a second time
    assert not any(isinstance(e, OpDelivered) and e.op.author == IDS["bob"] for e in later)
    assert peer.counters[DropReason.BACKDATED] == 1


def test_an_expulsion_after_a_backdated_ops_valid_twin_was_delivered_raises_nothing() -> None:
    peer = observer()
    high, low, seq = _alice_equivocates()
    peer.receive(high, "alice", 1.0)
    # Bob's READY names Alice's move (the low version, as Bob saw it) and is stamped just
    # above it: backdated against the high version this peer holds...
    base = HISTORY.peers["alice"].clock.value
    peer.receive(_bob_ready(base + 2, (IDS["alice"], seq)), "bob", 1.1)
    assert _rejections_of(peer.events(), IDS["bob"]) == [DropReason.BACKDATED]
    # ...then a valid twin of it (stamped after both versions) arrives and is delivered...
    twin = _bob_ready(base + 60, (IDS["alice"], seq))
    peer.receive(twin, "bob", 1.2)
    assert peer.logs[IDS["bob"]][-1].body == op_of(twin).body
    # ...and only then the proof that Alice equivocated: judged once, raises nothing.
    peer.receive(low, "carol", 1.3)
    assert IDS["alice"] in peer.expelled
    assert peer.logs[IDS["bob"]][-1].body == op_of(twin).body
    assert IDS["bob"] not in peer.dead
    assert _rejections_of(peer.events(), IDS["bob"]) == []
    # Still answering: the peer serves Bob's chain, the twin included.
    peer.outgoing()
    ask = request_body(TABLE, IDS["sam"], [(IDS["bob"], 1, 9)])
    peer.receive(seal(KEYS["sam"], ask), "sam", 1.4)
    served = _ops_sent(peer, "sam")
    assert sorted(op.body for op in served) == sorted(op.body for op in peer.logs[IDS["bob"]])
