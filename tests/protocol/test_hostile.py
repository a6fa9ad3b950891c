"""Hostile peers against one `SyncPeer`: every protection of the receive gate, as behaviour.

The table is the vectors' history (`tools.gen_vectors.play_history`): the host and Alice
play round 1, Bob is a player who sits it out, Carol has left, Sam watches, Mallory is a
stranger. Each test feeds an observer (a fresh peer that holds that history) what an
attacker would send and checks what it delivers, counts and sends on.
"""

from __future__ import annotations

from collections.abc import Hashable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.codec import pack
from protocol.envelope import PROTOCOL_VERSION, seal
from protocol.errors import DropReason
from protocol.messages import (
    LOBBY_KINDS,
    NO_PREV,
    PLAYER,
    ROUND_KINDS,
    Kind,
    Op,
    Request,
    batch_body,
    decode,
    derive_table_id,
    heartbeat_body,
    op_body,
    request_body,
)
from protocol.signing import SigningKeyPair, op_hash
from protocol.sync import (
    BROADCAST,
    MAX_AWAITING,
    MAX_REQUESTED,
    AuthorExpelled,
    OpDelivered,
    OpRejected,
    SyncEvent,
    SyncPeer,
)
from tools.gen_vectors import (
    KEYS,
    NONCE,
    OTHER_TABLE,
    ROUND_RULES,
    SHOWN,
    TABLE,
    TABLE_RULES,
    History,
    play_history,
    raw_envelope,
    ready_payload,
)

from .strategies import wire_values

OBSERVER = SigningKeyPair(b"\x0b" * 32)
IDS = {name: key.key_id for name, key in KEYS.items()}
HISTORY = play_history()
CONTEXT = HISTORY.datagrams()


def observer(
    history: History | None = None, *, rate_per_s: float = 2000.0, burst: int = 400
) -> SyncPeer:
    """A peer that has received the whole history (and nothing else)."""
    peer = SyncPeer(OBSERVER, TABLE, rate_per_s=rate_per_s, burst=burst)
    for i, datagram in enumerate((history or HISTORY).datagrams()):
        peer.receive(datagram, ("history", i), 0.0)  # sources of their own: no rate limit
    assert peer.counters.total == 0
    peer.events()
    peer.outgoing()
    return peer


def delivered(events: list[SyncEvent]) -> list[Op]:
    return [e.op for e in events if isinstance(e, OpDelivered)]


def rejected(events: list[SyncEvent]) -> list[DropReason]:
    return [e.reason for e in events if isinstance(e, OpRejected)]


def next_op(
    name: str, kind: Kind = Kind.MOVE, payload: object = "stuck", **override: object
) -> bytes:
    """The datagram of the op `name` would author next in the history, fields overridden."""
    epoch = 0 if kind in (Kind.READY, Kind.JOIN) else 1
    return seal(KEYS[name], HISTORY.body(name, kind, epoch, payload, **override))


def op_of(datagram: bytes, table: bytes = TABLE) -> Op:
    message = decode(datagram, table=table)
    assert isinstance(message, Op)
    return message


def body_of(datagram: bytes) -> bytes:
    return op_of(datagram).body


# --- signatures, replays, tables ---------------------------------------------------------


def test_a_forged_signature_delivers_nothing_and_spoils_nothing() -> None:
    peer = observer()
    genuine = next_op("alice")
    forged = bytearray(genuine)
    forged[-7] ^= 0x10  # inside the signature
    peer.receive(bytes(forged), "mallory", 1.0)
    # A body Alice never signed, under her author id, signed by Mallory.
    other = raw_envelope(pack(HISTORY.body("alice", Kind.MOVE, 1, "AS n-f")), KEYS["mallory"])
    peer.receive(other, "mallory", 1.0)
    assert peer.counters[DropReason.BAD_SIGNATURE] == 2
    assert delivered(peer.events()) == []
    # Neither forgery took Alice's next seq: her genuine op is delivered, and is no
    # "second version" of anything.
    peer.receive(genuine, "alice", 1.0)
    assert [op.body for op in delivered(peer.events())] == [body_of(genuine)]
    assert peer.counters[DropReason.EQUIVOCATION] == 0
    assert peer.counters.total == 2


