"""Write the protocol's test vectors, `protocol/vectors/*.json`.

    .venv/bin/python -m tools.gen_vectors            # (re)write the files
    .venv/bin/python -m tools.gen_vectors --check    # exit 1 if the files are stale

Everything is deterministic: fixed Ed25519 seeds, a fixed table nonce, fixed deal seeds and
a fixed simulated time, and Ed25519 signatures are deterministic themselves. So the files are
a pure function of the protocol code, and `tests/protocol/test_vectors.py` checks that
regenerating them in memory gives the committed bytes.

A small table history is played out by real `SyncPeer`s that hear every datagram at once:
the host opens a table, Alice, Bob and Carol join as players and Sam as a spectator, Carol
leaves, the host and Alice say they are ready for round 1, the host starts it, both move.
Each REVEAL of their deal seeds is a vector on its own (after it, its author makes no more
moves, and the invalid vectors still need both playing). Every op of that history is a valid
vector; the sync messages and the invalid datagrams are made against it. The peers are Nerts
peers: their `SyncPeer` runs the game's checks at the gate (`nerts_p2p/table/gate.py`), so
the vectors cover those too (a READY that could not start a round, rules that are not valid).

Each file is a JSON list of objects:

- `name`: unique across the files; `table`: hex of the table id the receiving peer is at
  (the same for every vector); `hex`: the exact datagram.
- `public_key`: hex of the key that signed it (for "signature by another key" that is the
  other key, so `key_id(public_key)` is not the author), or null if nothing is signed.
- `valid`: whether a peer of the table takes it. `reason`: for an invalid one, the
  `DropReason` value the receiving peer counts; else null.
- `decoded`: the message as JSON, every bytes value as hex, tuples as lists, or null when
  `messages.decode` refuses the datagram even for the table it names. An op has `kind`,
  `table`, `author`, `seq`, `prev`, `lamport`, `epoch`, `lobby_deps` (epoch 0: pairs
  [author, seq]) or `round_deps` (a round: one seq per participant), `payload`, and also
  `signature` and `hash` (its `op_hash`, the next op's prev). HEARTBEAT has `table`,
  `sender`, `lamport`, `vector`, `state_hash`; REQUEST has `ranges`; BATCH has `ops`
  ([body, signature] pairs); each also has `signature`.
- `context`: hex datagrams a fresh `SyncPeer` of the table (any key of its own) receives
  first, in order, each of them valid; then the vector's datagram is judged.
- `effect` (only in `start_race.json`, PROTOCOL.md 13.1 and 13.3): what a valid op does
  once delivered: `begins_round` (a START: its round begins), `begins_no_round` (a former
  starter's START: delivered, and no round begins), `counts_for_nothing` (a DEPART signed
  after its author's READY for the next round, against someone who is not that round's
  starter: delivered, and its target does not depart).

READY, START, MOVE and REVEAL carry game data (rules, commitments, shown cards, move text)
that this layer checks only for wire types. The values here are plausible, not a playable
deal: the commitments are real (`deal_commitment`) so each REVEAL opens its READY, but the
cards a READY shows are fixed numbers rather than the seed's deal.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack

from nerts_p2p.table.gate import TableGate
from nerts_p2p.table.presence import seal_escrow
from nerts_p2p.table.replica import deal_commitment
from protocol.admission import (
    KDF_MEMLIMIT,
    KDF_OPSLIMIT,
    admission_mac,
    passphrase_salt,
    table_key,
)
from protocol.codec import pack
from protocol.envelope import PROTOCOL_VERSION, open_envelope, seal
from protocol.errors import DropReason, RemoteProtocolError
from protocol.messages import (
    ADMIT_NONCE_LEN,
    MIX_NONCE_LEN,
    NO_PREV,
    PLAYER,
    SPECTATOR,
    Answer,
    Batch,
    Challenge,
    Evidence,
    Heartbeat,
    Hello,
    Kind,
    Message,
    Op,
    Request,
    Verdict,
    batch_body,
    decode,
    derive_table_id,
    evidence_body,
    heartbeat_body,
    op_body,
    request_body,
)
from protocol.order import nonce_commitment
from protocol.signing import SigningKeyPair, sign
from protocol.sync import SyncPeer

VECTORS_DIR = Path(__file__).resolve().parent.parent / "protocol" / "vectors"
FILES = ("ops.json", "sync.json", "invalid.json", "departure.json", "start_race.json")
ADMISSION_FILE = "admission.json"  # the handshake and its keys (not judged one by one)


def _key(label: str) -> SigningKeyPair:
    return SigningKeyPair(hashlib.sha256(b"nerts-p2p/vectors/key\0" + label.encode()).digest())


def _secret(label: str, n: int) -> bytes:
    return hashlib.sha256(b"nerts-p2p/vectors/secret\0" + label.encode()).digest()[:n]


KEYS = {name: _key(name) for name in ("host", "alice", "bob", "carol", "sam", "mallory")}
NONCE = b"vectors!"
TABLE = derive_table_id(KEYS["host"].public_key, NONCE)
OTHER_TABLE = derive_table_id(KEYS["host"].public_key, b"another")
TABLE_RULES = [["seats", 4], ["target", 100]]
ROUND_RULES = [["seats", 2], ["target", 100]]
SECRETS = {name: (_secret(f"{name}/seed", 32), _secret(f"{name}/salt", 16)) for name in KEYS}
SHOWN = {"host": [12, 3, 20, 41, 7], "alice": [30, 0, 17, 38, 9]}
MIX_NONCES = {name: _secret(f"{name}/mix", MIX_NONCE_LEN) for name in KEYS}


def ready_payload(name: str, number: int, shown: Sequence[int]) -> list[object]:
    """A READY as `TableReplica.ready` makes it: deal commitment, shown cards, the mix
    nonce's commitment and the escrow of seed || salt || nonce sealed to the author."""
    seed, salt = SECRETS[name]
    nonce = MIX_NONCES[name]
    box_nonce = _secret(f"{name}/box/{number}", 24)
    return [
        number,
        deal_commitment(seed, salt),
        list(shown),
        nonce_commitment(nonce),
        seal_escrow(KEYS[name], seed + salt + nonce, box_nonce),
    ]


