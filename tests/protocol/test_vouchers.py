"""Authenticity by voucher (PROTOCOL.md 4, step 6): an author's op one seq later that names an
op by `prev` vouches for it, whatever that op's own signature, so a catching-up peer checks
one signature per run of an author's ops. What a peer, a relayer or an attacker would see.

The history is the conformance vectors' (`tools.gen_vectors.play_history`): the host's
chain is its OPEN, four ADMITs, a READY, the START, a MOVE and a MIX.
"""

from __future__ import annotations

import pytest

from protocol import signing, sync_vouchers
from protocol.envelope import seal, seal_parts
from protocol.errors import DropReason
from protocol.messages import (
    PLAYER,
    Batch,
    Kind,
    Op,
    decode,
    decode_op,
    op_body,
    seal_op,
)
from protocol.signing import op_hash
from protocol.sync import SyncPeer
from tests.protocol.test_hostile import HISTORY, IDS, next_op, observer
from tools.gen_vectors import KEYS, TABLE, History, play_history

HOST = KEYS["host"]


@pytest.fixture(scope="module")
def history() -> History:
    return play_history()


def _host_ops(history: History, first: int, last: int) -> list[Op]:
    return [op for name, op in history.ops if name == "host" and first <= op.seq <= last]


def _relay(ops: list[tuple[bytes, bytes]], sender: str = "alice") -> bytes:
    """A BATCH of (body, signature) pairs as a relayer sends them."""
    key = KEYS[sender]
    return seal(key, [int(Kind.BATCH), TABLE, key.key_id, [list(pair) for pair in ops]])


def _garbled(op: Op) -> tuple[bytes, bytes]:
    return op.body, bytes(64)


def _holding_the_open(history: History) -> SyncPeer:
    peer = SyncPeer(KEYS["sam"], TABLE)
    peer.receive(_host_ops(history, 1, 1)[0].datagram(), "host", 0.0)
    peer.outgoing()
    return peer


class _Verifications:
    """Counts the Ed25519 checks the voucher module makes."""

    def __init__(self) -> None:
        self.count = 0


@pytest.fixture
def verifications(monkeypatch: pytest.MonkeyPatch) -> _Verifications:
    seen = _Verifications()
    real = signing.verify

    def counting(public_key: bytes, body: bytes, signature: bytes) -> None:
        seen.count += 1
        real(public_key, body, signature)

    monkeypatch.setattr(sync_vouchers, "verify", counting)
    return seen


def _admits(history: History) -> list[Op]:
    """The host's ADMITs, seqs 2 to 5: one run of its chain, small enough for one BATCH."""
    admits = _host_ops(history, 2, 5)
    assert [op.kind for op in admits] == [Kind.ADMIT] * 4
    return admits


def test_one_signature_vouches_for_a_whole_run_of_an_authors_ops_in_a_batch(
    history: History, verifications: _Verifications
) -> None:
    peer = _holding_the_open(history)
    admits = _admits(history)
    # Only the top of the run is signed; the three below it carry zero bytes.
    relayed = [_garbled(op) for op in admits[:-1]] + [(admits[-1].body, admits[-1].signature)]
    verifications.count = 0
    peer.receive(_relay(relayed), "alice", 1.0)
    assert peer.delivered(HOST.key_id) == 5
    assert peer.counters.total == 0
    assert verifications.count == 1  # the top op's; each op below is named by the one above


def test_a_garbled_op_whose_successor_names_another_body_is_dropped(history: History) -> None:
    peer = _holding_the_open(history)
    admit, successor = _admits(history)[:2]
    other = op_body(
        Kind.ADMIT,
        TABLE,
        HOST.key_id,
        admit.seq,
        admit.prev,
        admit.lamport,
        0,
        [list(d) for d in admit.lobby_deps],
        [KEYS["mallory"].public_key, PLAYER],
    )
    forged = seal_op(HOST, other)
    peer.receive(_relay([_garbled(forged), (successor.body, successor.signature)]), "alice", 1.0)
    assert peer.counters[DropReason.BAD_SIGNATURE] == 1
    assert peer.delivered(HOST.key_id) == 1  # the successor waits for the real op 2
    assert successor.seq in peer.pending[HOST.key_id]


