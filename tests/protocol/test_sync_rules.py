"""Delivery rules of `SyncPeer` that protect honest peers from their own and others' slips."""

from __future__ import annotations

import pytest

from nerts_p2p.game.rules import Rules
from protocol.envelope import seal
from protocol.errors import DropReason, LocalProtocolError
from protocol.messages import (
    MAX_LAMPORT,
    NO_PREV,
    PLAYER,
    Heartbeat,
    Kind,
    Request,
    decode,
    heartbeat_body,
    op_body,
    request_body,
)
from protocol.sync import (
    MAX_LAMPORT_STEP,
    MAX_REPLY,
    DivergenceDetected,
    OpDelivered,
    OpRejected,
    SyncPeer,
)
from tests.protocol.test_hostile import HISTORY, IDS, observer, op_of
from tests.replication.table_helpers import ManualTable, seed_showing
from tools.gen_vectors import KEYS, OTHER_TABLE, TABLE, play_history


def test_a_spectator_authoring_a_move_is_refused_locally_and_its_chain_lives_on() -> None:
    sam = play_history().peers["sam"]
    before = sam.delivered(sam.me)
    with pytest.raises(LocalProtocolError, match="spectator"):
        sam.author(Kind.MOVE, 1, "turn")
    assert sam.outgoing() == []
    assert sam.delivered(sam.me) == before
    assert sam.me not in sam.dead
    leave = sam.author(Kind.LEAVE, 0, None)  # the seq it did not use is still free
    assert leave.seq == before + 1


def test_lobby_ops_name_only_the_open_and_their_own_previous_op() -> None:
    bob = play_history().peers["bob"]
    op = bob.author(Kind.LEAVE, 0, None)
    assert {author for author, _ in op.lobby_deps} == {IDS["host"], IDS["bob"]}


def test_a_join_that_names_nothing_waits_for_the_tables_open_then_is_not_admitted() -> None:
    mallory = KEYS["mallory"]
    bare_join = seal(
        mallory,
        op_body(
            Kind.JOIN,
            TABLE,
            mallory.key_id,
            1,
            NO_PREV,
            1,
            0,
            [],
            [mallory.public_key, "mallory", PLAYER],
        ),
    )
    peer = SyncPeer(KEYS["sam"], TABLE)
    peer.receive(bare_join, "net", 0.0)
    assert peer.events() == []
    opener = HISTORY.datagrams(1)[0]
    peer.receive(opener, "net", 0.0)
    events = peer.events()
    kinds = [e.op.kind for e in events if isinstance(e, OpDelivered)]
    assert kinds == [Kind.OPEN]
    # Its deps cover no ADMIT of its key by the host (PROTOCOL.md 17): never a member.
    assert [(e.op.kind, e.reason) for e in events if isinstance(e, OpRejected)] == [
        (Kind.JOIN, DropReason.NOT_A_MEMBER)
    ]
    assert mallory.key_id not in peer.members


def test_a_round_op_stamped_before_its_round_started_is_backdated() -> None:
    rules = Rules(seats=2)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"b{i}") for i in range(2)])
    host, other = table.players
    for replica in table.players:
        replica.ready()
    table.collect()
    table.deliver_all()
    host.start()  # not delivered to the other player: it authors nothing after START
    log = host.sync.epoch(1)
    assert log is not None
    start = log.start
    sync = other.sync
    last = sync.logs[sync.me][-1]
    assert last.lamport < start.lamport
    deps = [sync.delivered(p) for p in log.participants]
    body = op_body(
        Kind.MOVE, sync.table, sync.me, last.seq + 1, last.hash, start.lamport, 1, deps, "turn"
    )
    host.sync.receive(seal(sync.key, body), 1, 1.0)
    rejections = [e for e in host.sync.events() if isinstance(e, OpRejected)]
    assert [(e.reason, e.message) for e in rejections] == [
        (DropReason.BACKDATED, "its Lamport time is before its round started")
    ]


def test_one_request_is_answered_with_at_most_a_bounded_number_of_ops() -> None:
    peer = observer()
    ranges = [(author, 1, 10_000) for author in IDS.values()] * 3
    request = seal(KEYS["bob"], request_body(TABLE, IDS["bob"], ranges[:16]))
    peer.receive(request, "bob", 1.0)
    sent = 0
    for _, datagram in peer.outgoing():
        message = decode(datagram, table=TABLE)
        assert not isinstance(message, Request)
        sent += len(getattr(message, "ops", [None]))
    assert 0 < sent <= MAX_REPLY