def to_json(value: object) -> Any:
    """Bytes as hex, tuples and lists as lists; everything else as it is."""
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    return value


#: Each sync message's fields in its `decoded` form, between `sender` and `signature`.
_MESSAGE_FIELDS: dict[type, tuple[Kind, tuple[str, ...]]] = {
    Heartbeat: (Kind.HEARTBEAT, ("lamport", "vector", "state_hash")),
    Request: (Kind.REQUEST, ("ranges",)),
    Evidence: (Kind.EVIDENCE, ("heartbeats",)),
    Hello: (Kind.HELLO, ("public_key", "role", "name")),
    Challenge: (Kind.CHALLENGE, ("joiner", "nonce")),
    Answer: (Kind.ANSWER, ("nonce", "mac")),
    Verdict: (Kind.VERDICT, ("joiner", "admit_seq", "reason")),
    Batch: (Kind.BATCH, ("ops",)),
}
_OP_FIELDS = ("table", "author", "seq", "prev", "lamport", "epoch")


def message_json(message: Message) -> dict[str, Any]:
    """The `decoded` form of a message (see the module docstring)."""
    if isinstance(message, Op):
        deps = "lobby_deps" if message.epoch == 0 else "round_deps"
        op_names = (*_OP_FIELDS, deps, "payload", "signature", "hash")
        return {"kind": message.kind.name, **{n: to_json(getattr(message, n)) for n in op_names}}
    kind, fields = _MESSAGE_FIELDS[type(message)]
    names = ("table", "sender", *fields, "signature")
    return {"kind": kind.name, **{n: to_json(getattr(message, n)) for n in names}}


def decoded_json(datagram: bytes) -> dict[str, Any] | None:
    """`message_json` of the datagram decoded for the table it names, or None."""
    try:
        body = open_envelope(datagram).body
        named = body[1] if isinstance(body, list) and len(body) > 1 else None
        table = named if isinstance(named, bytes) else b""
        return message_json(decode(datagram, table=table))
    except RemoteProtocolError:
        return None


def raw_envelope(body: bytes, signer: SigningKeyPair, version: int = PROTOCOL_VERSION) -> bytes:
    """An envelope around exactly these body bytes, whatever they hold."""
    return pack([version, body, sign(signer, body)])


@dataclass
class Vector:
    name: str
    datagram: bytes
    signer: SigningKeyPair | None
    reason: DropReason | None
    context: Sequence[bytes]
    effect: str | None = None  # see the module docstring

    def as_json(self) -> dict[str, Any]:
        out = {
            "name": self.name,
            "table": TABLE.hex(),
            "hex": self.datagram.hex(),
            "public_key": self.signer.public_key.hex() if self.signer else None,
            "valid": self.reason is None,
            "reason": self.reason.value if self.reason else None,
            "decoded": decoded_json(self.datagram),
            "context": [c.hex() for c in self.context],
        }
        if self.effect is not None:
            out["effect"] = self.effect
        return out


@dataclass
class History:
    """Peers that hear every datagram at once, and the ops they authored, in order."""

    peers: dict[str, SyncPeer] = field(default_factory=dict)
    ops: list[tuple[str, Op]] = field(default_factory=list)  # (name, op)
    snapshots: dict[str, list[object]] = field(default_factory=dict)  # bodies made on the way
    now: float = 0.0

    def __post_init__(self) -> None:
        for name, key in KEYS.items():
            if name != "mallory":
                self.peers[name] = TableGate(SyncPeer(key, TABLE)).install().sync

    def author(self, name: str, kind: Kind, epoch: int, payload: object) -> Op:
        op = self.peers[name].author(kind, epoch, payload)
        self.send(name, [datagram for _, datagram in self.peers[name].outgoing()])
        self.ops.append((name, op))
        return op

    def send(self, sender: str, datagrams: Sequence[bytes]) -> None:
        self.now += 0.001
        for name, peer in self.peers.items():
            if name != sender:
                for datagram in datagrams:
                    peer.receive(datagram, sender, self.now)
                assert peer.counters.total == 0, (name, peer.counters)
                peer.outgoing()
        for peer in self.peers.values():
            peer.events()

    def datagrams(self, upto: int | None = None) -> list[bytes]:
        """The first `upto` ops of the history (all by default) as datagrams."""
        return [op.datagram() for _, op in self.ops[:upto]]

    def body(
        self, name: str, kind: Kind, epoch: int, payload: object, **override: object
    ) -> list[object]:
        """The body `name` would author next (as `SyncPeer.author` makes it), with fields
        overridden to break it."""
        peer = self.peers[name]
        seq = peer.delivered(peer.me) + 1
        deps = peer.deps_for(kind, epoch, payload)
        fields: dict[str, object] = {
            "kind": kind,
            "table": TABLE,
            "author": peer.me,
            "seq": seq,
            "prev": peer.logs[peer.me][-1].hash if seq > 1 else NO_PREV,
            "lamport": peer.clock.value + 1,
            "epoch": epoch,
            "deps": deps,
            "payload": payload,
        }
        fields.update(override)
        return op_body(**fields)  # type: ignore[arg-type]