def test_a_forged_heartbeat_cannot_redirect_a_peer() -> None:
    peer = observer()
    host = IDS["host"]
    peer.receive(
        seal(KEYS["mallory"], heartbeat_body(TABLE, host, 99, [(host, 9)], b"")), "mallory", 1.0
    )
    assert peer.counters[DropReason.BAD_SIGNATURE] == 1
    assert host not in peer.peers  # the host's address is not the forger's
    assert peer.outgoing() == []  # and nothing is requested from the forger


def test_a_replayed_op_is_delivered_once() -> None:
    peer = observer()
    datagram = next_op("alice")
    for _ in range(5):
        peer.receive(datagram, "net", 1.0)
    relay = seal(KEYS["bob"], batch_body(TABLE, IDS["bob"], [op_of(datagram)]))
    peer.receive(relay, "bob", 1.0)
    peer.receive(CONTEXT[0], "net", 1.0)  # an old op again
    assert len(delivered(peer.events())) == 1
    assert peer.duplicates == 6
    assert peer.counters.as_dict()["replayed"] == 6
    assert peer.counters.total == 6  # counted as replays, and as nothing else


def test_an_op_signed_for_another_table_is_refused() -> None:
    peer = observer()
    datagram = next_op("alice", table=OTHER_TABLE)
    peer.receive(datagram, "alice", 1.0)
    relay = seal(KEYS["bob"], batch_body(TABLE, IDS["bob"], [op_of(datagram, OTHER_TABLE)]))
    peer.receive(relay, "bob", 1.0)
    assert peer.counters[DropReason.WRONG_TABLE] == 2
    assert delivered(peer.events()) == []
    # The signature is genuine: a peer at that other table takes the same bytes.
    elsewhere = SyncPeer(OBSERVER, OTHER_TABLE)
    elsewhere.receive(datagram, "alice", 1.0)
    assert elsewhere.counters[DropReason.WRONG_TABLE] == 0


# --- equivocation -------------------------------------------------------------------------


def test_equivocation_expels_the_author_everywhere() -> None:
    first = observer()
    one = next_op("host", payload="stuck")
    two = next_op("host", payload="recycle")  # the same seq, another body
    first.receive(one, "host", 1.0)
    first.receive(two, "mallory", 1.0)
    events = first.events()
    expelled = [e for e in events if isinstance(e, AuthorExpelled)]
    assert len(expelled) == 1
    assert expelled[0].author == IDS["host"]
    assert expelled[0].seq == op_of(one).seq
    assert {op.body for op in expelled[0].evidence} == {body_of(one), body_of(two)}
    assert first.counters[DropReason.EQUIVOCATION] == 1
    # The author's ops from that seq on no longer count in the round.
    round_one = first.epoch(1)
    assert round_one is not None
    assert not round_one.counts(op_of(one))
    assert not round_one.counts_author(IDS["host"])
    # Both versions go to everyone, so a peer that saw neither expels the author too.
    relayed = first.outgoing()
    assert sorted(relayed) == sorted([(BROADCAST, one), (BROADCAST, two)])
    third = observer()
    for _, datagram in relayed:
        third.receive(datagram, "first", 2.0)
    assert [e.author for e in third.events() if isinstance(e, AuthorExpelled)] == [IDS["host"]]
    # A later op of the author, chained to the first version, is ignored.
    host_op = op_of(one)
    later = op_body(
        Kind.MOVE, TABLE, IDS["host"], host_op.seq + 1, host_op.hash, host_op.lamport + 1, 1,
        [host_op.round_deps[0] + 1, host_op.round_deps[1]], "recycle",
    )  # fmt: skip
    first.receive(seal(KEYS["host"], later), "host", 3.0)
    assert delivered(first.events()) == []
    assert first.delivered(IDS["host"]) == host_op.seq
    # Everyone else plays on.
    first.receive(next_op("alice"), "alice", 3.0)
    assert len(delivered(first.events())) == 1


