"""Every message of the protocol: its schema (data only), its typed form, and the decode gate.

A datagram is one envelope (`envelope.py`): ``[3, body, signature]``. The body is a msgpack
array whose first item is the message kind. Kinds 1-10 and 12 are **ops**: authored by one
peer, signed by it, stored by everyone and relayed by anyone. Kinds 16-19 and 24-27 are
**sync messages**: signed by their sender, acted on at once and never stored (kind 19 relays
other peers' signed heartbeats; 24-27 are the admission handshake). PROTOCOL.md is the prose
specification of all of this; this module is its reference implementation.

Op body (every op kind)::

    [kind, table, author, seq, prev, lamport, epoch, deps, payload]

- table: bin 8, the table id. author: bin 8, `key_id` of the author's public key.
- seq: 1, 2, ... per author per table. prev: bin 16, `op_hash` of the author's op seq-1
  (16 zero bytes for seq 1), so each author's ops form a hash chain.
- lamport: the author's Lamport stamp. epoch: 0 for the lobby, r for round r.
- deps: what the author had seen: in the lobby (epoch 0) a list of [author, seq] pairs; in a
  round, one seq per participant of that round, in the order of the round's START op (this
  keeps a move under 160 bytes on the wire).
- payload: depends on the kind (below).

The game's data (rules, moves, cards, commitments) rides in payloads as plain values; this
layer checks their wire types and sizes, the game layer checks their meaning.
"""

from __future__ import annotations

import enum
import hashlib
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, NoReturn

from . import schema as s
from .codec import pack, unpack_bounded, unpack_own
from .envelope import PROTOCOL_VERSION, Envelope, open_envelope, seal_parts
from .errors import DropReason, RemoteProtocolError
from .sealed import OVERHEAD as SEALED_OVERHEAD
from .signing import KEY_ID_LEN, OP_HASH_LEN, PUBLIC_KEY_LEN, SigningKeyPair, key_id, op_hash

TABLE_ID_LEN: Final = 8
MAX_MEMBERS: Final = 64  # authors a heartbeat's vector (and a lobby op's deps) can name
MAX_PARTICIPANTS: Final = 16  # players of one round (8 seats, two per seat in partnerships)
MAX_SEQ: Final = 2**32 - 1
MAX_LAMPORT: Final = 2**48
MAX_EPOCH: Final = 65535
MAX_RANGES: Final = 16
MAX_BATCH: Final = 16
MAX_RELAYED: Final = 8  # heartbeats one EVIDENCE message carries
NO_PREV: Final = bytes(OP_HASH_LEN)
SEED_AND_SALT: Final = 32 + 16  # what a SEED_SHARE seals
MIX_NONCE_LEN: Final = 16  # a participant's contribution to a round's tie coins (PROTOCOL.md 6)
#: What a READY escrows to its own author: seed || salt || mix nonce, sealed to itself.
ESCROWED: Final = SEED_AND_SALT + MIX_NONCE_LEN


class Kind(enum.IntEnum):
    OPEN = 1  # the host opens a table (its first op)
    JOIN = 2  # a peer joins a table (its first op)
    LEAVE = 3
    READY = 4  # a player is ready for a round: deal commitment and the cards it shows
    START = 5  # a round begins: its participants, their seats, the rules and commitments
    MOVE = 6  # a game move, in the game's text notation
    REVEAL = 7  # after a round: the seed and salt behind the deal commitment
    SEED_SHARE = 8  # a partnership: the seat's seed and salt, sealed to the partner's key
    DEPART = 9  # a vote that a silent participant has left the round (PROTOCOL.md 13)
    MIX = 10  # a participant's mix nonce for the round's tie coins, committed in its READY
    ADMIT = 12  # the host lets a key in (PROTOCOL.md 17): only an admitted key's JOIN counts
    HEARTBEAT = 16
    REQUEST = 17
    BATCH = 18
    EVIDENCE = 19  # other peers' signed heartbeats, relayed as they are (horizons, promises)
    # Admission (PROTOCOL.md 17, `protocol/admission.py`): asked of the host before a JOIN.
    HELLO = 24  # a would-be member: its key, role and name
    CHALLENGE = 25  # the host's nonce for a private table
    ANSWER = 26  # the joiner's MAC over the nonce, under the key of the passphrase
    VERDICT = 27  # admitted (the seq of the host's ADMIT) or refused (a reason)