def history_to_start() -> History:
    """The table history up to the host's START of round 1 (its last op)."""
    h = History()
    h.author(
        "host", Kind.OPEN, 0, [KEYS["host"].public_key, "host", TABLE_RULES, 4, True, NONCE, False]
    )
    for name in ("alice", "bob", "carol", "sam"):
        role = SPECTATOR if name == "sam" else PLAYER
        # Only a key the host admitted may JOIN (PROTOCOL.md 17).
        h.author("host", Kind.ADMIT, 0, [KEYS[name].public_key, role])
        h.author(name, Kind.JOIN, 0, [KEYS[name].public_key, name, role])
    h.author("carol", Kind.LEAVE, 0, None)
    for name in ("host", "alice"):
        h.author(name, Kind.READY, 0, ready_payload(name, 1, SHOWN[name]))
    start = [[KEYS["host"].key_id, KEYS["alice"].key_id], [0, 1], ROUND_RULES]
    h.snapshots["start_by_alice"] = h.body("alice", Kind.START, 1, start)
    other_rules = [start[0], start[1], [["seats", 2], ["target", 50]]]
    h.snapshots["start_other_rules"] = h.body("host", Kind.START, 1, other_rules)
    h.author("host", Kind.START, 1, start)
    return h


def play_history() -> History:
    """The table history every vector is made against (see the module docstring)."""
    h = history_to_start()
    h.author("alice", Kind.MOVE, 1, "turn +5H+7C+9D")
    h.author("host", Kind.MOVE, 1, "AH n-f +QS")
    h.author("alice", Kind.MOVE, 1, "9D d-w1")
    h.snapshots["mix_wrong_host"] = h.body("host", Kind.MIX, 1, _secret("wrong", MIX_NONCE_LEN))
    for name in ("host", "alice"):
        # (A real peer reveals its nonce before it moves; the sync layer does not order
        # these, the fold rejects moves that did not see every nonce. Here the MIX ops
        # come after the moves so the other vectors keep their seqs.)
        h.author(name, Kind.MIX, 1, MIX_NONCES[name])
    # No REVEAL here: after its REVEAL an author makes no more moves in the round, and the
    # invalid vectors need both still playing. Each REVEAL is a vector of its own.
    return h


_OP_NAMES = {
    Kind.OPEN: "open",
    Kind.JOIN: "join",
    Kind.LEAVE: "leave",
    Kind.READY: "ready",
    Kind.START: "start",
    Kind.MOVE: "move",
    Kind.REVEAL: "reveal",
    Kind.MIX: "mix",
    Kind.DEPART: "depart",
    Kind.ADMIT: "admit",
}


def op_vectors(h: History) -> list[Vector]:
    out = []
    seen: dict[str, int] = {}
    for i, (name, op) in enumerate(h.ops):
        label = f"{_OP_NAMES[op.kind]}_{name}"
        if op.kind == Kind.JOIN:
            label = f"join_{'spectator' if op.payload[2] == SPECTATOR else 'player'}_{name}"
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            label = f"{label}_{seen[label]}"
        out.append(Vector(label, op.datagram(), KEYS[name], None, h.datagrams(i)))
    # Any member may leave in any epoch, even in a round it does not play (it is not ordered
    # in that round). Not part of the history: the other vectors keep Bob at the table.
    leave = seal(KEYS["bob"], h.body("bob", Kind.LEAVE, 1, None))
    out.append(Vector("leave_in_a_round_not_played_bob", leave, KEYS["bob"], None, h.datagrams()))
    for name in ("host", "alice"):
        reveal = seal(KEYS[name], h.body(name, Kind.REVEAL, 1, list(SECRETS[name])))
        out.append(Vector(f"reveal_{name}", reveal, KEYS[name], None, h.datagrams()))
    return out


def sync_vectors(h: History) -> list[Vector]:
    host, alice = h.peers["host"], h.peers["alice"]
    everything = h.datagrams()
    host.set_state_hash(hashlib.sha256(b"vectors/state").digest()[:16])
    host.tick(h.now + 1.0)
    heartbeat = host.outgoing()[0][1]
    h.send("host", [heartbeat])
    request = seal(
        KEYS["alice"], request_body(TABLE, alice.me, [(host.me, 1, 3), (KEYS["bob"].key_id, 1, 1)])
    )
    joins = [op for _, op in h.ops if op.kind == Kind.JOIN and op.author != alice.me]
    # The host's OPEN and ADMITs: what a JOIN needs delivered first.
    admitted = [op.datagram() for _, op in h.ops if op.kind in (Kind.OPEN, Kind.ADMIT)]
    batch = seal(KEYS["alice"], batch_body(TABLE, alice.me, joins))
    # The host relays Alice's signed heartbeat as it is: her horizon reaches a peer that
    # cannot hear her directly.
    alice.tick(h.now + 1.0)
    alice_heartbeat = decode(alice.outgoing()[0][1], table=TABLE)
    assert isinstance(alice_heartbeat, Heartbeat)
    evidence = seal(KEYS["host"], evidence_body(TABLE, host.me, [alice_heartbeat]))
    return [
        # The receiver holds only the OPEN, so it learns it lacks ops and asks for them.
        Vector("heartbeat", heartbeat, KEYS["host"], None, everything[:1]),
        Vector("request", request, KEYS["alice"], None, everything),
        # A relay: Alice forwards other peers' JOINs; each is judged on its own signature.
        Vector("batch", batch, KEYS["alice"], None, admitted),
        Vector("evidence", evidence, KEYS["host"], None, everything),
    ]


