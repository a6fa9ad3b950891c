"""Admission and private tables (PROTOCOL.md 17), sans-I/O.

`Lan` moves datagrams the way the node does: a BROADCAST goes to the peers a replica
serves (`SyncPeer.peers`) and to the host's address it was given, never to everyone in
the room, so a peer the table did not admit hears only what is sent to it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable

import pytest

from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import TableReplica
from protocol import admission
from protocol.admission import (
    ADMIT_TTL,
    MAX_ADMITTED,
    MAX_SPECTATORS,
    PER_SOURCE_WAITING,
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
    Challenge,
    Kind,
    Verdict,
    answer_body,
    decode,
    hello_body,
    op_body,
)
from protocol.signing import SigningKeyPair
from protocol.sync import BROADCAST
from tools.mesh import PeerMesh

PASSPHRASE = "plum tree at midnight"
RULES = Rules(seats=2)


def _key(label: str) -> SigningKeyPair:
    return SigningKeyPair(hashlib.sha256(f"admission/{label}".encode()).digest())


def _randomness(label: str):  # type: ignore[no-untyped-def]
    counter = 0

    def draw(n: int) -> bytes:
        nonlocal counter
        counter += 1
        return hashlib.sha256(f"{label}/{counter}".encode()).digest()[:n]

    return draw


class Lan:
    """Replica 0 hosts; the others join through the host's address (index 0)."""

    def __init__(self, *, private: bool, spectators: bool = True) -> None:
        self.now = 0.0
        self.host = TableReplica.open_table(
            _key("host"),
            name="host",
            rules=RULES,
            spectators=spectators,
            randomness=_randomness("host"),
            private=private,
        )
        if private:
            self.host.use_table_key(table_key(PASSPHRASE, self.host.sync.table))
        self.replicas: list[TableReplica] = [self.host]
        self.wire: list[tuple[int, Hashable, bytes]] = []  # (from, to, datagram) as sent

    @property
    def table(self) -> bytes:
        return self.host.sync.table

    def add(self, label: str, *, role: int = PLAYER, passphrase: str | None = None) -> int:
        replica = TableReplica.joining(
            _key(label), self.table, name=label, role=role, randomness=_randomness(label)
        )
        if passphrase is not None:
            replica.use_table_key(table_key(passphrase, self.table))
        self.replicas.append(replica)
        index = len(self.replicas) - 1
        replica.request_table(self.host.me, 0, self.now)
        return index

    def deliver(self, rounds: int = 60) -> None:
        """Send what everyone has to say, and tick, until quiet (`rounds` heartbeats)."""
        for _ in range(rounds):
            self.now += 0.05
            for replica in self.replicas:
                replica.tick(self.now)
                if (
                    replica.sync.open_op is not None
                    and not replica.is_member
                    and replica.admission_refused is None
                    and replica.sync.admission.wanted
                ):
                    replica.join()  # what the node's autopilot does, every second
            self.flush()

    def flush(self) -> None:
        for _ in range(20):
            moved = False
            for index, replica in enumerate(self.replicas):
                for destination, datagram in replica.outgoing():
                    moved = True
                    for target in self._targets(index, destination):
                        self.wire.append((index, target, datagram))
                        self.replicas[target].receive(datagram, index, self.now)
            if not moved:
                return

    def _targets(self, sender: int, destination: Hashable) -> list[int]:
        if destination != BROADCAST:
            assert isinstance(destination, int)
            return [destination] if destination < len(self.replicas) else []
        sync = self.replicas[sender].sync
        targets = {s for s in sync.peers.values() if isinstance(s, int)}
        if sender != 0:
            targets.add(0)  # the host's address, from discovery
        targets.discard(sender)
        # Addresses of no replica here (a flooder's) are sent into the void.
        return sorted(t for t in targets if t < len(self.replicas))

    def join(self, index: int) -> None:
        self.deliver(2)
        self.replicas[index].join()
        self.deliver()