class Kinds:
    """`Kind`'s members as plain class attributes, for code that runs for every op.

    Reading `Kind.MOVE` goes through the enum metaclass's attribute hook (its `__getattr__`
    slows every read of a class attribute to about 0.4 µs, ten times a plain class's): more
    than the comparison it is read for, and the receive path compares each op's kind a few
    dozen times. The members are the same objects (`Kinds.MOVE is Kind.MOVE`)."""

    OPEN: Final = Kind.OPEN
    JOIN: Final = Kind.JOIN
    LEAVE: Final = Kind.LEAVE
    READY: Final = Kind.READY
    START: Final = Kind.START
    MOVE: Final = Kind.MOVE
    REVEAL: Final = Kind.REVEAL
    SEED_SHARE: Final = Kind.SEED_SHARE
    DEPART: Final = Kind.DEPART
    MIX: Final = Kind.MIX
    ADMIT: Final = Kind.ADMIT
    HEARTBEAT: Final = Kind.HEARTBEAT
    REQUEST: Final = Kind.REQUEST
    BATCH: Final = Kind.BATCH
    EVIDENCE: Final = Kind.EVIDENCE
    HELLO: Final = Kind.HELLO
    CHALLENGE: Final = Kind.CHALLENGE
    ANSWER: Final = Kind.ANSWER
    VERDICT: Final = Kind.VERDICT


LOBBY_KINDS: Final = frozenset({Kind.OPEN, Kind.JOIN, Kind.READY, Kind.ADMIT})
ADMISSION_KINDS: Final = frozenset({Kind.HELLO, Kind.CHALLENGE, Kind.ANSWER, Kind.VERDICT})
ADMIT_NONCE_LEN: Final = 16
ADMIT_MAC_LEN: Final = 32
ROUND_KINDS: Final = frozenset(
    {Kind.START, Kind.MOVE, Kind.REVEAL, Kind.SEED_SHARE, Kind.DEPART, Kind.MIX}
)
PLAYER, SPECTATOR = 0, 1
#: value -> Kind: a dict lookup, where calling `Kind(value)` costs more than a whole field's
#: schema check (only used on values a schema has already accepted).
_KIND_OF: Final[dict[int, Kind]] = {kind.value: kind for kind in Kind}