def invalid_vectors(h: History) -> list[Vector]:
    k = KEYS
    ids = {name: key.key_id for name, key in k.items()}
    ops = {(name, op.kind, op.seq): op for name, op in h.ops}
    everything = h.datagrams()
    open_only = everything[:1]
    index = {id(op): i for i, (_, op) in enumerate(h.ops)}
    move_alice = ops[("alice", Kind.MOVE, 3)]
    move_host = next(op for name, op in h.ops if name == "host" and op.kind == Kind.MOVE)
    before_move_alice = everything[: index[id(move_alice)]]
    start = next(op for name, op in h.ops if op.kind == Kind.START)
    before_start = everything[: index[id(start)]]
    out: list[Vector] = []

    def add(
        name: str,
        datagram: bytes,
        signer: SigningKeyPair | None,
        reason: DropReason,
        context: Sequence[bytes],
    ) -> None:
        out.append(Vector(name, datagram, signer, reason, context))

    def add_signed(
        name: str,
        signer: str,
        body: list[object],
        reason: DropReason,
        context: Sequence[bytes] = everything,
    ) -> None:
        out.append(signed_vector(name, signer, body, reason, context))

    def mallory_first(
        kind: Kind, payload: object, *, prev: bytes = NO_PREV, lamport: int = 2
    ) -> list[object]:
        """Mallory's op 1 in the lobby (a JOIN's deps name the host's OPEN)."""
        deps = [] if kind == Kind.OPEN else [[ids["host"], 1]]
        return op_body(kind, TABLE, ids["mallory"], 1, prev, lamport, 0, deps, payload)

    # --- size and bytes ---
    add(
        "oversize",
        raw_envelope(pack(h.body("alice", Kind.MOVE, 1, "x" * 1150)), k["alice"]),
        k["alice"],
        DropReason.OVERSIZE,
        everything,
    )
    add("malformed_reserved_byte", b"\xc1", None, DropReason.MALFORMED, [])
    for name, datagram in (
        ("malformed_truncated", move_alice.datagram()[:-1]),
        ("trailing_bytes_after_envelope", move_alice.datagram() + b"\xc0"),
        ("trailing_bytes_in_body", raw_envelope(move_alice.body + b"\xc0", k["alice"])),
        # The same body with an array 16 header instead of fixarray.
        ("non_canonical_body", raw_envelope(b"\xdc\x00\x09" + move_alice.body[1:], k["alice"])),
    ):
        add(name, datagram, k["alice"], DropReason.MALFORMED, before_move_alice)
    float_body = h.body("alice", Kind.MOVE, 1, "stuck")
    float_body[5] = float(h.peers["alice"].clock.value + 1)
    add(
        "float_in_body",
        raw_envelope(msgpack.packb(float_body), k["alice"]),
        k["alice"],
        DropReason.MALFORMED,
        everything,
    )
    # --- schema ---
    add_signed(
        "schema_seq_is_str",
        "alice",
        h.body("alice", Kind.MOVE, 1, "stuck", seq="6"),
        DropReason.SCHEMA,
    )
    add_signed(
        "schema_move_too_long", "alice", h.body("alice", Kind.MOVE, 1, "x" * 49), DropReason.SCHEMA
    )
    unknown = h.body("alice", Kind.MOVE, 1, "stuck")
    unknown[0] = 9
    add("unknown_kind", seal(k["alice"], unknown), k["alice"], DropReason.SCHEMA, everything)
    add(
        "version_1_datagram",  # a peer of the old version: refused with its own reason
        raw_envelope(move_alice.body, k["alice"], version=1),
        k["alice"],
        DropReason.WRONG_VERSION,
        before_move_alice,
    )
    mallory_join = [k["mallory"].public_key, "mallory", PLAYER]
    # Mallory claims the host's table with her own key.
    open_by_mallory = [k["mallory"].public_key, "host", TABLE_RULES, 4, True, NONCE, False]
    add_signed(
        "open_table_id_not_derived",
        "mallory",
        mallory_first(Kind.OPEN, open_by_mallory, lamport=1),
        DropReason.SCHEMA,
        [],
    )
    # Mallory joins carrying Bob's key under her own id.
    bob_join = [k["bob"].public_key, "bob", PLAYER]
    add_signed(
        "join_author_not_its_key",
        "mallory",
        mallory_first(Kind.JOIN, bob_join),
        DropReason.SCHEMA,
        open_only,
    )
    add_signed(
        "first_op_with_prev",
        "mallory",
        mallory_first(Kind.JOIN, mallory_join, prev=b"\x01" * 16),
        DropReason.BROKEN_CHAIN,
        open_only,
    )
    add_signed(
        "round_deps_wrong_length",
        "alice",
        h.body("alice", Kind.MOVE, 1, "stuck", deps=[9, 6, 1]),
        DropReason.SCHEMA,
    )
    # --- table and signature ---
    wrong_table = h.body("alice", Kind.MOVE, 1, "stuck", table=OTHER_TABLE)
    add(
        "wrong_table", seal(k["alice"], wrong_table), k["alice"], DropReason.WRONG_TABLE, everything
    )
    flipped = bytearray(move_alice.datagram())
    flipped[-1] ^= 0x01
    add("bad_signature", bytes(flipped), k["alice"], DropReason.BAD_SIGNATURE, before_move_alice)
    add(
        "signature_by_another_key",  # Alice's body, Mallory's signature
        raw_envelope(move_alice.body, k["mallory"]),
        k["mallory"],
        DropReason.BAD_SIGNATURE,
        before_move_alice,
    )
    add(
        "batch_with_forged_op",  # the op inside a relay is judged on its own
        seal(
            k["bob"],
            [int(Kind.BATCH), TABLE, ids["bob"], [[move_alice.body, bytes(64)]]],
        ),
        k["bob"],
        DropReason.BAD_SIGNATURE,
        before_move_alice,
    )
    add(
        "heartbeat_from_stranger",
        seal(
            k["mallory"],
            [int(Kind.HEARTBEAT), TABLE, ids["mallory"], 5, [[ids["host"], 1]], b""],
        ),
        k["mallory"],
        DropReason.UNKNOWN_AUTHOR,
        open_only,
    )
    # --- chain, lamport, equivocation ---
    add_signed(
        "broken_chain",
        "alice",
        h.body("alice", Kind.MOVE, 1, "stuck", prev=b"\x02" * 16),
        DropReason.BROKEN_CHAIN,
    )
    alice_last = h.peers["alice"].logs[ids["alice"]][-1].lamport
    # Not after the author's own previous op.
    add_signed(
        "backdated_own_previous",
        "alice",
        h.body("alice", Kind.MOVE, 1, "stuck", lamport=alice_last),
        DropReason.BACKDATED,
    )
    # The host's third op claims Alice's JOIN (in its deps) but is stamped before it,
    # though after the host's own ADMIT of her.
    join_alice = ops[("alice", Kind.JOIN, 1)]
    add(
        "backdated_before_a_dep",
        seal(
            k["host"],
            op_body(
                Kind.READY,
                TABLE,
                ids["host"],
                3,
                ops[("host", Kind.ADMIT, 2)].hash,
                join_alice.lamport,
                0,
                [[ids["host"], 2], [ids["alice"], 1]],
                ready_payload("host", 1, SHOWN["host"]),
            ),
        ),
        k["host"],
        DropReason.BACKDATED,
        everything[:3],
    )
    # Only a key the host admitted may join (PROTOCOL.md 17): a JOIN out of nowhere.
    mallory = k["mallory"]
    add_signed(
        "join_not_admitted",
        "mallory",
        mallory_first(Kind.JOIN, mallory_join),
        DropReason.NOT_A_MEMBER,
    )
    admit_by_alice = h.body("alice", Kind.ADMIT, 0, [mallory.public_key, PLAYER])
    add_signed("admit_not_by_the_host", "alice", admit_by_alice, DropReason.NOT_A_MEMBER)
    add(
        "equivocation",  # a second, different op 4 of the host
        seal(
            k["host"],
            op_body(
                Kind.MOVE,
                TABLE,
                ids["host"],
                move_host.seq,
                move_host.prev,
                move_host.lamport,
                1,
                move_host.round_deps,
                "stuck",
            ),
        ),
        k["host"],
        DropReason.EQUIVOCATION,
        everything,
    )
    # --- membership ---
    add_signed(
        "non_member_after_leave",
        "carol",
        h.body("carol", Kind.READY, 0, ready_payload("carol", 2, [])),
        DropReason.NOT_A_MEMBER,
    )
    # Bob is a player at the table but not in round 1.
    add_signed(
        "non_participant_move", "bob", h.body("bob", Kind.MOVE, 1, "stuck"), DropReason.NOT_A_MEMBER
    )
    add_signed(
        "spectator_move", "sam", h.body("sam", Kind.MOVE, 1, "AS n-f"), DropReason.SPECTATOR_OP
    )
    add_signed(
        "spectator_ready",
        "sam",
        h.body("sam", Kind.READY, 0, ready_payload("sam", 2, [])),
        DropReason.SPECTATOR_OP,
    )
    add_signed(
        "start_by_non_host",
        "alice",
        h.snapshots["start_by_alice"],
        DropReason.NOT_A_MEMBER,
        before_start,
    )
    out.extend(version_2_vectors(h))
    return out