def test_an_op_backdated_only_against_an_equivocated_op_is_judged_again() -> None:
    # Alice equivocates at her next seq: version A stamped high, version B stamped low. Bob
    # saw B and stamps his op just above it. A peer that holds A calls Bob's op backdated;
    # once it learns of B (and expels Alice), it judges Bob's op again and delivers it.
    history = play_history()
    base = history.peers["alice"].clock.value
    high = seal(KEYS["alice"], history.body("alice", Kind.MOVE, 1, "turn", lamport=base + 50))
    low = seal(KEYS["alice"], history.body("alice", Kind.MOVE, 1, "stuck", lamport=base + 1))
    seq = op_of(low).seq
    body = history.body(
        "bob", Kind.READY, 0, [2, b"\x01" * 32, [], bytes(32), bytes(104)], lamport=base + 2
    )
    deps = body[7]
    assert isinstance(deps, list)
    body[7] = sorted([*deps, [IDS["alice"], seq]])
    bob_ready = seal(KEYS["bob"], body)
    peer = observer()
    peer.receive(high, "alice", 1.0)
    peer.receive(bob_ready, "bob", 1.0)
    first = peer.events()
    assert [e.reason for e in first if isinstance(e, OpRejected)] == [DropReason.BACKDATED]
    peer.receive(low, "bob", 1.0)  # the other version: equivocation
    later = peer.events()
    assert any(isinstance(e, OpDelivered) and e.op.author == IDS["bob"] for e in later)
    assert IDS["alice"] in peer.expelled


def test_an_invalid_twin_does_not_split_a_peer_off_for_good() -> None:
    """Issue 9: Alice sends Sam an invalid op n (stamped no later than her op n-1) and Bob a
    valid op n. Sam drops only the invalid copy: Bob's anti-entropy brings him the valid
    twin and what Alice chains to it, after which Bob has nothing more to push at him."""
    history = play_history()
    bob, sam = history.peers["bob"], history.peers["sam"]
    last = history.peers["alice"].logs[IDS["alice"]][-1]
    invalid = seal(KEYS["alice"], history.body("alice", Kind.LEAVE, 0, None, lamport=last.lamport))
    sam.receive(invalid, "alice", 1.0)
    assert [e.reason for e in sam.events() if isinstance(e, OpRejected)] == [DropReason.BACKDATED]
    valid = history.peers["alice"].author(Kind.LEAVE, 0, None)
    bob.receive(valid.datagram(), "alice", 1.0)
    assert bob.delivered(IDS["alice"]) == valid.seq
    for now in (2.0, 3.0):
        sam.outgoing()
        sam.tick(now)
        for _, datagram in sam.outgoing():
            bob.receive(datagram, "sam", now)
        for _, datagram in bob.outgoing():
            sam.receive(datagram, "bob", now)
    assert sam.delivered(IDS["alice"]) == valid.seq
    assert sam.vector() == bob.vector()
    assert IDS["alice"] not in sam.dead
    # In step now: Sam's next heartbeat gets no push from Bob.
    bob.outgoing()
    sam.tick(4.0)
    for _, datagram in sam.outgoing():
        bob.receive(datagram, "sam", 4.0)
    assert bob.outgoing() == []


def test_a_datagram_dropped_unread_changes_nothing_and_says_so() -> None:
    """Issue 9 (a flood costs the target what it reads): `receive` says False for a
    datagram dropped at steps 1-5 of the gate, which changes nothing but the drop counters,
    so the replica need not look at its rounds again; True once a datagram is read."""
    history = play_history()
    sam, alice = history.peers["sam"], history.peers["alice"]
    vector = sam.vector()
    sam.outgoing()
    elsewhere = seal(KEYS["alice"], history.body("alice", Kind.LEAVE, 0, None, table=OTHER_TABLE))
    for junk in (b"\xc1", bytes(1201), elsewhere):
        assert sam.receive(junk, "junk", 1.0) is False
    assert sam.counters[DropReason.MALFORMED] == 1
    assert sam.counters[DropReason.OVERSIZE] == 1
    assert sam.counters[DropReason.WRONG_TABLE] == 1
    assert sam.vector() == vector
    assert sam.outgoing() == []
    assert sam.events() == []
    heartbeat = _heartbeats_of(alice, 1.0)[0]
    assert sam.receive(heartbeat, "alice", 1.0) is True
    forged = bytearray(heartbeat)
    forged[-1] ^= 1  # read, and dropped for its signature
    assert sam.receive(bytes(forged), "alice", 1.0) is True
    assert sam.counters[DropReason.BAD_SIGNATURE] == 1


def _heartbeats_of(peer: SyncPeer, now: float) -> list[bytes]:
    peer.outgoing()
    peer.tick(now)
    return [d for _, d in peer.outgoing() if isinstance(decode(d, table=TABLE), Heartbeat)]