_ID = s.Bin(exact=KEY_ID_LEN)
_SEQ = s.Int(1, MAX_SEQ)
_SEQ0 = s.Int(0, MAX_SEQ)
#: A table's or a member's name on the wire: UTF-8 bytes, not characters.
NAME_MAX_BYTES: Final = 32
_NAME = s.Str(max=NAME_MAX_BYTES)
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1  # a rules value is a signed 32-bit int
_RULES = s.ListOf(
    s.Tuple(s.Str(min=1, max=24), s.OneOf(s.Bool(), s.Int(INT32_MIN, INT32_MAX))), max=32
)
_HEADER = (
    s.Bin(exact=TABLE_ID_LEN),  # table
    _ID,  # author
    _SEQ,  # seq
    s.Bin(exact=OP_HASH_LEN),  # prev
    s.Int(1, MAX_LAMPORT),  # lamport
    s.Int(0, MAX_EPOCH),  # epoch
    s.OneOf(  # deps: pairs in the lobby, one seq per participant in a round
        s.ListOf(s.Tuple(_ID, _SEQ), max=MAX_MEMBERS),
        s.ListOf(_SEQ0, max=MAX_PARTICIPANTS),
    ),
)
_PAYLOADS: Final[dict[Kind, s.Spec]] = {
    # public key, table name, rules, seats, spectators welcome, nonce (the table id is
    # derived), passphrase needed (a private table: PROTOCOL.md 17)
    Kind.OPEN: s.Tuple(
        s.Bin(exact=PUBLIC_KEY_LEN),
        _NAME,
        _RULES,
        s.Int(2, 16),
        s.Bool(),
        s.Bin(exact=8),
        s.Bool(),
    ),
    Kind.JOIN: s.Tuple(s.Bin(exact=PUBLIC_KEY_LEN), _NAME, s.Int(PLAYER, SPECTATOR)),
    Kind.LEAVE: s.Nil(),
    # round, commitment H(seed || salt), cards shown at the deal, commitment to the mix
    # nonce, and seed || salt || nonce sealed to the author itself (a restart recovers them)
    Kind.READY: s.Tuple(
        s.Int(1, MAX_EPOCH),
        s.Bin(exact=32),
        s.ListOf(s.Int(0, 511), max=8),
        s.Bin(exact=32),
        s.Bin(exact=ESCROWED + SEALED_OVERHEAD),
    ),
    # participants (author ids), their seats, rules
    Kind.START: s.Tuple(
        s.ListOf(_ID, min=2, max=MAX_PARTICIPANTS),
        s.ListOf(s.Int(0, 7), min=2, max=MAX_PARTICIPANTS),
        _RULES,
    ),
    Kind.MOVE: s.Str(min=1, max=48),
    Kind.REVEAL: s.Tuple(s.Bin(exact=32), s.Bin(exact=16)),  # seed, salt
    # recipient (author id), seed || salt sealed to it (protocol/sealed.py)
    Kind.SEED_SHARE: s.Tuple(_ID, s.Bin(exact=SEED_AND_SALT + SEALED_OVERHEAD)),
    # the silent participant (author id), the highest of its seqs the voter holds
    Kind.DEPART: s.Tuple(_ID, _SEQ0),
    Kind.MIX: s.Bin(exact=MIX_NONCE_LEN),  # the nonce whose hash the author's READY committed
    # the admitted key and its role (only the host's ADMIT counts, PROTOCOL.md 17)
    Kind.ADMIT: s.Tuple(s.Bin(exact=PUBLIC_KEY_LEN), s.Int(PLAYER, SPECTATOR)),
}
OP_SCHEMA: Final = s.Tagged({kind: s.Tuple(*_HEADER, spec) for kind, spec in _PAYLOADS.items()})
SYNC_SCHEMA: Final = s.Tagged(
    {
        # table, sender, lamport, vector (pairs), state hash of the fold of exactly that vector
        Kind.HEARTBEAT: s.Tuple(
            s.Bin(exact=TABLE_ID_LEN),
            _ID,
            s.Int(0, MAX_LAMPORT),
            s.ListOf(s.Tuple(_ID, _SEQ), max=MAX_MEMBERS),
            s.OneOf(s.Bin(exact=16), s.Bin(exact=0)),
        ),
        # table, sender, ranges [author, first seq, last seq]
        Kind.REQUEST: s.Tuple(
            s.Bin(exact=TABLE_ID_LEN),
            _ID,
            s.ListOf(s.Tuple(_ID, _SEQ, _SEQ), min=1, max=MAX_RANGES),
        ),
        # table, sender, ops as [body, signature]
        Kind.BATCH: s.Tuple(
            s.Bin(exact=TABLE_ID_LEN),
            _ID,
            s.ListOf(s.Tuple(s.Bin(max=1100), s.Bin(exact=64)), min=1, max=MAX_BATCH),
        ),
        # table, sender, heartbeats of other peers as [body, signature], each as its author
        # signed it: a horizon that crosses a one-way link, or half of the proof of a lie
        Kind.EVIDENCE: s.Tuple(
            s.Bin(exact=TABLE_ID_LEN),
            _ID,
            s.ListOf(s.Tuple(s.Bin(max=1100), s.Bin(exact=64)), min=1, max=MAX_RELAYED),
        ),
        # table, sender, its public key (the sender id is its key id), role, name
        Kind.HELLO: s.Tuple(
            s.Bin(exact=TABLE_ID_LEN), _ID, s.Bin(exact=PUBLIC_KEY_LEN), s.Int(0, 1), _NAME
        ),
        # table, sender (the host), the joiner it challenges, a fresh nonce
        Kind.CHALLENGE: s.Tuple(s.Bin(exact=TABLE_ID_LEN), _ID, _ID, s.Bin(exact=ADMIT_NONCE_LEN)),
        # table, sender (the joiner), the nonce answered, the MAC over it
        Kind.ANSWER: s.Tuple(
            s.Bin(exact=TABLE_ID_LEN),
            _ID,
            s.Bin(exact=ADMIT_NONCE_LEN),
            s.Bin(exact=ADMIT_MAC_LEN),
        ),
        # table, sender (the host), the joiner, the seq of its ADMIT (0: refused), reason
        Kind.VERDICT: s.Tuple(s.Bin(exact=TABLE_ID_LEN), _ID, _ID, _SEQ0, s.Int(0, 15)),
    }
)