def test_a_forged_second_version_of_an_op_expels_nobody() -> None:
    # Only the author can equivocate: another body for a held (author, seq), signed by
    # somebody else, is a forgery, counted as one, and the author plays on. (Found by
    # `tools.mutate`, seed 802: unverified, it got an honest host expelled everywhere.)
    peer = observer()
    one = next_op("host", payload="stuck")
    peer.receive(one, "host", 1.0)
    forged = raw_envelope(pack(HISTORY.body("host", Kind.MOVE, 1, "recycle")), KEYS["mallory"])
    peer.receive(forged, "mallory", 1.0)
    assert [e for e in peer.events() if isinstance(e, AuthorExpelled)] == []
    assert peer.counters[DropReason.BAD_SIGNATURE] == 1
    assert peer.counters[DropReason.EQUIVOCATION] == 0
    assert IDS["host"] not in peer.expelled
    peer.receive(next_op("alice"), "alice", 2.0)
    assert len(delivered(peer.events())) == 1


def test_a_lie_found_while_delivering_parked_ops_expels_its_author_and_raises_nothing() -> None:
    # Alice promises a time above T, then signs her next op at T - 5; her op after it and
    # Bob's op on that one wait for it. When it arrives, delivering it proves the lie, and
    # expelling her judges every parked op from inside the delivery pass that was running:
    # the pass went on to Bob's queue, emptied meanwhile, and receive raised KeyError (a
    # crash of every peer that caught up while a member lied).
    history = play_history()
    peer = observer(history)
    alice, bob = history.peers["alice"], history.peers["bob"]
    now = alice.clock.value
    promise = heartbeat_body(TABLE, IDS["alice"], now + 10, peer.vector(), b"")
    peer.receive(seal(KEYS["alice"], promise), "alice", 1.0)
    seq = alice.delivered(alice.me) + 1
    lie = seal(KEYS["alice"], history.body("alice", Kind.MOVE, 1, "stuck", lamport=now + 5))
    after = history.body(
        "alice", Kind.MOVE, 1, "stuck", seq=seq + 1, prev=op_of(lie).hash, lamport=now + 6
    )
    deps = list(bob.deps_for(Kind.MOVE, 1, "stuck"))
    deps[bob.epochs[1].participants.index(IDS["alice"])] = seq + 1
    on_it = history.body("bob", Kind.MOVE, 1, "stuck", deps=deps, lamport=now + 20)
    peer.receive(seal(KEYS["alice"], after), "alice", 1.1)
    peer.receive(seal(KEYS["bob"], on_it), "bob", 1.2)
    assert set(peer.pending) == {IDS["alice"], IDS["bob"]}
    peer.events()
    peer.receive(lie, "alice", 1.3)
    assert peer.expelled[IDS["alice"]] == seq
    assert peer.counters[DropReason.BROKEN_PROMISE] == 1
    assert not peer.pending  # every parked op judged, none left waiting for the liar
    assert any(isinstance(e, AuthorExpelled) for e in peer.events())


def test_equivocation_is_caught_while_the_first_version_still_waits() -> None:
    peer = observer()
    seq = HISTORY.peers["host"].delivered(IDS["host"]) + 2  # one past the next: it must wait
    early = next_op("host", seq=seq, prev=b"\x01" * 16, payload="stuck")
    peer.receive(early, "host", 1.0)
    assert peer.pending[IDS["host"]]
    peer.receive(next_op("host", seq=seq, prev=b"\x01" * 16, payload="recycle"), "x", 1.0)
    assert [e.seq for e in peer.events() if isinstance(e, AuthorExpelled)] == [seq]


def test_a_peer_asking_for_an_expelled_authors_ops_gets_the_evidence() -> None:
    holder = observer()
    one, two = next_op("host", payload="stuck"), next_op("host", payload="recycle")
    holder.receive(one, "host", 1.0)
    holder.receive(two, "host", 1.0)
    holder.outgoing()
    asker = observer()
    holder.receive(
        seal(OBSERVER, request_body(TABLE, OBSERVER.key_id, [(IDS["host"], 1, 1)])), "asker", 2.0
    )
    for _, datagram in holder.outgoing():
        asker.receive(datagram, "holder", 2.0)
    assert [e.author for e in asker.events() if isinstance(e, AuthorExpelled)] == [IDS["host"]]


# --- lamport discipline ------------------------------------------------------------------