def version_2_vectors(h: History) -> list[Vector]:
    """The rules new in version 2: the gate's named steps for a map, a REQUEST range first >
    last, the game's checks of OPEN, READY and START, what an author may not take back, and
    a broken heartbeat promise."""
    k = KEYS
    ids = {name: key.key_id for name, key in k.items()}
    everything = h.datagrams()
    start = next(op for name, op in h.ops if op.kind == Kind.START)
    before_start = everything[: [op for _, op in h.ops].index(start)]
    out: list[Vector] = []

    def add(
        name: str, datagram: bytes, signer: str, reason: DropReason, context: Sequence[bytes]
    ) -> None:
        out.append(Vector(name, datagram, k[signer], reason, context))

    add(
        "body_is_a_map",
        raw_envelope(pack({"kind": 6}), k["alice"]),
        "alice",
        DropReason.SCHEMA,
        everything,
    )
    add(
        "request_first_after_last",
        seal(k["alice"], request_body(TABLE, ids["alice"], [(ids["host"], 3, 1)])),
        "alice",
        DropReason.SCHEMA,
        everything,
    )

    def open_with(rules: object, seats: int) -> bytes:
        payload = [k["host"].public_key, "host", rules, seats, True, NONCE, False]
        return seal(
            k["host"], op_body(Kind.OPEN, TABLE, ids["host"], 1, NO_PREV, 1, 0, [], payload)
        )

    add("open_seats_differ_from_rules", open_with(TABLE_RULES, 3), "host", DropReason.SCHEMA, [])
    add(
        "open_unknown_rule",
        open_with([["seats", 4], ["wizardry", 1]], 4),
        "host",
        DropReason.SCHEMA,
        [],
    )
    add(
        "open_rule_given_twice",
        open_with([["seats", 4], ["seats", 4]], 4),
        "host",
        DropReason.SCHEMA,
        [],
    )
    add("open_rule_wrong_type", open_with([["seats", True]], 4), "host", DropReason.SCHEMA, [])
    commitment = deal_commitment(*SECRETS["bob"])
    for label, shown in (
        ("ready_shows_no_cards", []),
        ("ready_shows_a_card_twice", [1, 1, 2, 3, 4]),
        ("ready_shows_a_joker_without_jokers", [52, 1, 2, 3, 4]),
    ):
        payload = [2, commitment, shown, *ready_payload("bob", 2, shown)[3:]]
        ready = seal(k["bob"], h.body("bob", Kind.READY, 0, payload))
        add(label, ready, "bob", DropReason.SCHEMA, everything)
    off_rules = h.snapshots["start_other_rules"]
    add(
        "start_rules_not_the_tables",
        seal(k["host"], off_rules),
        "host",
        DropReason.SCHEMA,
        before_start,
    )
    # After its REVEAL an author has ended its round: no more moves.
    reveal = seal(k["host"], h.body("host", Kind.REVEAL, 1, list(SECRETS["host"])))
    host_peer = TableGate(SyncPeer(k["host"], TABLE)).install().sync
    for datagram in everything:
        host_peer.receive(datagram, "history", 0.0)
    host_peer.receive(reveal, "history", 0.0)
    latest = max(o.lamport for log in host_peer.logs.values() for o in log)
    after_reveal = op_body(
        Kind.MOVE, TABLE, ids["host"], host_peer.delivered(ids["host"]) + 1,
        host_peer.logs[ids["host"]][-1].hash, latest + 1, 1,
        host_peer.deps_for(Kind.MOVE, 1, "stuck"), "stuck",
    )  # fmt: skip
    add(
        "move_after_own_reveal",
        seal(k["host"], after_reveal),
        "host",
        DropReason.SCHEMA,
        [*everything, reveal],
    )
    # Alice's previous move had seen the host's op 4; this one claims to have seen only 3.
    lower = h.body("alice", Kind.MOVE, 1, "stuck")
    deps = list(lower[7])  # type: ignore[call-overload]
    deps[0] -= 1
    lower[7] = deps
    add("deps_go_down", seal(k["alice"], lower), "alice", DropReason.BACKDATED, everything)
    # A promise broken: Alice's heartbeat says her clock is past the move she then stamps
    # lower (the move is valid on its own; the pair proves the lie).
    alice = h.peers["alice"]
    low_move = seal(k["alice"], h.body("alice", Kind.MOVE, 1, "stuck"))
    promise = seal(
        k["alice"],
        heartbeat_body(TABLE, ids["alice"], alice.clock.value + 10, alice.vector(), b""),
    )
    add("broken_promise", promise, "alice", DropReason.BROKEN_PROMISE, [*everything, low_move])
    return out