def derive_table_id(host_public_key: bytes, nonce: bytes) -> bytes:
    """A table id is bound to its host's key, so nobody else can open the same table."""
    return hashlib.sha256(b"nerts-p2p/table\0" + host_public_key + nonce).digest()[:TABLE_ID_LEN]


@dataclass(frozen=True, slots=True)
class Op:
    kind: Kind
    table: bytes
    author: bytes
    seq: int
    prev: bytes
    lamport: int
    epoch: int
    lobby_deps: tuple[tuple[bytes, int], ...]  # epoch 0: (author, seq) pairs
    round_deps: tuple[int, ...]  # a round: one seq per participant, in START order
    # Checked against OP_SCHEMA for its kind before an Op is built; arrays become tuples.
    payload: Any
    body: bytes  # exactly the signed bytes
    signature: bytes
    hash: bytes  # op_hash(body): the next op's prev

    @property
    def public_key(self) -> bytes | None:
        """The key an OPEN or JOIN op carries for its own author."""
        if self.kind in (Kinds.OPEN, Kinds.JOIN):
            key: bytes = self.payload[0]
            return key
        return None

    def datagram(self) -> bytes:
        return pack([PROTOCOL_VERSION, self.body, self.signature])


@dataclass(frozen=True, slots=True)
class Heartbeat:
    table: bytes
    sender: bytes
    lamport: int
    vector: tuple[tuple[bytes, int], ...]
    state_hash: bytes
    body: bytes
    signature: bytes


@dataclass(frozen=True, slots=True)
class Request:
    table: bytes
    sender: bytes
    ranges: tuple[tuple[bytes, int, int], ...]
    body: bytes
    signature: bytes


@dataclass(frozen=True, slots=True)
class Batch:
    table: bytes
    sender: bytes
    ops: tuple[tuple[bytes, bytes], ...]  # (body, signature) of each op
    body: bytes
    signature: bytes


@dataclass(frozen=True, slots=True)
class Evidence:
    table: bytes
    sender: bytes  # who relays them; each heartbeat is signed by its own author
    heartbeats: tuple[tuple[bytes, bytes], ...]  # (body, signature) of each HEARTBEAT
    body: bytes
    signature: bytes


@dataclass(frozen=True, slots=True)
class Hello:
    """Asks the host to be let in (PROTOCOL.md 17). Signed by the key it carries."""

    table: bytes
    sender: bytes
    public_key: bytes
    role: int
    name: str
    body: bytes
    signature: bytes


@dataclass(frozen=True, slots=True)
class Challenge:
    table: bytes
    sender: bytes  # the host
    joiner: bytes
    nonce: bytes
    body: bytes
    signature: bytes


@dataclass(frozen=True, slots=True)
class Answer:
    table: bytes
    sender: bytes  # the joiner
    nonce: bytes
    mac: bytes
    body: bytes
    signature: bytes


@dataclass(frozen=True, slots=True)
class Verdict:
    table: bytes
    sender: bytes  # the host
    joiner: bytes
    admit_seq: int  # the host's ADMIT op for the joiner; 0 when refused
    reason: int  # `protocol.admission.Refusal`; 0 when admitted
    body: bytes
    signature: bytes


AdmissionMessage = Hello | Challenge | Answer | Verdict
SyncMessage = Heartbeat | Request | Batch | Evidence | AdmissionMessage
Message = Op | SyncMessage