def _play_a_round(lan: Lan, players: list[int]) -> None:
    for index in players:
        lan.replicas[index].ready()
    lan.deliver()
    lan.host.start()
    lan.deliver()


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
    _play_a_round(lan, [0, alice])
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
    _play_a_round(lan, [0, alice])
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
    lan.flush()
    assert replica.sync.vector() == ((lan.host.me, 1),)


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
    mallory = _key("mallory")
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
    host, joiner = _key("h").public_key, _key("j").public_key
    nonce = bytes(range(16))
    mac = admission_mac(key, b"table-01", host, joiner, PLAYER, nonce)
    others = [
        admission_mac(table_key(PASSPHRASE, b"table-02"), b"table-02", host, joiner, 0, nonce),
        admission_mac(key, b"table-01", joiner, host, PLAYER, nonce),
        admission_mac(key, b"table-01", host, _key("x").public_key, PLAYER, nonce),
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
    key = _key(f"flood/{n}")
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
    _play_a_round(lan, [0, alice])
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


def test_a_hello_flood_from_one_address_gets_two_admissions_then_busy() -> None:
    lan = Lan(private=False)
    verdicts = []
    for n in range(40):
        key = _key(f"hello-flood/{n}")
        hello = hello_body(lan.table, key.key_id, key.public_key, SPECTATOR, f"h{n}")
        lan.host.receive(seal(key, hello), 66, lan.now)
        for _, datagram in lan.host.outgoing():
            message = decode(datagram, table=lan.table)
            if isinstance(message, Verdict):
                verdicts.append(message)
    assert sum(1 for v in verdicts if v.admit_seq) == PER_SOURCE_WAITING
    assert {v.reason for v in verdicts if not v.admit_seq} == {Refusal.BUSY}
    # An honest joiner from its own address is not shut out.
    honest = lan.add("honest")
    lan.join(honest)
    assert lan.replicas[honest].is_member


def test_a_hello_flood_from_many_addresses_fills_the_table_only_until_admissions_lapse() -> None:
    lan = Lan(private=False)
    admitted = 0
    for n in range(60):
        key = _key(f"many/{n}")
        hello = hello_body(lan.table, key.key_id, key.public_key, SPECTATOR, f"m{n}")
        lan.host.receive(seal(key, hello), 1000 + n, lan.now)
        for _, datagram in lan.host.outgoing():
            message = decode(datagram, table=lan.table)
            if isinstance(message, Verdict) and message.admit_seq:
                admitted += 1
    # The host counts itself and the keys it admitted that have not joined yet.
    limit = RULES.seats + MAX_SPECTATORS
    assert admitted == limit - 1
    honest = lan.add("honest")
    lan.join(honest)
    assert lan.replicas[honest].admission_refused == "the table is full"
    # None of the flood's keys ever joined: after ADMIT_TTL they count no more.
    lan.replicas[honest].sync.admission.refused = None
    lan.now += ADMIT_TTL + 1
    lan.join(honest)
    assert lan.replicas[honest].is_member


def test_the_member_list_never_outgrows_a_heartbeat() -> None:
    """Even a host that admits everyone it can (no policy): the gate stops at MAX_ADMITTED,
    and a heartbeat naming every member fits a datagram."""
    lan = Lan(private=False)
    host = lan.host.sync
    keys = [_key(f"member/{n}") for n in range(MAX_ADMITTED)]
    for key in keys:
        host.author(Kind.ADMIT, 0, [key.public_key, SPECTATOR])
    with pytest.raises(LocalProtocolError, match="admitted"):
        host.author(Kind.ADMIT, 0, [_key("one too many").public_key, SPECTATOR])
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
        replica.author(Kind.ADMIT, 0, [_key("friend").public_key, PLAYER])
    with pytest.raises(LocalProtocolError, match="already admitted"):
        lan.host.sync.author(Kind.ADMIT, 0, [replica.key.public_key, PLAYER])
    assert admission.is_private(lan.host.sync) is False