def signed_vector(
    name: str, signer: str, body: list[object], reason: DropReason | None, context: Sequence[bytes]
) -> Vector:
    """The vector of `body` signed by `signer`'s key (its own body, or one that claims
    another author)."""
    return Vector(name, seal(KEYS[signer], body), KEYS[signer], reason, context)


def departure_and_tie_vectors(h: History) -> list[Vector]:
    """DEPART and MIX (PROTOCOL.md 6 and 13): the valid forms and each gate check."""
    ids = {name: key.key_id for name, key in KEYS.items()}
    everything = h.datagrams()
    held = h.peers["host"].delivered(ids["alice"])
    before_mix = next(i for i, (_, op) in enumerate(h.ops) if op.kind == Kind.MIX)

    def depart(name: str, author: str, target: str, seq: int, reason: DropReason | None) -> Vector:
        body = h.body(author, Kind.DEPART, 1, [ids[target], seq])
        return signed_vector(name, author, body, reason, everything)

    own = h.peers["host"].delivered(ids["host"])
    return [
        depart("depart_host_names_alice", "host", "alice", held, None),
        depart(
            "depart_names_more_than_its_deps_hold", "host", "alice", held + 1, DropReason.SCHEMA
        ),
        depart("depart_names_its_own_author", "host", "host", own, DropReason.SCHEMA),
        depart("depart_names_a_non_participant", "host", "bob", 0, DropReason.SCHEMA),
        depart("depart_by_a_non_participant", "bob", "alice", 0, DropReason.NOT_A_MEMBER),
        signed_vector(
            "mix_does_not_open_the_ready_commitment",
            "host",
            h.snapshots["mix_wrong_host"],
            DropReason.SCHEMA,
            h.datagrams(before_mix),
        ),
        signed_vector(
            "second_mix_in_a_round",
            "host",
            h.body("host", Kind.MIX, 1, MIX_NONCES["host"]),
            DropReason.SCHEMA,
            everything,
        ),
    ]