def _fail(reason: DropReason, message: str) -> NoReturn:
    raise RemoteProtocolError(reason, message)


def _op_from(
    body: list[Any], env_body: bytes, signature: bytes, body_hash: bytes | None = None
) -> Op:
    """Checks across fields that a schema cannot express, then the typed op."""
    kind, table, author, seq, prev, lamport, epoch, deps, payload = body
    lobby_deps: tuple[tuple[bytes, int], ...] = ()
    round_deps: tuple[int, ...] = ()
    if epoch == 0:
        if any(not isinstance(d, list) for d in deps):
            _fail(DropReason.SCHEMA, "body[7]: lobby ops list deps as [author, seq] pairs")
        lobby_deps = tuple((d[0], d[1]) for d in deps)
        if len({a for a, _ in lobby_deps}) != len(lobby_deps):
            _fail(DropReason.SCHEMA, "body[7]: an author appears twice in deps")
    else:
        if any(isinstance(d, list) for d in deps):
            _fail(DropReason.SCHEMA, "body[7]: round ops list one seq per participant")
        round_deps = tuple(deps)
    op_kind = _KIND_OF[kind]
    if op_kind in LOBBY_KINDS and epoch != 0:
        _fail(DropReason.SCHEMA, f"body[6]: {op_kind.name} belongs to the lobby (epoch 0)")
    if op_kind in ROUND_KINDS and epoch == 0:
        _fail(DropReason.SCHEMA, f"body[6]: {op_kind.name} needs a round number")
    if op_kind in (Kinds.OPEN, Kinds.JOIN):
        if seq != 1:
            _fail(DropReason.SCHEMA, f"{op_kind.name} must be its author's first op")
        if key_id(payload[0]) != author:
            _fail(
                DropReason.SCHEMA,
                f"body[2]: the author id is not the id of the key this {op_kind.name} carries",
            )
    if op_kind == Kinds.OPEN and derive_table_id(payload[0], payload[5]) != table:
        _fail(DropReason.SCHEMA, "OPEN: the table id is not derived from the host's key and nonce")
    if seq == 1 and prev != NO_PREV:
        _fail(DropReason.BROKEN_CHAIN, "an author's first op has no prev")
    if op_kind == Kinds.START:
        participants, seats, _ = payload
        if len(participants) != len(seats) or len(set(participants)) != len(participants):
            _fail(DropReason.SCHEMA, "START: participants and seats must pair up, each once")
    return Op(
        op_kind,
        table,
        author,
        seq,
        prev,
        lamport,
        epoch,
        lobby_deps,
        round_deps,
        _freeze(payload),
        env_body,
        signature,
        body_hash if body_hash is not None else op_hash(env_body),
    )


def _freeze(value: object) -> object:
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def decode_body(
    body_obj: Any, body: bytes, signature: bytes, *, table: bytes, body_hash: bytes | None = None
) -> Message:
    """Schema, then table id: the steps of the gate that need no key (DESIGN.md section 4)."""
    if not isinstance(body_obj, list) or not body_obj or type(body_obj[0]) is not int:
        raise RemoteProtocolError(DropReason.SCHEMA, "body: expected an array starting with a kind")
    kind = body_obj[0]
    if kind < 16:
        OP_SCHEMA.check(body_obj, "body")
    else:
        SYNC_SCHEMA.check(body_obj, "body")
    if body_obj[1] != table:
        raise RemoteProtocolError(DropReason.WRONG_TABLE, "the message is for another table")
    if kind < 16:
        return _op_from(body_obj, body, signature, body_hash)
    if kind == Kinds.HEARTBEAT:
        _, tab, sender, lamport, vector, state_hash = body_obj
        return Heartbeat(
            tab,
            sender,
            lamport,
            tuple((a, q) for a, q in vector),
            state_hash,
            body,
            signature,
        )
    if kind == Kinds.REQUEST:
        _, tab, sender, ranges = body_obj
        if any(first > last for _, first, last in ranges):
            raise RemoteProtocolError(
                DropReason.SCHEMA, "REQUEST: a range's first seq is after its last"
            )
        return Request(tab, sender, tuple((a, f, last) for a, f, last in ranges), body, signature)
    if kind == Kinds.EVIDENCE:
        _, tab, sender, heartbeats = body_obj
        return Evidence(tab, sender, tuple((b, sg) for b, sg in heartbeats), body, signature)
    if kind in ADMISSION_KINDS:
        return _admission_from(body_obj, body, signature)
    _, tab, sender, ops = body_obj
    return Batch(tab, sender, tuple((b, sg) for b, sg in ops), body, signature)


