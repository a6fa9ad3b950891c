"""Admission and private tables (PROTOCOL.md 17), sans-I/O (the room: `admission_lan.Lan`).
Floods of HELLOs against the host's bounds: `test_admission_flood.py`."""

from __future__ import annotations

import pytest

from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import TableReplica
from protocol import admission
from protocol.admission import (
    MAX_ADMITTED,
    Refusal,
    admission_mac,
    table_key,
)
from protocol.envelope import seal
from protocol.errors import DropReason, LocalProtocolError
from protocol.messages import (
    NO_PREV,
    PLAYER,
    SPECTATOR,
    Answer,
    Batch,
    Challenge,
    Kind,
    Verdict,
    answer_body,
    decode,
    decode_op,
    hello_body,
    op_body,
)
from tools.mesh import PeerMesh

from .admission_lan import PASSPHRASE, Lan, keypair, play_a_round

# --- private tables: the passphrase --------------------------------------------------------


def test_a_joiner_with_the_passphrase_is_admitted_joins_and_plays() -> None:
    lan = Lan(private=True)
    alice = lan.add("alice", passphrase=PASSPHRASE)
    lan.join(alice)
    replica = lan.replicas[alice]
    assert replica.is_member
    assert replica.admission_refused is None
    # The host's signed ADMIT names her key; her JOIN covers it.
    admit = next(op for op in lan.host.sync.logs[lan.host.me] if op.kind == Kind.ADMIT)
    assert admit.payload == (replica.sync.key.public_key, PLAYER)
    join = replica.sync.logs[replica.me][0]
    assert dict(join.lobby_deps)[lan.host.me] == admit.seq
    play_a_round(lan, [0, alice])
    assert lan.host.current_round is not None
    assert replica.current_round is not None
    assert replica.seat is not None
    assert replica.sync.vector() == lan.host.sync.vector()


def test_a_private_table_plays_whole_rounds_with_bots() -> None:
    mesh = PeerMesh(players=3, rules=Rules(seats=3), seed=11, spectators=1, passphrase=PASSPHRASE)
    mesh.run(until=600, rounds=1)
    assert all(replica.is_member for replica in mesh.replicas)
    assert all(1 in finals for finals in mesh.finals)
    assert len(set(mesh.state_hashes())) == 1


@pytest.mark.parametrize("role", [PLAYER, SPECTATOR])
def test_a_wrong_passphrase_gets_no_membership_no_ops_and_a_reason(role: int) -> None:
    lan = Lan(private=True)
    alice = lan.add("alice", passphrase=PASSPHRASE)
    lan.join(alice)
    play_a_round(lan, [0, alice])
    mallory = lan.add("mallory", role=role, passphrase="plum tree at noon")
    lan.join(mallory)
    lan.deliver(40)  # heartbeats, retries: nothing more comes of it
    bad = lan.replicas[mallory]
    assert not bad.is_member
    assert bad.admission_refused == "wrong passphrase"
    assert mallory not in lan.host.sync.peers.values()
    # It holds the OPEN (a stranger's due) and nothing else: no spectating.
    assert bad.sync.vector() == ((lan.host.me, 1),)
    assert bad.current_round is None
    assert bad.sync.pending == {}  # nothing parked either: no op beyond the OPEN reached it
    # Its heartbeats and requests got no ops: nothing but the OPEN was ever sent to it.
    sent_to_it = [d for _, to, d in lan.wire if to == mallory]
    ops = [m for m in (_decoded(d, lan.table) for d in sent_to_it) if m is not None]
    assert {type(m).__name__ for m in ops} <= {"Batch", "Challenge", "Verdict", "Request"}
    assert lan.host.sync.counters[DropReason.BAD_PROOF] >= 1
    assert all(op.kind != Kind.ADMIT or op.payload[0] != bad.sync.key.public_key
               for op in lan.host.sync.logs[lan.host.me])  # fmt: skip


def _decoded(datagram: bytes, table: bytes) -> object | None:
    try:
        return decode(datagram, table=table)
    except Exception:
        return None