BOB_SHOWN = [5, 18, 33, 44, 2]
THREE_SEAT_RULES = [["seats", 3], ["target", 100]]


def start_race_vectors() -> list[Vector]:
    """`start_race.json` (PROTOCOL.md 13.1, 13.3): a three-player table of its own. Round 1
    is Alice, Bob and the host, in that START order. The host and Alice say READY for
    round 2; the host votes Bob out of round 1, and then Alice does (a vote after her READY
    against someone who is not round 2's starter: it counts for nothing, and Bob stays).
    Alice and Bob vote the host out (it is round 2's starter: that counts, a quorum of
    two). Then the host's START of round 2 begins nothing (a former starter's) and Alice's,
    the heir's, begins it."""
    h = History()
    ids = {name: key.key_id for name, key in KEYS.items()}
    h.author(
        "host", Kind.OPEN, 0, [KEYS["host"].public_key, "host", TABLE_RULES, 4, True, NONCE, False]
    )
    for name in ("alice", "bob"):
        h.author("host", Kind.ADMIT, 0, [KEYS[name].public_key, PLAYER])
        h.author(name, Kind.JOIN, 0, [KEYS[name].public_key, name, PLAYER])
    shown = {**SHOWN, "bob": BOB_SHOWN}
    for name in ("host", "alice", "bob"):
        h.author(name, Kind.READY, 0, ready_payload(name, 1, shown[name]))
    order = [ids["alice"], ids["bob"], ids["host"]]
    h.author("host", Kind.START, 1, [order, [0, 1, 2], THREE_SEAT_RULES])
    for name in ("host", "alice"):
        h.author(name, Kind.READY, 0, ready_payload(name, 2, shown[name]))

    def vote(voter: str, target: str) -> list[object]:
        held = h.peers[voter].delivered(ids[target])
        return h.body(voter, Kind.DEPART, 1, [ids[target], held])

    h.author("host", Kind.DEPART, 1, vote("host", "bob")[-1])
    late_vote = vote("alice", "bob")
    vectors = [
        Vector(
            "vote_after_ready_against_a_non_starter",
            seal(KEYS["alice"], late_vote),
            KEYS["alice"],
            None,
            h.datagrams(),
            "counts_for_nothing",
        )
    ]
    h.author("alice", Kind.DEPART, 1, late_vote[-1])
    for voter in ("alice", "bob"):
        h.author(voter, Kind.DEPART, 1, vote(voter, "host")[-1])
    round2 = [[ids["host"], ids["alice"]], [0, 1], ROUND_RULES]
    for name, effect in (("host", "begins_no_round"), ("alice", "begins_round")):
        start = h.body(name, Kind.START, 2, round2)
        vector_name = "start_by_a_former_starter" if name == "host" else "start_by_the_heir"
        vectors.append(
            Vector(vector_name, seal(KEYS[name], start), KEYS[name], None, h.datagrams(), effect)
        )
    return vectors


PRIVATE_NONCE = b"private!"
PASSPHRASE = "correct horse battery staple"