def _admission_from(body_obj: list[Any], body: bytes, signature: bytes) -> AdmissionMessage:
    kind = body_obj[0]
    if kind == Kinds.HELLO:
        _, tab, sender, public_key, role, name = body_obj
        if key_id(public_key) != sender:
            _fail(DropReason.SCHEMA, "HELLO: the sender id is not the id of the key it carries")
        return Hello(tab, sender, public_key, role, name, body, signature)
    if kind == Kinds.CHALLENGE:
        _, tab, sender, joiner, nonce = body_obj
        return Challenge(tab, sender, joiner, nonce, body, signature)
    if kind == Kinds.ANSWER:
        _, tab, sender, nonce, mac = body_obj
        return Answer(tab, sender, nonce, mac, body, signature)
    _, tab, sender, joiner, admit_seq, reason = body_obj
    if (admit_seq == 0) == (reason == 0):
        _fail(DropReason.SCHEMA, "VERDICT: an ADMIT seq and no reason, or a reason and seq 0")
    return Verdict(tab, sender, joiner, admit_seq, reason, body, signature)


def decode(datagram: bytes, *, table: bytes) -> Message:
    """Size, unpack with limits, schema, table id. Raises only `RemoteProtocolError`.
    The signature is checked by the caller, who knows which key the author id stands for."""
    envelope: Envelope = open_envelope(datagram)
    return decode_body(envelope.body, envelope.body_bytes, envelope.signature, table=table)


def decode_heartbeat(body: bytes, signature: bytes, *, table: bytes) -> Heartbeat:
    """A heartbeat carried inside an EVIDENCE message (relayed as its author signed it)."""
    message = decode_body(
        unpack_bounded(body, max_len=1100, canonical=True), body, signature, table=table
    )
    if not isinstance(message, Heartbeat):
        raise RemoteProtocolError(DropReason.SCHEMA, "EVIDENCE carries only heartbeats")
    return message


def decode_op(body: bytes, signature: bytes, *, table: bytes, body_hash: bytes | None = None) -> Op:
    """An op carried inside a BATCH (already unpacked out of its envelope). `body_hash`:
    `op_hash(body)`, if the caller has it already (a BATCH's ops are looked up by it)."""
    message = decode_body(
        unpack_bounded(body, max_len=1100, canonical=True),
        body,
        signature,
        table=table,
        body_hash=body_hash,
    )
    if not isinstance(message, Op):
        raise RemoteProtocolError(DropReason.SCHEMA, "a batch carries only ops")
    return message


# --- names ---------------------------------------------------------------------------------


#: Formatting characters that only join (or keep apart) the characters around them: an
#: emoji family or flag (ZWJ sequences), Persian and Indic spellings (ZWNJ). They move no
#: text and drive no terminal, unlike the other formatting characters (bidi overrides).
JOINERS: Final = frozenset("\u200c\u200d")


def printable_name(name: str) -> str:
    """`name` as a person reads it: control and formatting characters (a terminal's escape
    sequences, a right-to-left override) dropped but the joiners (`JOINERS`), each run of
    whitespace one space. Names come from other peers too: what they print must not take
    over a terminal."""
    kept = "".join(
        c for c in name if unicodedata.category(c)[0] != "C" or c.isspace() or c in JOINERS
    )
    return " ".join(kept.split())


def quoted_name(name: str) -> str:
    """A table's or a player's name in a sentence: `printable_name`, in quotes. Not `repr`,
    which doubles a backslash and spells out the joiners of an emoji family as escapes."""
    shown = printable_name(name)
    return f'"{shown}"' if "'" in shown else f"'{shown}'"