def test_a_participant_that_sends_only_invalid_copies_of_its_op_shows_no_sign_of_life() -> None:
    """Issue 9, "a participant that sends only invalid copies holds its round": Alice has
    made op n and her heartbeats name it, but Sam gets only invalid copies of it (validly
    signed, stamped no later than her op n-1), again and again. Those copies were counted
    as signs of life, and so were the heartbeats: Sam never found her silent, never voted
    her out, and waited for op n for ever. Now neither counts (PROTOCOL.md 13.1): her
    last usable sign of life is the heartbeat that first named op n, until op n comes."""
    history = play_history()
    sam, alice = history.peers["sam"], history.peers["alice"]
    last = alice.logs[IDS["alice"]][-1]
    invalid = seal(KEYS["alice"], history.body("alice", Kind.LEAVE, 0, None, lamport=last.lamport))
    before = sam.signs_of_life()[IDS["alice"]]
    for now in (1.0, 2.0):  # copies alone, no heartbeat: no life
        sam.receive(invalid, "alice", now)
    assert sam.counters[DropReason.BACKDATED] == 2
    assert sam.signs_of_life()[IDS["alice"]] == before
    valid = alice.author(Kind.LEAVE, 0, None)
    for now in (3.0, 8.0, 20.0):  # heartbeats naming op n, which only ever comes invalid
        sam.receive(invalid, "alice", now)
        for datagram in _heartbeats_of(alice, now):
            sam.receive(datagram, "alice", now)
    assert sam.delivered(IDS["alice"]) == valid.seq - 1
    assert sam.signs_of_life()[IDS["alice"]] == 3.0
    sam.receive(valid.datagram(), "alice", 21.0)  # the valid op: life again
    assert sam.signs_of_life()[IDS["alice"]] == 21.0
    for datagram in _heartbeats_of(alice, 22.0):
        sam.receive(datagram, "alice", 22.0)
    assert sam.signs_of_life()[IDS["alice"]] == 22.0


def test_a_heartbeat_ahead_of_its_op_is_a_sign_of_life_once_the_op_comes() -> None:
    """The honest case the rule must not punish: Alice's heartbeat naming op n reaches Bob
    before op n does (reordered). Her heartbeats keep showing life as long as her ops keep
    coming: the claim's time moves with each op of hers delivered."""
    history = play_history()
    bob, alice = history.peers["bob"], history.peers["alice"]
    first = alice.author(Kind.LEAVE, 0, None)
    for datagram in _heartbeats_of(alice, 1.0):
        bob.receive(datagram, "alice", 1.0)
    assert bob.signs_of_life()[IDS["alice"]] == 1.0
    for datagram in _heartbeats_of(alice, 5.0):
        bob.receive(datagram, "alice", 5.0)
    assert bob.signs_of_life()[IDS["alice"]] == 1.0  # op n named since 1.0, not here yet
    bob.receive(first.datagram(), "alice", 5.5)
    assert bob.signs_of_life()[IDS["alice"]] == 5.5
    for datagram in _heartbeats_of(alice, 6.0):
        bob.receive(datagram, "alice", 6.0)
    assert bob.signs_of_life()[IDS["alice"]] == 6.0


def _heartbeat_to(sender: SyncPeer, receiver: SyncPeer, now: float) -> list[DivergenceDetected]:
    sender.outgoing()
    sender.tick(now)
    for _, datagram in sender.outgoing():
        if isinstance(decode(datagram, table=TABLE), Heartbeat):
            receiver.receive(datagram, "net", now)
    return [e for e in receiver.events() if isinstance(e, DivergenceDetected)]


def test_divergence_is_not_alarmed_after_an_expulsion_until_both_peers_have_made_it() -> None:
    """Issue 9, "divergence alarms after an expulsion": Bob holds the proof that Sam
    equivocated, Alice does not yet. Their vectors are equal but their folds differ (Sam's
    op counts for Alice only): not a divergence. Once Alice holds the proof too, equal
    vectors with unequal folds are one again."""
    history = play_history()
    alice, bob = history.peers["alice"], history.peers["bob"]
    first = seal(KEYS["sam"], history.body("sam", Kind.LEAVE, 0, None))
    second = seal(KEYS["sam"], history.body("sam", Kind.LEAVE, 0, None, lamport=10**6))
    for peer in (alice, bob):
        peer.receive(first, "sam", 1.0)
    bob.receive(second, "sam", 1.0)
    assert IDS["sam"] in bob.expelled
    assert IDS["sam"] not in alice.expelled
    assert alice.vector() == bob.vector()
    alice.set_state_hash(b"A" * 16)
    bob.set_state_hash(b"B" * 16)  # Sam's LEAVE does not count in Bob's fold
    assert _heartbeat_to(bob, alice, 2.0) == []
    assert _heartbeat_to(alice, bob, 2.0) == []
    alice.receive(second, "bob", 3.0)  # the proof reaches Alice
    assert IDS["sam"] in alice.expelled
    alice.set_state_hash(b"B" * 16)
    assert _heartbeat_to(bob, alice, 4.0) == []
    alice.set_state_hash(b"C" * 16)  # now a real divergence: first a probe, then the alarm
    assert _heartbeat_to(bob, alice, 5.0) == []
    (found,) = _heartbeat_to(bob, alice, 6.0)
    assert found.peer == bob.me