def test_no_passphrase_at_a_private_table_is_refused_without_asking() -> None:
    lan = Lan(private=True)
    joiner = lan.add("nopass")
    lan.join(joiner)
    replica = lan.replicas[joiner]
    assert replica.admission_refused == "the table is private: a passphrase is needed"
    assert not replica.is_member
    hellos = [d for frm, _, d in lan.wire if frm == joiner and decode_kind(d, lan.table) == 24]
    assert hellos == []


def decode_kind(datagram: bytes, table: bytes) -> int | None:
    message = _decoded(datagram, table)
    return None if message is None else {
        "Hello": 24, "Challenge": 25, "Answer": 26, "Verdict": 27
    }.get(type(message).__name__)  # fmt: skip


def test_a_stranger_at_a_private_table_learns_the_open_and_nothing_else() -> None:
    lan = Lan(private=True)
    alice = lan.add("alice", passphrase=PASSPHRASE)
    lan.join(alice)
    stranger = lan.add("stranger", passphrase=PASSPHRASE)
    replica = lan.replicas[stranger]
    # It asks for Alice's JOIN (a first op, which a public table gives anyone).
    replica.sync.request(0, [(lan.replicas[alice].me, 1, 1), (lan.host.me, 1, 5)], lan.now)
    sent_before = len(lan.wire)
    lan.flush()
    assert replica.sync.vector() == ((lan.host.me, 1),)
    # Nor was it sent anything more: Alice's JOIN (her name and key) never left the host
    # for it (the stranger's own checks would not have shown a leak, seed 19).
    answers = [_decoded(d, lan.table) for frm, to, d in lan.wire[sent_before:] if to == stranger]
    served = [op for batch in answers if isinstance(batch, Batch) for op in batch.ops]
    assert served, "the host did not answer at all"
    assert [decode_op(body, signature, table=lan.table).kind for body, signature in served] == [
        Kind.OPEN
    ]


# --- replayed answers -----------------------------------------------------------------------


def test_an_answer_replayed_to_the_host_or_under_another_nonce_is_refused() -> None:
    lan = Lan(private=True)
    alice = lan.add("alice", passphrase=PASSPHRASE)
    lan.join(alice)
    answers = [d for frm, _, d in lan.wire if frm == alice and decode_kind(d, lan.table) == 26]
    assert len(answers) == 1
    admits = _admits(lan.host)
    # The same answer again, from anywhere: the nonce is spent.
    for source in (alice, 7):
        lan.host.receive(answers[0], source, lan.now)
    assert lan.host.sync.counters[DropReason.REPLAYED] == 2
    assert lan.host.outgoing() == []
    # Mallory asks for a nonce of her own and answers with Alice's MAC: it is bound to
    # Alice's key and Alice's nonce, so it is wrong for Mallory.
    mallory = keypair("mallory")
    lan.host.receive(
        seal(mallory, hello_body(lan.table, mallory.key_id, mallory.public_key, 0, "m")), 9, lan.now
    )
    challenge = decode(lan.host.outgoing()[0][1], table=lan.table)
    assert isinstance(challenge, Challenge)
    stolen = decode(answers[0], table=lan.table)
    assert isinstance(stolen, Answer)
    forged = seal(mallory, answer_body(lan.table, mallory.key_id, challenge.nonce, stolen.mac))
    lan.host.receive(forged, 9, lan.now)
    verdict = decode(lan.host.outgoing()[0][1], table=lan.table)
    assert isinstance(verdict, Verdict)
    assert (verdict.admit_seq, verdict.reason) == (0, Refusal.WRONG_PASSPHRASE)
    assert _admits(lan.host) == admits


def test_the_mac_binds_table_keys_role_and_nonce() -> None:
    key = table_key(PASSPHRASE, b"table-01")
    host, joiner = keypair("h").public_key, keypair("j").public_key
    nonce = bytes(range(16))
    mac = admission_mac(key, b"table-01", host, joiner, PLAYER, nonce)
    others = [
        admission_mac(table_key(PASSPHRASE, b"table-02"), b"table-02", host, joiner, 0, nonce),
        admission_mac(key, b"table-01", joiner, host, PLAYER, nonce),
        admission_mac(key, b"table-01", host, keypair("x").public_key, PLAYER, nonce),
        admission_mac(key, b"table-01", host, joiner, SPECTATOR, nonce),
        admission_mac(key, b"table-01", host, joiner, PLAYER, bytes(16)),
        admission_mac(table_key("other", b"table-01"), b"table-01", host, joiner, 0, nonce),
    ]
    assert mac not in others
    assert len(set(others)) == len(others)