def test_a_backdated_op_is_rejected_and_its_chain_waits_for_a_valid_twin() -> None:
    peer = observer()
    alice = HISTORY.peers["alice"]
    last = alice.logs[IDS["alice"]][-1].lamport
    backdated = next_op("alice", lamport=last)  # not after her own previous op
    peer.receive(backdated, "alice", 1.0)
    events = peer.events()
    assert rejected(events) == [DropReason.BACKDATED]
    assert delivered(events) == []
    assert peer.counters[DropReason.BACKDATED] == 1
    # An op chained to the rejected one is never delivered; a validly stamped op with the
    # same seq (what the other peers may have had from her all along) is, and nothing of
    # hers is held against her.
    seq = alice.delivered(IDS["alice"]) + 1
    chained = next_op("alice", seq=seq + 1, prev=op_hash(body_of(backdated)), lamport=last + 50)
    peer.receive(chained, "alice", 1.0)
    assert delivered(peer.events()) == []
    peer.receive(next_op("alice"), "alice", 1.0)
    assert [op.seq for op in delivered(peer.events())] == [seq]
    assert IDS["alice"] not in peer.expelled
    peer.receive(chained, "alice", 1.0)  # chained to the rejected copy, not to the valid one
    assert rejected(peer.events()) == [DropReason.BROKEN_CHAIN]
    assert peer.delivered(IDS["alice"]) == seq


def test_an_op_stamped_before_an_op_it_claims_to_have_seen_is_backdated() -> None:
    """Alice's second move claims the host's move in its deps; stamped at the host's move's
    time (still after her own first move), it would sort before it and win a race."""
    ops = [op for _, op in HISTORY.ops]
    moves = [op for op in ops if op.kind == Kind.MOVE]
    first_move, host_move, second_move = moves
    assert (first_move.author, host_move.author, second_move.author) == (
        IDS["alice"],
        IDS["host"],
        IDS["alice"],
    )
    peer = SyncPeer(OBSERVER, TABLE)
    for op in ops[: ops.index(host_move) + 1]:
        peer.receive(op.datagram(), "history", 0.0)
    peer.events()
    assert first_move.lamport < host_move.lamport
    early = op_body(
        Kind.MOVE, TABLE, IDS["alice"], second_move.seq, second_move.prev, host_move.lamport,
        1, second_move.round_deps, second_move.payload,
    )  # fmt: skip
    peer.receive(seal(KEYS["alice"], early), "alice", 1.0)
    assert rejected(peer.events()) == [DropReason.BACKDATED]
    # Only that copy is dropped: her correctly stamped move (the one every other peer
    # delivered) is delivered here too.
    peer.receive(second_move.datagram(), "alice", 1.0)
    assert delivered(peer.events()) == [second_move]


# --- membership ---------------------------------------------------------------------------


def test_a_spectator_cannot_play() -> None:
    peer = observer()
    round_one = peer.epoch(1)
    assert round_one is not None
    size = len(round_one)
    peer.receive(next_op("sam", payload="AS n-f"), "sam", 1.0)
    assert rejected(peer.events()) == [DropReason.SPECTATOR_OP]
    assert len(round_one) == size  # nothing entered the round's order

    other = observer()
    other.receive(next_op("sam", Kind.READY, [2, bytes(32), [], bytes(32), bytes(104)]), "sam", 1.0)
    assert rejected(other.events()) == [DropReason.SPECTATOR_OP]
    assert other.counters[DropReason.SPECTATOR_OP] == 1


def test_ops_of_non_members_are_rejected() -> None:
    # Carol has left the table.
    peer = observer()
    peer.receive(
        next_op("carol", Kind.READY, [2, bytes(32), [], bytes(32), bytes(104)]), "carol", 1.0
    )
    assert rejected(peer.events()) == [DropReason.NOT_A_MEMBER]
    # Bob is a player at the table but not in round 1: he cannot move in it.
    peer = observer()
    peer.receive(next_op("bob"), "bob", 1.0)
    assert rejected(peer.events()) == [DropReason.NOT_A_MEMBER]
    # Only the host starts a round.
    start_at = next(i for i, (_, op) in enumerate(HISTORY.ops) if op.kind == Kind.START)
    peer = SyncPeer(OBSERVER, TABLE)
    for datagram in CONTEXT[:start_at]:
        peer.receive(datagram, "history", 0.0)
    peer.events()
    peer.receive(seal(KEYS["alice"], HISTORY.snapshots["start_by_alice"]), "alice", 1.0)
    assert rejected(peer.events()) == [DropReason.NOT_A_MEMBER]
    assert peer.epoch(1) is None