def test_no_op_of_another_author_vouches_for_an_op(history: History) -> None:
    everything = history.datagrams()
    moves = [op for name, op in history.ops if name == "alice" and op.kind == Kind.MOVE]
    target = moves[-1]
    upto = next(i for i, (_, op) in enumerate(history.ops) if op is target)
    peer = SyncPeer(KEYS["sam"], TABLE)
    for datagram in everything[:upto]:
        peer.receive(datagram, "history", 0.0)
    peer.outgoing()
    assert peer.delivered(target.author) == target.seq - 1
    # The host signs an op one seq past Alice's whose `prev` names her op: it is not hers.
    host_seq = peer.delivered(HOST.key_id) + 1
    impostor = seal_op(
        HOST,
        op_body(Kind.LEAVE, TABLE, HOST.key_id, host_seq, target.hash, 10**6, 0, [], None),
    )
    assert impostor.seq != target.seq + 1 or impostor.author != target.author
    relayed = [_garbled(target), (impostor.body, impostor.signature)]
    peer.receive(_relay(relayed), "bob", 1.0)
    assert peer.counters[DropReason.BAD_SIGNATURE] == 1
    assert peer.delivered(target.author) == target.seq - 1


def test_a_garbled_op_alone_is_taken_once_its_successor_waits_here(history: History) -> None:
    peer = _holding_the_open(history)
    admit, successor = _admits(history)[:2]
    peer.receive(successor.datagram(), "alice", 1.0)  # parked: op 2 is missing
    assert peer.delivered(HOST.key_id) == 1
    peer.receive(_relay([_garbled(admit)]), "bob", 1.1)
    assert peer.delivered(HOST.key_id) == 3
    assert peer.counters.total == 0


def test_a_garbled_op_alone_with_nothing_to_vouch_for_it_is_dropped(history: History) -> None:
    peer = _holding_the_open(history)
    admit = _admits(history)[0]
    peer.receive(_relay([_garbled(admit)]), "bob", 1.0)
    assert peer.counters[DropReason.BAD_SIGNATURE] == 1
    assert peer.delivered(HOST.key_id) == 1


def _vouched_peer(history: History) -> SyncPeer:
    """A peer that took the host's ADMITs 2-4 on the voucher of ADMIT 5, 2-4 garbled."""
    peer = _holding_the_open(history)
    admits = _admits(history)
    relayed = [_garbled(op) for op in admits[:-1]] + [(admits[-1].body, admits[-1].signature)]
    peer.receive(_relay(relayed), "alice", 1.0)
    assert peer.delivered(HOST.key_id) == 5
    return peer


def _answer(server: SyncPeer, asker: SyncPeer, ranges: list[tuple[bytes, int, int]]) -> list[Op]:
    """The ops `server` answers a REQUEST of `asker` with; `asker` receives them."""
    asker.request("server", ranges, 2.0)
    for _, datagram in asker.outgoing():
        server.receive(datagram, "asker", 2.0)
    ops: list[Op] = []
    for destination, datagram in server.outgoing():
        assert destination == "asker"
        message = decode(datagram, table=TABLE)
        assert isinstance(message, Batch)
        ops += [decode_op(body, signature, table=TABLE) for body, signature in message.ops]
        asker.receive(datagram, "server", 2.0)
    return ops


@pytest.mark.parametrize("last", [2, 4])
def test_an_op_taken_on_a_voucher_is_relayed_after_its_voucher_once(
    history: History, last: int
) -> None:
    # Op 2's own signature is garbled (and 3's and 4's): ops 3 to 5 (5 signed, each naming
    # the one below) come with it, highest first, and the asker takes op 2 as the server
    # did. Asked for 2 to 4, which share those vouchers, each op still comes once, not a
    # chain for each op asked for. (Seed 15: without the record of what was sent, 5 and 4
    # went three times, 3 twice.)
    server = _vouched_peer(history)
    asker = _holding_the_open(history)
    served = _answer(server, asker, [(HOST.key_id, 2, last)])
    assert [op.seq for op in served] == [5, 4, 3, 2]
    assert asker.delivered(HOST.key_id) == 5
    assert asker.counters.total == 0
    assert asker.duplicates == 0