def test_an_equivocation_that_looks_like_a_divergence_brings_its_proof_instead() -> None:
    """Issue 9 (`fuzz hostile --adversaries equivocator`): Sam sent Alice one op n and Bob
    another. Equal vectors, unequal folds: Alice asks Bob for his latest ops, gets the other
    version and expels Sam, and no divergence is reported."""
    history = play_history()
    alice, bob = history.peers["alice"], history.peers["bob"]
    one = seal(KEYS["sam"], history.body("sam", Kind.LEAVE, 0, None))
    other = seal(KEYS["sam"], history.body("sam", Kind.LEAVE, 0, None, lamport=10**6))
    alice.receive(one, "sam", 1.0)
    bob.receive(other, "sam", 1.0)
    assert alice.vector() == bob.vector()
    alice.set_state_hash(b"A" * 16)
    bob.set_state_hash(b"B" * 16)
    assert _heartbeat_to(bob, alice, 2.0) == []
    bob.outgoing()
    for destination, datagram in alice.outgoing():
        if destination == "net":
            bob.receive(datagram, "alice", 2.0)
    for _, datagram in bob.outgoing():
        alice.receive(datagram, "bob", 2.0)
    assert IDS["sam"] in alice.expelled
    assert [e for e in alice.events() if isinstance(e, DivergenceDetected)] == []


def test_a_replayed_heartbeat_of_our_own_is_not_divergence_from_ourselves() -> None:
    alice = play_history().peers["alice"]
    alice.set_state_hash(b"A" * 16)
    alice.outgoing()
    alice.tick(1.0)
    own = [d for _, d in alice.outgoing() if isinstance(decode(d, table=TABLE), Heartbeat)]
    alice.set_state_hash(b"B" * 16)  # the same vector, folded again after news of a cheat
    alice.receive(own[0], "net", 2.0)
    assert [e for e in alice.events() if isinstance(e, DivergenceDetected)] == []


def test_one_op_at_the_lamport_ceiling_is_refused_and_moves_no_clock() -> None:
    """Issue 9, "one op at the Lamport ceiling crashes the next move": Alice signs an op
    stamped 2^48. Delivered, it would carry every peer's clock past the ceiling; it is
    refused (far past everything it names), the clock stays, and her real op goes through."""
    history = play_history()
    bob = history.peers["bob"]
    clock = bob.clock.value
    lie = seal(KEYS["alice"], history.body("alice", Kind.LEAVE, 0, None, lamport=MAX_LAMPORT))
    bob.receive(lie, "alice", 1.0)
    assert [(e.reason, e.message) for e in bob.events() if isinstance(e, OpRejected)] == [
        (DropReason.BACKDATED, "its Lamport time is far past everything it names")
    ]
    assert bob.clock.value == clock
    real = history.peers["alice"].author(Kind.LEAVE, 0, None)
    bob.receive(real.datagram(), "alice", 1.0)
    assert bob.delivered(IDS["alice"]) == real.seq
    assert bob.author(Kind.LEAVE, 0, None).lamport < MAX_LAMPORT_STEP