def test_a_member_may_leave_during_a_round_it_does_not_play() -> None:
    peer = observer()
    round_one = peer.epoch(1)
    assert round_one is not None
    ordered = list(round_one)
    for name in ("bob", "sam"):  # a player sitting the round out, and a spectator
        peer.receive(next_op(name, Kind.LEAVE, None), name, 1.0)
        assert [op.kind for op in delivered(peer.events())] == [Kind.LEAVE]
        assert peer.members[IDS[name]].left
    assert list(round_one) == ordered  # not ordered in a round they do not play
    assert peer.counters.total == 0


def test_a_stranger_is_no_member_until_it_joins() -> None:
    """Mallory's op arrives before anything of hers that carries her key: it is held, her
    first op is asked for, and nothing is delivered."""
    peer = observer()
    body = op_body(
        Kind.READY,
        TABLE,
        IDS["mallory"],
        2,
        b"\x03" * 16,
        40,
        0,
        [],
        [1, bytes(32), [], bytes(32), bytes(104)],
    )
    peer.receive(seal(KEYS["mallory"], body), "mallory", 1.0)
    assert delivered(peer.events()) == []
    requests = [decode(d, table=TABLE) for _, d in peer.outgoing()]
    assert [r.ranges for r in requests if isinstance(r, Request)] == [((IDS["mallory"], 1, 1),)]


def _alice_and_bob_seated() -> History:
    """A table whose host opened it and admitted Alice and Bob, who joined as players."""
    h = History()
    h.author(
        "host", Kind.OPEN, 0, [KEYS["host"].public_key, "host", TABLE_RULES, 4, True, NONCE, False]
    )
    for name in ("alice", "bob"):
        h.author("host", Kind.ADMIT, 0, [KEYS[name].public_key, PLAYER])
        h.author(name, Kind.JOIN, 0, [KEYS[name].public_key, name, PLAYER])
    return h


def test_a_host_who_does_not_play_can_start_a_round() -> None:
    h = _alice_and_bob_seated()
    for name in ("alice", "bob"):
        h.author(name, Kind.READY, 0, ready_payload(name, 1, SHOWN["alice"]))
    start = h.author("host", Kind.START, 1, [[IDS["alice"], IDS["bob"]], [0, 1], ROUND_RULES])
    move = h.author("alice", Kind.MOVE, 1, "stuck")
    peer = observer(h)
    round_one = peer.epoch(1)
    assert round_one is not None
    assert IDS["host"] not in round_one.participants
    assert [op.body for op in round_one] == [start.body, move.body]


# --- bytes: size, shape, flood ---------------------------------------------------------------


def test_oversized_datagrams_are_dropped_before_anything_else() -> None:
    peer = observer(rate_per_s=1.0, burst=3)
    big = next_op("alice") + bytes(1200)
    for _ in range(10):
        peer.receive(big, "mallory", 1.0)
        peer.receive(b"\x00" * 65536, "mallory", 1.0)
    assert peer.counters[DropReason.OVERSIZE] == 20
    # Size is checked first: those cost the source none of its rate budget.
    peer.receive(next_op("alice"), "mallory", 1.0)
    assert len(delivered(peer.events())) == 1
    assert peer.counters[DropReason.RATE_LIMITED] == 0


@pytest.mark.parametrize(
    ("datagram", "reason"),
    [
        pytest.param(b"", DropReason.MALFORMED, id="empty"),
        pytest.param(b"\xc1", DropReason.MALFORMED, id="reserved-byte"),
        pytest.param(CONTEXT[1][:-3], DropReason.MALFORMED, id="truncated"),
        pytest.param(CONTEXT[1] + b"\x00", DropReason.MALFORMED, id="trailing-byte"),
        pytest.param(b"\x91" * 1100 + b"\xc0", DropReason.MALFORMED, id="nested-too-deep"),
        pytest.param(b"\xdd\xff\xff\xff\xff", DropReason.MALFORMED, id="array-of-4-billion"),
        pytest.param(b"\x82\xa1a\x01\xa1a\x02", DropReason.MALFORMED, id="map-repeating-a-key"),
        pytest.param(b"\xd4\x01\x00", DropReason.MALFORMED, id="extension-type"),
        pytest.param(b"\xcb" + bytes(8), DropReason.MALFORMED, id="float"),
        pytest.param(pack(5), DropReason.SCHEMA, id="not-an-envelope"),
        pytest.param(
            pack([PROTOCOL_VERSION, b"\x90", bytes(64)]), DropReason.SCHEMA, id="empty-body"
        ),
        pytest.param(
            pack([PROTOCOL_VERSION, pack([16, TABLE]), bytes(64)]),
            DropReason.SCHEMA,
            id="short-body",
        ),
    ],
)
def test_malformed_datagrams_are_counted(datagram: bytes, reason: DropReason) -> None:
    peer = observer()
    peer.receive(datagram, "mallory", 1.0)
    assert peer.counters.as_dict() == {r.value: int(r == reason) for r in DropReason}
    assert peer.events() == []
    assert peer.outgoing() == []