def test_a_garbled_op_has_its_own_signature_checked_once_however_often_it_is_relayed(
    history: History, verifications: _Verifications
) -> None:
    server = _vouched_peer(history)
    checks = []
    for _ in range(2):
        asker = _holding_the_open(history)
        verifications.count = 0
        _answer(server, asker, [(HOST.key_id, 2, 2)])
        assert asker.delivered(HOST.key_id) == 5
        checks.append(verifications.count)
    # The first answer checked the own signatures of ops 2, 3 and 4 (all garbled); the
    # second checked none. (The asker's own check is counted too: one, of op 5, each.)
    assert checks == [3 + 1, 1]


def test_an_op_taken_on_a_voucher_whose_own_signature_holds_is_relayed_alone(
    history: History, verifications: _Verifications
) -> None:
    peer = _holding_the_open(history)
    admits = _admits(history)
    verifications.count = 0
    peer.receive(_relay([(op.body, op.signature) for op in admits]), "alice", 1.0)
    assert verifications.count == 1
    checks = []
    for _ in range(2):
        asker = _holding_the_open(history)
        verifications.count = 0
        served = _answer(peer, asker, [(HOST.key_id, 2, 2)])
        assert [op.seq for op in served] == [2]
        checks.append(verifications.count)
    # Op 2's own signature checked once, when first relayed; the asker checks it each time.
    assert checks == [1 + 1, 1]


def test_a_garbled_op_is_relayed_with_the_first_voucher_whose_own_signature_holds(
    history: History,
) -> None:
    # Op 2 garbled, ops 3 to 5 genuine: 2 and 3 and 4 were all taken on vouchers, but op 3's
    # own signature holds, so op 3 alone need come with op 2 (not 4 and 5 as well).
    server = _holding_the_open(history)
    admits = _admits(history)
    relayed = [_garbled(admits[0])] + [(op.body, op.signature) for op in admits[1:]]
    server.receive(_relay(relayed), "alice", 1.0)
    assert server.delivered(HOST.key_id) == 5
    asker = _holding_the_open(history)
    served = _answer(server, asker, [(HOST.key_id, 2, 2)])
    assert [op.seq for op in served] == [3, 2]
    assert asker.delivered(HOST.key_id) == 3
    assert asker.counters.total == 0


def test_an_equivocation_proved_by_a_vouched_twin_reaches_every_peer(history: History) -> None:
    everything = history.datagrams()
    witness, bystander = SyncPeer(KEYS["sam"], TABLE), SyncPeer(KEYS["bob"], TABLE)
    for peer in (witness, bystander):
        for datagram in everything:
            peer.receive(datagram, "history", 0.0)
        peer.outgoing()
    real = _admits(history)[0]
    # A host that signs a second chain from seq 2: its op 3 names its other op 2, which it
    # sends with a garbled signature. Its op 3 vouches for it: that is the proof.
    deps = [list(d) for d in real.lobby_deps]
    twin = seal_op(
        HOST,
        op_body(
            Kind.ADMIT,
            TABLE,
            HOST.key_id,
            2,
            real.prev,
            real.lamport,
            0,
            deps,
            [KEYS["mallory"].public_key, PLAYER],
        ),
    )
    above = seal_op(
        HOST,
        op_body(
            Kind.ADMIT,
            TABLE,
            HOST.key_id,
            3,
            twin.hash,
            real.lamport + 1,
            0,
            [[HOST.key_id, 2]],
            [KEYS["carol"].public_key, PLAYER],
        ),
    )
    witness.receive(_relay([_garbled(twin), (above.body, above.signature)], "carol"), "c", 1.0)
    assert witness.expelled[HOST.key_id] == 2
    for _, datagram in witness.outgoing():
        bystander.receive(datagram, "witness", 1.1)
    assert bystander.expelled[HOST.key_id] == 2
    assert bystander.evidence[HOST.key_id][1].body == twin.body