def test_an_op_stamped_a_whole_step_ahead_is_delivered_and_honest_peers_keep_up() -> None:
    """The limit is exact: MAX_LAMPORT_STEP past the op's floor is allowed. A peer whose
    clock jumped on such an op that its own next op does not name (a lobby op) stamps that
    op within the step, and its heartbeats promise nothing it could not keep."""
    history = play_history()
    alice, bob, host = (history.peers[n] for n in ("alice", "bob", "host"))
    floor = max(alice.logs[IDS["alice"]][-1].lamport, host.logs[IDS["host"]][0].lamport)
    ahead = seal(
        KEYS["alice"],
        history.body("alice", Kind.LEAVE, 0, None, lamport=floor + MAX_LAMPORT_STEP),
    )
    bob.receive(ahead, "alice", 1.0)
    assert [e.op.lamport for e in bob.events() if isinstance(e, OpDelivered)] == [
        floor + MAX_LAMPORT_STEP
    ]
    assert bob.clock.value > floor + MAX_LAMPORT_STEP
    bob.outgoing()
    bob.tick(2.0)
    beats = [decode(d, table=TABLE) for _, d in bob.outgoing()]
    promise = next(b for b in beats if isinstance(b, Heartbeat))
    own = bob.author(Kind.LEAVE, 0, None)  # names only the OPEN and Bob's own op
    assert promise.lamport < own.lamport
    assert own.lamport <= bob.logs[IDS["bob"]][-2].lamport + MAX_LAMPORT_STEP
    for peer in (host, alice):
        peer.receive(ahead, "alice", 3.0)
        peer.receive(own.datagram(), "bob", 3.0)
        assert peer.delivered(IDS["bob"]) == own.seq


def test_a_heartbeat_naming_seq_two_to_the_32_is_answered_at_once() -> None:
    """Issue 9 (`fuzz mutate`, seed 1: one datagram took 482 s): a heartbeat whose vector
    names an author's seq 2^32-1 made the gap search walk every seq up to it."""
    peer = observer()
    alice = IDS["alice"]
    have = peer.delivered(alice)
    parked = seal(KEYS["alice"], HISTORY.body("alice", Kind.LEAVE, 0, None, seq=have + 3))
    peer.receive(parked, "alice", 1.0)  # waits for her ops have+1 and have+2
    assert peer.delivered(alice) == have
    # (Its sender is asked for the gap at once: it holds what is below the op it sent.)
    (gap,) = [
        decode(d, table=TABLE) for destination, d in peer.outgoing() if destination == "alice"
    ]
    assert isinstance(gap, Request)
    assert [tuple(r) for r in gap.ranges] == [(alice, have + 1, have + 2)]
    vector = [(a, 2**32 - 1 if a == alice else n) for a, n in peer.vector()]
    lie = seal(KEYS["bob"], heartbeat_body(TABLE, IDS["bob"], 50, vector, b""))
    peer.receive(lie, "bob", 2.0)
    requests = [
        decode(d, table=TABLE)
        for _, d in peer.outgoing()
        if isinstance(decode(d, table=TABLE), Request)
    ]
    asked = [tuple(r) for q in requests for r in q.ranges if r[0] == alice]  # type: ignore[union-attr]
    assert asked == [(alice, have + 1, have + 2), (alice, have + 4, 2**32 - 1)]


def test_an_op_chained_on_another_version_of_its_previous_op_brings_the_proof() -> None:
    """Issue 9 (`fuzz hostile --adversaries equivocator`): Alice sends Bob one move n and Sam
    another. Their vectors are equal, so anti-entropy never moves either move n. When her move
    n+1 (chained on Bob's version) reaches Sam, he asks its sender for the move n it chains
    on, and holds the proof: Alice is expelled from n."""
    history = play_history()
    bob, sam = history.peers["bob"], history.peers["sam"]
    alice = IDS["alice"]
    one = seal(KEYS["alice"], history.body("alice", Kind.MOVE, 1, "turn"))
    other = seal(KEYS["alice"], history.body("alice", Kind.MOVE, 1, "stuck"))
    first = op_of(one)
    deps = list(first.round_deps)
    deps[history.peers["host"].epoch(1).index[alice]] += 1  # type: ignore[union-attr]
    after = seal(
        KEYS["alice"],
        history.body(
            "alice", Kind.MOVE, 1, "turn", seq=first.seq + 1, prev=first.hash,
            lamport=first.lamport + 1, deps=deps,
        ),
    )  # fmt: skip
    for datagram in (one, after):
        bob.receive(datagram, "alice", 1.0)
    sam.receive(other, "alice", 1.0)
    assert bob.delivered(alice) == sam.delivered(alice) + 1
    sam.outgoing()
    sam.receive(after, "bob", 2.0)  # pushed by Bob: it does not chain on Sam's move n
    to_bob = [d for to, d in sam.outgoing() if to == "bob"]
    asks = [decode(d, table=TABLE) for d in to_bob]
    assert [tuple(r) for q in asks for r in q.ranges] == [(alice, first.seq, first.seq)]  # type: ignore[union-attr]
    bob.outgoing()
    for datagram in to_bob:
        bob.receive(datagram, "sam", 2.0)
    for _, datagram in bob.outgoing():
        sam.receive(datagram, "bob", 2.0)
    assert sam.expelled[alice] == first.seq