def test_a_flood_from_one_source_is_rate_limited_after_its_burst() -> None:
    peer = observer(rate_per_s=100.0, burst=50)
    # Each copy is work here until the burst is spent; then each is dropped unread, and
    # receive says so (False), so the table above it looks at nothing again.
    taken = [peer.receive(CONTEXT[0], "flooder", 1.0) for _ in range(80)]
    assert taken == [True] * 50 + [False] * 30
    assert peer.duplicates == 50
    assert peer.counters[DropReason.RATE_LIMITED] == 30
    # Another source is not silenced by it.
    peer.receive(next_op("alice"), "alice", 1.0)
    assert len(delivered(peer.events())) == 1
    # The flooder's bucket refills with time: half a second is 50 more.
    for _ in range(60):
        peer.receive(CONTEXT[0], "flooder", 1.5)
    assert peer.duplicates == 100
    assert peer.counters[DropReason.RATE_LIMITED] == 40


# --- bounded memory for what nobody can verify -----------------------------------------------


def test_ops_of_unknown_authors_wait_in_bounded_space() -> None:
    peer = observer()
    for n in range(MAX_AWAITING + 100):
        author = n.to_bytes(8, "big")
        body = op_body(Kind.MOVE, TABLE, author, 2, b"\x01" * 16, 50, 1, [1, 1], "stuck")
        peer.receive(pack([PROTOCOL_VERSION, pack(body), bytes(64)]), f"source {n}", 1.0)
    assert sum(len(ops) for ops in peer.awaiting_key.values()) == MAX_AWAITING
    assert peer.counters[DropReason.UNKNOWN_AUTHOR] == 100
    # A newcomer's JOIN carries its key, so it is never turned away for lack of room.
    admit = op_of(
        seal(KEYS["host"], HISTORY.body("host", Kind.ADMIT, 0, [KEYS["mallory"].public_key, 0]))
    )
    peer.receive(admit.datagram(), "host", 2.0)
    join = op_body(
        Kind.JOIN, TABLE, IDS["mallory"], 1, NO_PREV, admit.lamport + 1, 0,
        [[IDS["host"], admit.seq]], [KEYS["mallory"].public_key, "mallory", PLAYER],
    )  # fmt: skip
    peer.receive(seal(KEYS["mallory"], join), "mallory", 2.0)
    assert [op.author for op in delivered(peer.events())] == [IDS["host"], IDS["mallory"]]


def test_heartbeats_from_strangers_do_not_grow_memory() -> None:
    peer = observer()
    count = MAX_REQUESTED + 500
    for n in range(count):
        sender = n.to_bytes(8, "big")
        hb = pack([PROTOCOL_VERSION, pack(heartbeat_body(TABLE, sender, 5, [], b"")), bytes(64)])
        peer.receive(hb, f"source {n}", 1.0)
    assert peer.counters[DropReason.UNKNOWN_AUTHOR] == count
    assert len(peer._requested) <= MAX_REQUESTED
    peer.outgoing()