def name_problem(name: str) -> str | None:
    """Why `name` cannot be ours at a table, in words; None if it can: it is printable
    text (`printable_name` leaves it as it is), not empty, and fits the wire."""
    if not name.strip():
        return "a name must not be empty"
    if printable_name(name) != name:
        return f"a name is printable text on one line, with single spaces: {name!r} is not"
    return name_size_problem(name)


def name_size_problem(name: str) -> str | None:
    """Why the wire cannot carry `name` (its UTF-8 is too long), or None."""
    size = len(name.encode())
    if size > NAME_MAX_BYTES:
        return f"a name is at most {NAME_MAX_BYTES} bytes of UTF-8: {name!r} is {size}"
    return None


def fit_name(name: str, suffix: str = "") -> str:
    """A name made from `name` and `suffix` (a bot's "-bot2", a guest's "-guest") that
    `name_problem` accepts: `name` made printable, then shortened by whole characters
    until it and `suffix` fit the wire together. `suffix` is kept whole."""
    base = printable_name(name)
    budget = NAME_MAX_BYTES - len(suffix.encode())
    while len(base.encode()) > budget:
        base = base[:-1]
    return (base.rstrip() + suffix) or "?"


# --- encoding (what this peer sends) -----------------------------------------------------


def op_body(
    kind: Kind,
    table: bytes,
    author: bytes,
    seq: int,
    prev: bytes,
    lamport: int,
    epoch: int,
    deps: Sequence[object],
    payload: object,
) -> list[object]:
    return [int(kind), table, author, seq, prev, lamport, epoch, list(deps), payload]


def seal_op(key: SigningKeyPair, body: list[object]) -> Op:
    """Sign an op body and return the op exactly as a receiver will decode it: the value
    msgpack gives back for the signed bytes, through the schema and the checks across
    fields (`decode_body`). Not through the rest of the gate: the envelope and the body's
    encoding were made just now by `seal_parts` (canonical, within the limits, sizes
    checked), so unpacking them with limits again would only find what was written. A move's author
    signs on its way to the wire, so this is part of every move's latency."""
    _, body_bytes, signature = seal_parts(key, body)
    table: bytes = body[1]  # type: ignore[assignment]
    decoded = decode_body(unpack_own(body_bytes), body_bytes, signature, table=table)
    assert isinstance(decoded, Op)
    return decoded


def heartbeat_body(
    table: bytes,
    sender: bytes,
    lamport: int,
    vector: Sequence[tuple[bytes, int]],
    state_hash: bytes,
) -> list[object]:
    return [int(Kinds.HEARTBEAT), table, sender, lamport, [list(p) for p in vector], state_hash]


def request_body(
    table: bytes, sender: bytes, ranges: Sequence[tuple[bytes, int, int]]
) -> list[object]:
    return [int(Kinds.REQUEST), table, sender, [list(r) for r in ranges]]


def batch_body(table: bytes, sender: bytes, ops: Sequence[Op]) -> list[object]:
    return [int(Kinds.BATCH), table, sender, [[op.body, op.signature] for op in ops]]


def evidence_body(table: bytes, sender: bytes, heartbeats: Sequence[Heartbeat]) -> list[object]:
    return [int(Kinds.EVIDENCE), table, sender, [[hb.body, hb.signature] for hb in heartbeats]]


def hello_body(
    table: bytes, sender: bytes, public_key: bytes, role: int, name: str
) -> list[object]:
    return [int(Kinds.HELLO), table, sender, public_key, role, name]


def challenge_body(table: bytes, sender: bytes, joiner: bytes, nonce: bytes) -> list[object]:
    return [int(Kinds.CHALLENGE), table, sender, joiner, nonce]


def answer_body(table: bytes, sender: bytes, nonce: bytes, mac: bytes) -> list[object]:
    return [int(Kinds.ANSWER), table, sender, nonce, mac]


def verdict_body(
    table: bytes, sender: bytes, joiner: bytes, admit_seq: int, reason: int
) -> list[object]:
    return [int(Kinds.VERDICT), table, sender, joiner, admit_seq, reason]