def admission_vectors() -> dict[str, Any]:
    """`admission.json` (PROTOCOL.md 17): the table key (argon2id), the MAC, and one private
    table's handshake played by real peers: Alice knows the passphrase and is admitted;
    Mallory does not, and is refused; Mallory's replay of Alice's answer is dropped."""
    host_key, alice, mallory = KEYS["host"], KEYS["alice"], KEYS["mallory"]
    table = derive_table_id(host_key.public_key, PRIVATE_NONCE)
    kdf_cases = []
    for passphrase, for_table in ((PASSPHRASE, table), (PASSPHRASE, TABLE), ("Tr0ub4dor&3", table)):
        kdf_cases.append(
            {
                "passphrase": passphrase,
                "table": for_table.hex(),
                "salt": passphrase_salt(for_table).hex(),
                "key": table_key(passphrase, for_table).hex(),
            }
        )
    key = table_key(PASSPHRASE, table)
    nonce = _secret("admit-nonce", ADMIT_NONCE_LEN)
    macs = [
        {
            "key": key.hex(),
            "table": table.hex(),
            "host_public_key": host_key.public_key.hex(),
            "joiner_public_key": joiner.public_key.hex(),
            "role": role,
            "nonce": nonce.hex(),
            "mac": admission_mac(
                key, table, host_key.public_key, joiner.public_key, role, nonce
            ).hex(),
        }
        for joiner, role in ((alice, PLAYER), (alice, SPECTATOR), (mallory, PLAYER))
    ]
    host = TableGate(SyncPeer(host_key, table)).install().sync
    host.admission.key = key
    host.author(
        Kind.OPEN,
        0,
        [host_key.public_key, "host", TABLE_RULES, 4, True, PRIVATE_NONCE, True],
    )
    opened = host.outgoing()[0][1]
    steps: list[dict[str, Any]] = []

    def joiner_peer(signer: SigningKeyPair, passphrase: str) -> SyncPeer:
        peer = TableGate(SyncPeer(signer, table)).install().sync
        peer.admission.key = table_key(passphrase, table)
        peer.admission.host_address = "host"
        peer.receive(opened, "host", 0.0)
        return peer

    def exchange(peer: SyncPeer, name: str, label: str) -> list[bytes]:
        """Move datagrams between `peer` and the host until neither says more."""
        said: list[bytes] = []
        for turn in range(4):
            for _, datagram in peer.outgoing():
                said.append(datagram)
                message = decode(datagram, table=table)
                if isinstance(message, Hello | Answer):
                    steps.append(
                        _handshake_step(
                            f"{label}_{type(message).__name__.lower()}", datagram, peer.key
                        )
                    )
                host.receive(datagram, name, 1.0 + turn)
            for _, datagram in host.outgoing():
                message = decode(datagram, table=table)
                if isinstance(message, Challenge | Verdict):
                    steps.append(
                        _handshake_step(
                            f"{label}_{type(message).__name__.lower()}", datagram, host_key
                        )
                    )
                elif isinstance(message, Op):
                    steps.append(_handshake_step(f"{label}_admit_op", datagram, host_key))
                peer.receive(datagram, "host", 1.0 + turn)
        return said

    alice_peer = joiner_peer(alice, PASSPHRASE)
    alice_peer.admission.knock(PLAYER, "alice", 1.0)
    alice_said = exchange(alice_peer, "alice", "alice")
    mallory_peer = joiner_peer(mallory, "hunter2")
    mallory_peer.admission.knock(PLAYER, "mallory", 3.0)
    exchange(mallory_peer, "mallory", "mallory_wrong_passphrase")
    answer = next(d for d in alice_said if isinstance(decode(d, table=table), Answer))
    replayed = host.counters[DropReason.REPLAYED]
    host.receive(answer, "mallory", 9.0)
    assert host.counters[DropReason.REPLAYED] == replayed + 1
    assert host.outgoing() == []
    return {
        "kdf": {
            "algorithm": "argon2id (libsodium crypto_pwhash_argon2id, version 0x13)",
            "opslimit": KDF_OPSLIMIT,
            "memlimit": KDF_MEMLIMIT,
            "key_len": 32,
            "salt": "first 16 bytes of SHA-256('nerts-p2p/passphrase-salt' || 0x00 || table)",
            "cases": kdf_cases,
        },
        "mac": macs,
        "handshake": {
            "table": table.hex(),
            "passphrase": PASSPHRASE,
            "open": opened.hex(),
            "steps": steps,
            "replayed_answer": answer.hex(),
        },
    }


def _handshake_step(name: str, datagram: bytes, signer: SigningKeyPair) -> dict[str, Any]:
    return {
        "name": name,
        "hex": datagram.hex(),
        "public_key": signer.public_key.hex(),
        "decoded": decoded_json(datagram),
    }


def voucher_vectors() -> tuple[list[Vector], list[Vector]]:
    """PROTOCOL.md 4, step 6: an op whose own signature is garbled is authentic when its
    author's next op, in the same BATCH, names it by `prev` (Bob's READY for round 2, then
    his LEAVE, relayed by Alice); not when that next op names another body."""
    h = play_history()
    context = h.datagrams()
    other = h.body("bob", Kind.READY, 0, ready_payload("bob", 2, list(reversed(BOB_SHOWN))))
    ready = h.author("bob", Kind.READY, 0, ready_payload("bob", 2, BOB_SHOWN))
    leave = h.author("bob", Kind.LEAVE, 0, None)
    alice = KEYS["alice"]

    def relay(garbled: bytes) -> bytes:
        ops = [[garbled, bytes(64)], [leave.body, leave.signature]]
        return seal(alice, [int(Kind.BATCH), TABLE, alice.key_id, ops])

    return (
        [Vector("batch_vouched", relay(ready.body), alice, None, context)],
        [
            Vector(
                "batch_vouched_for_another_body",
                relay(pack(other)),
                alice,
                DropReason.BAD_SIGNATURE,
                context,
            )
        ],
    )


def build() -> dict[str, str]:
    """File name -> the exact text of each vector file."""
    h = play_history()
    vouched, not_vouched = voucher_vectors()
    groups = {
        "ops.json": op_vectors(h),
        "sync.json": sync_vectors(h) + vouched,
        "invalid.json": invalid_vectors(h) + not_vouched,
        "departure.json": departure_and_tie_vectors(h),
        "start_race.json": start_race_vectors(),
    }
    files = {
        name: json.dumps([v.as_json() for v in vectors], indent=1) + "\n"
        for name, vectors in groups.items()
    }
    files[ADMISSION_FILE] = json.dumps(admission_vectors(), indent=1) + "\n"
    return files


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="only check the files are current")
    args = parser.parse_args(argv)
    files = build()
    stale = [
        n
        for n, text in files.items()
        if not (VECTORS_DIR / n).is_file() or (VECTORS_DIR / n).read_text() != text
    ]
    if args.check:
        for name in stale:
            print(f"stale: protocol/vectors/{name}", file=sys.stderr)
        return 1 if stale else 0
    VECTORS_DIR.mkdir(exist_ok=True)
    for name, text in files.items():
        (VECTORS_DIR / name).write_text(text)
        print(f"wrote protocol/vectors/{name}: {text.count(chr(10) + ' {')} vectors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