def test_an_op_too_big_to_share_a_batch_is_still_relayed() -> None:
    host = SigningKeyPair(b"\x0c" * 32)
    table = derive_table_id(host.public_key, NONCE)
    rules = [[f"rule-{i:018d}", 2**31 - 1] for i in range(32)]  # near the largest OPEN
    opener = SyncPeer(host, table)
    big = opener.author(Kind.OPEN, 0, [host.public_key, "h" * 32, rules, 4, True, NONCE, False])
    assert len(big.body) > 1000
    relay = SyncPeer(OBSERVER, table)
    relay.receive(big.datagram(), "host", 0.0)
    stranger = SigningKeyPair(b"\x0d" * 32)
    ask = seal(stranger, request_body(table, stranger.key_id, [(host.key_id, 1, 1)]))
    relay.receive(ask, "stranger", 1.0)
    late = SyncPeer(stranger, table)
    for destination, datagram in relay.outgoing():
        assert destination == "stranger"
        late.receive(datagram, "relay", 1.0)
    assert [op.body for op in delivered(late.events())] == [big.body]


# --- nothing a peer sends makes receive raise --------------------------------------------------

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _accounted(peer: SyncPeer, source: Hashable, datagram: bytes) -> bool:
    """Receive; True if the datagram visibly went somewhere: counted as a drop, as a
    duplicate, delivered, rejected, or held (pending its predecessors or its author's key)."""
    before = (
        peer.counters.total,
        peer.duplicates,
        sum(map(len, peer.pending.values())),
        sum(map(len, peer.awaiting_key.values())),
    )
    peer.receive(datagram, source, 5.0)
    after = (
        peer.counters.total,
        peer.duplicates,
        sum(map(len, peer.pending.values())),
        sum(map(len, peer.awaiting_key.values())),
    )
    return after != before or bool(peer.events())


@FUZZ
@given(st.binary(max_size=1300))
def test_arbitrary_bytes_are_only_ever_counted(datagram: bytes) -> None:
    peer = observer()
    peer.receive(datagram, "fuzzer", 1.0)
    assert peer.counters.total == 1
    assert delivered(peer.events()) == []


@FUZZ
@given(wire_values, st.sampled_from(sorted(KEYS)))
def test_arbitrary_signed_values_are_only_ever_counted(value: object, signer: str) -> None:
    peer = observer()
    peer.receive(raw_envelope(pack(value), KEYS[signer]), "fuzzer", 1.0)
    assert peer.counters.total == 1


_mutation = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 10**6), st.integers(1, 255)),
    st.tuples(st.just("insert"), st.integers(0, 10**6), st.integers(0, 255)),
    st.tuples(st.just("delete"), st.integers(0, 10**6), st.integers(1, 8)),
    st.tuples(st.just("truncate"), st.integers(0, 10**6), st.just(0)),
)


@FUZZ
@given(st.sampled_from(CONTEXT), st.lists(_mutation, min_size=1, max_size=4))
def test_mutated_datagrams_never_raise(
    original: bytes, mutations: list[tuple[str, int, int]]
) -> None:
    data = bytearray(original)
    for what, at, value in mutations:
        at %= len(data) + 1
        if what == "flip" and at < len(data):
            data[at] ^= value
        elif what == "insert":
            data[at:at] = bytes([value])
        elif what == "delete":
            del data[at : at + value]
        else:
            del data[at:]
    peer = observer()
    peer.receive(CONTEXT[0], "history", 0.0)  # a duplicate, so every case has a known OPEN
    assert _accounted(peer, "fuzzer", bytes(data))


# Ops that get past the signature to every later check: signed by the author they name,
# mostly the author's true next op in what the peer has heard (right seq and prev, deps
# that are met), of any kind with a payload of the right shape, then a few fields changed.
_ids = st.sampled_from([*IDS.values(), bytes(8)])
_rules = st.just(ROUND_RULES)
_payloads: dict[Kind, st.SearchStrategy[object]] = {
    Kind.OPEN: st.builds(
        lambda k, nonce: [k.public_key, "x", TABLE_RULES, 4, True, nonce],
        st.sampled_from(list(KEYS.values())),
        st.sampled_from([NONCE, bytes(8)]),
    ),
    Kind.JOIN: st.builds(
        lambda k, role: [k.public_key, "x", role],
        st.sampled_from(list(KEYS.values())),
        st.integers(0, 1),
    ),
    Kind.LEAVE: st.none(),
    Kind.READY: st.builds(
        lambda n: [n, bytes(32), [1, 2], bytes(32), bytes(104)], st.integers(1, 3)
    ),
    Kind.START: st.builds(
        lambda ids, rules: [ids, list(range(len(ids))), rules],
        st.lists(_ids, min_size=2, max_size=3, unique=True),
        _rules,
    ),
    Kind.MOVE: st.sampled_from(["stuck", "AS n-f", "turn +5H+7C+9D"]),
    Kind.REVEAL: st.just([bytes(32), bytes(16)]),
    Kind.SEED_SHARE: st.builds(lambda i: [i, bytes(88)], _ids),
}
_corruptions: dict[int, st.SearchStrategy[object]] = {
    2: _ids,  # author
    3: st.integers(1, 8),  # seq
    4: st.sampled_from([NO_PREV, *(op.hash for _, op in HISTORY.ops)]),  # prev
    5: st.integers(1, 40),  # lamport
    6: st.integers(0, 2),  # epoch
    7: st.one_of(  # deps, of either shape
        st.lists(st.integers(0, 6), max_size=3),
        st.lists(st.tuples(_ids, st.integers(1, 6)).map(list), max_size=4),
    ),
}