# --- only an op that is itself authentic vouches ------------------------------------------


def test_an_op_of_an_author_we_have_no_key_for_vouches_for_nothing(history: History) -> None:
    # Alice's JOIN carries her key, but her next op, parked until that key is known, has
    # not been checked: a JOIN with no signature (anyone's key in it) is dropped, not taken
    # on its word.
    peer = _holding_the_open(history)
    alice = KEYS["alice"].key_id
    join, ready = [op for name, op in history.ops if name == "alice" and op.seq <= 2]
    assert (join.kind, ready.kind) == (Kind.JOIN, Kind.READY)
    peer.receive(_relay([_garbled(join), _garbled(ready)]), "bob", 1.0)
    assert alice not in peer.keys
    assert peer.delivered(alice) == 0
    assert peer.counters[DropReason.BAD_SIGNATURE] >= 1


def test_an_op_past_its_authors_expulsion_vouches_for_nothing() -> None:
    # Alice is expelled from seq 7 (two versions of it) and her op 6 was refused (stamped
    # too low), so nothing of hers from seq 6 on is held. Her op 7 is never taken again, so
    # it is never checked: an op 6 it names, with no signature at all, is dropped.
    peer = observer()
    alice = IDS["alice"]
    six = peer.delivered(alice) + 1
    for payload in ("stuck", "recycle"):
        peer.receive(next_op("alice", seq=six + 1, prev=b"\x01" * 16, payload=payload), "x", 1.0)
    peer.receive(next_op("alice", lamport=1), "x", 1.0)  # refused: its chain is dropped
    assert peer.expelled == {alice: six + 1}
    assert not peer.pending.get(alice)
    peer.events()
    _, forged, _ = seal_parts(KEYS["alice"], HISTORY.body("alice", Kind.MOVE, 1, "turn"))
    on_top = HISTORY.body("alice", Kind.MOVE, 1, "stuck", seq=six + 1, prev=op_hash(forged))
    _, seven, _ = seal_parts(KEYS["alice"], on_top)
    peer.receive(_relay([(seven, bytes(64)), (forged, bytes(64))], sender="bob"), "bob", 2.0)
    assert peer.delivered(alice) == six - 1
    assert peer.events() == []
    # Nor is a third version of op 7 itself taken, properly signed though it is: nothing of
    # hers from her expulsion on is held again.
    peer.receive(next_op("alice", seq=six + 1, prev=b"\x03" * 16, payload="turn"), "x", 3.0)
    assert not peer.pending.get(alice)


def test_an_op_refused_for_its_chain_still_vouches_for_the_twin_it_names() -> None:
    # Alice signed two versions of her op 5 and her op 6 on top of the second. A peer holds
    # the first; a BATCH brings op 6 (signed) and the second version (its signature
    # garbled). Op 6 does not follow the op 5 held here, so it is refused, but it is
    # authentic, and it vouches for the version it names: the equivocation is proven.
    peer = observer()
    alice = IDS["alice"]
    held = peer.logs[alice][-1]
    mine = peer.epochs[held.epoch].participants.index(alice)  # her own place in the deps
    twin = op_body(held.kind, held.table, held.author, held.seq, held.prev, held.lamport,
                   held.epoch, list(held.round_deps), bytes(len(held.payload)))  # fmt: skip
    _, twin_body, _ = seal_parts(KEYS["alice"], twin)
    deps = [seen + 1 if i == mine else seen for i, seen in enumerate(held.round_deps)]
    on_top = op_body(Kind.MOVE, held.table, held.author, held.seq + 1, op_hash(twin_body),
                     held.lamport + 1, held.epoch, deps, "stuck")  # fmt: skip
    _, top_body, top_signature = seal_parts(KEYS["alice"], on_top)
    peer.receive(_relay([(top_body, top_signature), (twin_body, bytes(64))], "bob"), "bob", 2.0)
    assert peer.expelled == {alice: held.seq}
    assert peer.delivered(alice) == held.seq  # the version held stays; op 6 is not taken