def _admits(replica: TableReplica) -> list[bytes]:
    return [op.payload[0] for op in replica.sync.logs[replica.me] if op.kind == Kind.ADMIT]


# --- the member list is bounded -------------------------------------------------------------


def _invented_join(lan: Lan, n: int) -> bytes:
    key = keypair(f"flood/{n}")
    body = op_body(
        Kind.JOIN, lan.table, key.key_id, 1, NO_PREV, 3, 0, [[lan.host.me, 1]],
        [key.public_key, f"j{n}", SPECTATOR],
    )  # fmt: skip
    return seal(key, body)


@pytest.mark.parametrize("private", [False, True])
def test_a_join_flood_is_refused_honest_peers_keep_playing_and_a_late_joiner_gets_in(
    private: bool,
) -> None:
    passphrase = PASSPHRASE if private else None
    lan = Lan(private=private)
    alice = lan.add("alice", passphrase=passphrase)
    lan.join(alice)
    play_a_round(lan, [0, alice])
    for n in range(500):
        datagram = _invented_join(lan, n)
        for replica in lan.replicas:
            replica.receive(datagram, 99, lan.now)
    lan.deliver(20)  # heartbeats go out: no tick raises, whatever the flood did
    for replica in lan.replicas:
        assert len(replica.sync.vector()) == 2  # the host and Alice, nobody invented
        counters = replica.sync.counters
        assert counters[DropReason.NOT_A_MEMBER] + counters[DropReason.RATE_LIMITED] >= 500
    late = lan.add("late", passphrase=passphrase)
    lan.join(late)
    assert lan.replicas[late].is_member
    assert lan.replicas[alice].sync.members.keys() == lan.host.sync.members.keys()
    assert len(lan.host.sync.members) == 3


def test_the_member_list_never_outgrows_a_heartbeat() -> None:
    """Even a host that admits everyone it can (no policy): the gate stops at MAX_ADMITTED,
    and a heartbeat naming every member fits a datagram."""
    lan = Lan(private=False)
    host = lan.host.sync
    keys = [keypair(f"member/{n}") for n in range(MAX_ADMITTED)]
    for key in keys:
        host.author(Kind.ADMIT, 0, [key.public_key, SPECTATOR])
    with pytest.raises(LocalProtocolError, match="admitted"):
        host.author(Kind.ADMIT, 0, [keypair("one too many").public_key, SPECTATOR])
    for n, key in enumerate(keys):
        body = op_body(
            Kind.JOIN, lan.table, key.key_id, 1, NO_PREV, 10_000 + n, 0,
            [[lan.host.me, 2 + n]], [key.public_key, f"member-{n:02d}", SPECTATOR],
        )  # fmt: skip
        lan.host.receive(seal(key, body), 500 + n, lan.now)
    assert len(host.vector()) == MAX_ADMITTED + 1 == 64
    for _ in range(3):
        lan.now += 1.0
        lan.host.tick(lan.now)  # must not raise: the heartbeat fits
    assert any(decode_kind(d, lan.table) is None for _, d in lan.host.outgoing())


def test_only_the_host_admits_and_never_the_same_key_twice() -> None:
    lan = Lan(private=False)
    alice = lan.add("alice")
    lan.join(alice)
    replica = lan.replicas[alice].sync
    with pytest.raises(LocalProtocolError, match="only the table's host admits"):
        replica.author(Kind.ADMIT, 0, [keypair("friend").public_key, PLAYER])
    with pytest.raises(LocalProtocolError, match="already admitted"):
        lan.host.sync.author(Kind.ADMIT, 0, [replica.key.public_key, PLAYER])
    assert admission.is_private(lan.host.sync) is False