@settings(FUZZ, max_examples=300)
@given(
    st.sampled_from(sorted(n for n in KEYS if n != "mallory")),
    st.integers(0, len(CONTEXT)),
    st.sampled_from(sorted(_payloads)),
    st.booleans(),
    st.integers(0, 3),
    st.dictionaries(st.sampled_from(sorted(_corruptions)), st.none(), max_size=2),
    st.data(),
)
def test_resigned_ops_never_raise(
    name: str,
    heard: int,
    kind: Kind,
    in_round: bool,
    stamp: int,
    corrupt: dict[int, None],
    data: st.DataObject,
) -> None:
    peer = SyncPeer(OBSERVER, TABLE)
    for i, earlier in enumerate(CONTEXT[:heard]):
        peer.receive(earlier, ("history", i), 0.0)
    epoch = 0 if kind in LOBBY_KINDS else 1 if kind in ROUND_KINDS or in_round else 0
    author = IDS[name]
    seq = peer.delivered(author) + 1
    round_log = peer.epoch(epoch) if epoch else None
    deps: list[object]
    if epoch == 0:
        deps = [list(pair) for pair in peer.vector()]
    elif round_log is not None:
        deps = [peer.delivered(p) for p in round_log.participants]
    else:
        deps = [peer.delivered(IDS["host"]), peer.delivered(IDS["alice"])]
    body = op_body(
        kind,
        TABLE,
        author,
        seq,
        peer.logs[author][-1].hash if seq > 1 else NO_PREV,
        peer.clock.value + stamp,  # 0: as late as the latest op heard, so often backdated
        epoch,
        deps,
        data.draw(_payloads[kind], label="payload"),
    )
    for index in sorted(corrupt):
        body[index] = data.draw(_corruptions[index], label=f"body[{index}]")
    signer = next((KEYS[n] for n, i in IDS.items() if i == body[2]), KEYS[name])
    assert _accounted(peer, "fuzzer", seal(signer, body))
    for i, later in enumerate(CONTEXT[heard:]):
        peer.receive(later, ("later", i), 6.0)
    peer.tick(7.0)
    ask = seal(OBSERVER, request_body(TABLE, OBSERVER.key_id, [(author, 1, 9)]))
    peer.receive(ask, "asker", 8.0)


def test_a_start_naming_a_player_who_has_not_said_ready_is_refused() -> None:
    # Bob sits at the table but has not said READY: a host's START that lists him anyway
    # (signed by hand; our own host refuses to sign it) is refused by every peer, and no
    # round begins (PROTOCOL.md 5: each participant MUST have a READY for that round among
    # the ops the START's deps cover). (Found by `tools.mutate`, seed 21: with that
    # refusal made to say nothing, the START began a round with Bob in it.)
    h = _alice_and_bob_seated()
    h.author("alice", Kind.READY, 0, ready_payload("alice", 1, SHOWN["alice"]))
    payload = [[IDS["alice"], IDS["bob"]], [0, 1], ROUND_RULES]
    forced = seal(KEYS["host"], h.body("host", Kind.START, 1, payload))
    peer = observer(h)
    peer.receive(forced, "host", 1.0)
    assert rejected(peer.events()) == [DropReason.SCHEMA]
    assert peer.epoch(1) is None
    assert peer.delivered(IDS["host"]) == len([n for n, _ in h.ops if n == "host"])
