"""The sans-I/O sync state machine of one peer at one table.

Feed it datagrams and the time; take back datagrams to send and events. It decides
everything the network needs decided and nothing about the game:

- the receive gate, in DESIGN.md's order: size, per-source rate limit, unpack with limits,
  schema, table id, signature, then (when the op can be placed) seq / hash chain / Lamport
  discipline / membership;
- causal delivery: an op is delivered once its author's previous op and every op its deps
  name are delivered, so every peer delivers a causally consistent history;
- each round's total order and stable prefix (`order.EpochLog`);
- anti-entropy: heartbeats every `heartbeat_interval` seconds carry the version vector, the
  Lamport time and the state hash of exactly that vector; a peer that lacks ops asks for
  the missing ranges, and a peer that has what another lacks pushes it;
- equivocation: two signed ops with the same (author, seq) are kept as proof, relayed, and
  the author is expelled.

Theory of the stable state hash: DESIGN.md asks that peers with equal vectors compare the
hash of their stable prefix, but the stable prefix also depends on which heartbeats a peer
has heard. The hash of the fold of *everything in the vector* depends only on the vector,
so that is what heartbeats carry; equal vectors with unequal hashes is then always a bug.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Final

from . import admission, departure
from .clocks import LamportClock, VersionVector
from .counters import DropCounters
from .envelope import seal
from .errors import DropReason, LocalProtocolError, RemoteProtocolError
from .messages import (
    MAX_BATCH,
    MAX_LAMPORT,
    MAX_RANGES,
    MAX_RELAYED,
    NO_PREV,
    PLAYER,
    SPECTATOR,
    AdmissionMessage,
    Batch,
    Evidence,
    Heartbeat,
    Kind,
    Op,
    Request,
    batch_body,
    decode,
    decode_heartbeat,
    decode_op,
    evidence_body,
    heartbeat_body,
    op_body,
    request_body,
    seal_op,
)
from .order import EpochLog, nonce_commitment, round_mix
from .promises import PromiseBook, broken_promise
from .ratelimit import TokenBucketLimiter
from .signing import SigningKeyPair, key_id, op_hash, verify

BROADCAST: Final = "*"  # an outgoing datagram for every peer the shell knows of
MAX_PENDING_PER_AUTHOR: Final = 512
MAX_PENDING: Final = 4096
MAX_PUSH: Final = 32  # ops pushed to one peer per heartbeat it sends
MAX_REPLY: Final = 64  # ops sent in answer to one request
MAX_AWAITING: Final = 256  # ops parked until their author's key arrives, all authors together
MAX_REQUESTED: Final = 4096  # authors with a request in flight (pruned when it grows past)
MAX_ASKING: Final = 64  # peers whose answers (and heartbeat vectors) we keep track of
RELAY_EVERY: Final = 4  # heartbeat intervals between relays of others' heartbeats
PROBE_FOR: Final = 5.0  # seconds a state-hash mismatch's probe for an equivocation stands
#: How far past everything it names (its previous op, its deps, its round's START) an op may
#: be stamped (PROTOCOL.md 5, rule 2). Honest clocks gain one per heartbeat (75 ms), so
#: 2^23 is a week at the table without authoring; a member's lie can push the table's time
#: up by at most this much per op it signs, so 2^24 ops before the 2^48 ceiling.
MAX_LAMPORT_STEP: Final = 2**24


@dataclass(frozen=True)
class OpDelivered:
    op: Op
    position: int | None  # where it sorts in its round (None for lobby ops)


@dataclass(frozen=True)
class OpRejected:
    """A signed op that breaks the protocol (backdated, not a member, broken chain): it is
    dropped for good, and its author's later ops cannot be delivered either."""

    op: Op
    reason: DropReason
    message: str


@dataclass(frozen=True)
class AuthorExpelled:
    """Proof of cheating: two ops with one (author, seq) (equivocation), or a signed heartbeat
    and a later op of its author that breaks its promise (`reason` says which)."""

    author: bytes
    seq: int
    evidence: tuple[Op, Op] | tuple[Heartbeat, Op]
    reason: DropReason = DropReason.EQUIVOCATION


@dataclass(frozen=True)
class DivergenceDetected:
    peer: bytes
    vector: tuple[tuple[bytes, int], ...]
    ours: bytes
    theirs: bytes


@dataclass(frozen=True)
class DeparturesChanged:
    """The round's departures by agreement (PROTOCOL.md 13) changed: `departed` maps each
    departed participant to the last of its seqs that counts. Usually one more participant
    has gone; a late DEPART sorting earlier may also move an agreement."""

    epoch: int
    departed: dict[bytes, int]
    added: tuple[bytes, ...]


@dataclass
class Quarantine:
    """A peer that may have authored ops before it lost its log (a restart) must not author
    seq 1 again: that would be equivocation. It waits until it has heard the table for
    `hold` seconds and holds every op of its own that any heartbeat named."""

    hold: float
    since: float | None = None  # when the first heartbeat of another member arrived
    wanted: int = 0  # the highest seq of ours any heartbeat named
    #: Our own latest heartbeat as relayed back to us (EVIDENCE): what we had promised. A
    #: peer that had ops here must see it, and hold every op its vector named, before it
    #: signs again (else its next op could break that promise).
    own_seen: bool = False
    promised: dict[bytes, int] | None = None


@dataclass
class Resuming:
    """A peer restarted from its store (PROTOCOL.md 14) holds its own chain to `head`, but
    its ops wait for the table's ops they depend on, and it has lost what it had delivered
    since its last op. Its last heartbeats promised deps that cover that, so it stays quiet
    (no op, no heartbeat) until its chain is delivered and it holds every op that the first
    heartbeat it hears from each peer after the restart names."""

    head: int
    hold: float
    started: float | None = None  # the first tick after the restart
    since: float | None = None  # the first heartbeat of another member after it
    heard: set[bytes] = field(default_factory=set)
    wanted: dict[bytes, int] = field(default_factory=dict)  # author -> seq to hold
    #: A heartbeat arrived from a peer we have no key for yet (we ask for its first op):
    #: someone is there, so we are not alone at the table.
    knocked: bool = False


#: A restarted peer that hears no heartbeat at all waits this many `hold`s (PROTOCOL.md 14).
ALONE_HOLD: Final = 5


def fair_take(runs: Sequence[Sequence[Op]], budget: int) -> list[Op]:
    """Up to `budget` ops from `runs`, round robin: the first op of every run, then the
    second of every run, and so on. Each run keeps its own order (ascending seq)."""
    out: list[Op] = []
    depth = 0
    while len(out) < budget and any(depth < len(run) for run in runs):
        for run in runs:
            if depth < len(run) and len(out) < budget:
                out.append(run[depth])
        depth += 1
    return out


SyncEvent = OpDelivered | OpRejected | AuthorExpelled | DivergenceDetected | DeparturesChanged


@dataclass
class Member:
    author: bytes
    public_key: bytes
    name: str
    role: int
    left: bool = False


class SyncPeer:
    """One peer's view of one table. `role` is PLAYER or SPECTATOR."""

    def __init__(
        self,
        key: SigningKeyPair,
        table: bytes,
        *,
        heartbeat_interval: float = 0.075,
        request_retry: float = 0.2,
        rate_per_s: float = 2000.0,
        burst: int = 400,
    ) -> None:
        self.key = key
        self.me = key.key_id
        self.table = table
        self.heartbeat_interval = heartbeat_interval
        self.request_retry = request_retry
        self.clock = LamportClock()
        self.keys: dict[bytes, bytes] = {self.me: key.public_key}
        self.logs: dict[bytes, list[Op]] = {}  # delivered ops per author, seq 1..n
        self.pending: dict[bytes, dict[int, Op]] = {}
        self.awaiting_key: dict[bytes, list[Op]] = {}
        #: author -> seq of an op of its we rejected and no valid op has replaced yet
        self.dead: dict[bytes, int] = {}
        self.expelled: dict[bytes, int] = {}
        self.evidence: dict[bytes, tuple[Op, Op]] = {}
        self.members: dict[bytes, Member] = {}
        self.host: bytes | None = None
        self.open_op: Op | None = None
        self.epochs: dict[int, EpochLog] = {}
        self.readies: dict[tuple[int, bytes], list[Op]] = {}  # (round, author) -> READY ops
        self.peers: dict[bytes, Hashable] = {}  # sender id -> where it was last heard from
        self.counters = DropCounters()
        self.duplicates = 0
        self.divergences = 0
        self.limiter = TokenBucketLimiter(rate_per_s, burst, max_sources=256)
        self._outbox: list[tuple[Hashable, bytes]] = []
        self._events: list[SyncEvent] = []
        self._next_heartbeat = 0.0
        self._requested: dict[bytes, float] = {}
        #: source -> (authors of our last request to it, ops its answer can bring, ops come)
        self._asking: dict[Hashable, tuple[tuple[bytes, ...], int, int]] = {}
        #: source -> the vector of the latest heartbeat that came from there
        self._offered: dict[Hashable, VersionVector] = {}
        self._hashed: tuple[tuple[tuple[bytes, int], ...], bytes | Callable[[], bytes]] | None = (
            None
        )
        self._vector: tuple[tuple[bytes, int], ...] | None = None  # vector() until a delivery
        self._now = 0.0  # the latest time we were handed (authoring is not handed one)
        #: author -> when each of its delivered ops was delivered here (parallel to `logs`)
        self._delivered_at: dict[bytes, list[float]] = {}
        #: author -> (its next op, the dep (author, seq) it waited for when last looked at)
        self._blocked_on: dict[bytes, tuple[Op, bytes, int]] = {}
        self._waiting_hb: dict[bytes, tuple[int, int]] = {}  # author -> (lamport, own seq)
        self._promised = 0  # the Lamport time of our latest heartbeat: our next op's floor
        #: sender -> the vector at which its state hash differed from ours, and when we asked
        #: it for its latest ops (a later mismatch is a divergence, section 9)
        self._probed: dict[bytes, tuple[tuple[tuple[bytes, int], ...], float]] = {}
        # author -> (its op rejected as backdated, the dep (author, seq) it failed on)
        self._backdated_on: dict[bytes, tuple[Op, tuple[bytes, int]]] = {}
        #: author -> when we last had a sign of life from it (an op of its we delivered, its
        #: heartbeat); an op we could not deliver (a copy we rejected) shows nothing
        self.heard: dict[bytes, float] = {}
        #: author -> (the seq of its own that its heartbeats named first among those we have
        #: not delivered, since when it has gone unmet): see `signs_of_life`
        self._claims: dict[bytes, tuple[int, float]] = {}
        #: sender -> the vector of its latest heartbeat: what it acknowledges holding
        self.acks: dict[bytes, VersionVector] = {}
        self._latest_hb: dict[bytes, int] = {}  # sender -> lamport of its newest heartbeat
        #: A restarted peer authors nothing until the table has shown it its own chain
        #: (`quarantine`): None when free to author.
        self.quarantined: Quarantine | None = None
        #: A peer restarted from its store is quiet until it has caught up (`resume`).
        self.resuming: Resuming | None = None
        self.promises = PromiseBook()
        self._held_hashes: set[bytes] = set()  # op hashes delivered or parked here
        self.lies: dict[bytes, tuple[Heartbeat, Op]] = {}  # author -> promise and the op
        self.revealed: set[tuple[int, bytes]] = set()  # (round, author) with a REVEAL
        #: The game's own checks of an op (rules, cards shown), on its causal past only: a
        #: message in words, or None. Decides delivery like the protocol's own checks.
        self.game_check: Callable[[Op], str | None] | None = None
        self._ticks = 0
        #: key id -> (seq of the host's ADMIT naming it, role): who may JOIN (PROTOCOL.md 17)
        self.admits: dict[bytes, tuple[int, int]] = {}
        self.admission = admission.Admission(self)

    # --- reading -----------------------------------------------------------------------

    def delivered(self, author: bytes) -> int:
        log = self.logs.get(author)
        return len(log) if log else 0

    def vector(self) -> tuple[tuple[bytes, int], ...]:
        # Asked for on every heartbeat sent and received: computed again only after a delivery.
        cached = self._vector
        if cached is None:
            cached = self._vector = tuple(
                sorted((a, len(log)) for a, log in self.logs.items() if log)
            )
        return cached

    def events(self) -> list[SyncEvent]:
        out, self._events = self._events, []
        return out

    def outgoing(self) -> list[tuple[Hashable, bytes]]:
        out, self._outbox = self._outbox, []
        return out

    def epoch(self, number: int) -> EpochLog | None:
        return self.epochs.get(number)

    def serves(self, sender: bytes) -> bool:
        """A member, or a key the host admitted: its sync messages count and it is served
        (PROTOCOL.md 17). Anyone else is a stranger, whatever key we hold for it."""
        # Ourselves too: a restarted peer is shown its own relayed heartbeats (section 14)
        # before its own JOIN is back.
        return sender in self.members or sender in self.admits or sender == self.me

    def send_to(self, destination: Hashable, datagram: bytes) -> None:
        self._outbox.append((destination, datagram))

    def set_state_hash(self, state_hash: bytes | Callable[[], bytes]) -> None:
        """The game's hash of its fold of exactly the ops delivered so far, or a function that
        computes it: then it is computed only when a heartbeat needs it (a peer catching up
        folds many datagrams between two heartbeats, and hashing a state costs more than
        folding an op). Heartbeats carry its first 8 bytes and 8 bytes of the expelled set it
        was folded with (section 9): the fold also depends on whom this peer has expelled,
        which the vector does not show, so only hashes folded with the same expulsions are
        compared."""
        expelled = self.expelled_digest()
        if callable(state_hash):
            compute = state_hash
            self._hashed = (self.vector(), lambda: compute()[:8] + expelled)
        else:
            self._hashed = (self.vector(), state_hash[:8] + expelled)

    def expelled_digest(self) -> bytes:
        """8 bytes naming the expelled set: SHA-256("nerts-p2p/expelled" || 0x00 ||
        (author || seq as 4 bytes big-endian) for each expelled author, ascending)."""
        digest = hashlib.sha256(b"nerts-p2p/expelled\x00")
        for author, seq in sorted(self.expelled.items()):
            digest.update(author + seq.to_bytes(4, "big"))
        return digest.digest()[:8]

    def _state_hash_of(self, vector: tuple[tuple[bytes, int], ...]) -> bytes:
        """Our state hash if it is the hash of exactly `vector`, else b"" (not computed)."""
        hashed = self._hashed
        if hashed is None or hashed[0] != vector:
            return b""
        state_hash = hashed[1]
        if callable(state_hash):
            state_hash = state_hash()
            self._hashed = (vector, state_hash)
        return state_hash

    # --- authoring ---------------------------------------------------------------------

    def deps_for(self, kind: Kind, epoch: int, payload: object) -> list[object]:
        """The deps our next op of this kind names, as `author` writes them."""
        if epoch == 0:
            # Only what a lobby op depends on: the table's OPEN and our own previous op. (All
            # authors would make lobby ops grow with every spectator who ever joined.)
            needed = {self.me: self.delivered(self.me)}
            if self.host is not None and self.host != self.me:
                needed[self.host] = 1
                if kind == Kind.JOIN and self.me in self.admits:
                    needed[self.host] = self.admits[self.me][0]  # the host's ADMIT of us
            return [[a, n] for a, n in sorted(needed.items()) if n]
        if kind == Kind.START:
            return [self.delivered(p) for p in payload[0]]  # type: ignore[index]
        log = self.epochs.get(epoch)
        if log is None:
            raise LocalProtocolError(DropReason.SCHEMA, f"round {epoch} has not started here")
        return [self.delivered(p) for p in log.participants]

    def author(self, kind: Kind, epoch: int, payload: object) -> Op:
        """Sign and deliver an op of our own; it is queued for every peer. The caller stores
        it before sending (crash safety) by reading `outgoing()` after persisting."""
        if self.quarantined is not None or self.resuming is not None:
            raise LocalProtocolError(
                DropReason.SCHEMA,
                "restarting: waiting for the table to show us our own ops before authoring",
            )
        seq = self.delivered(self.me) + 1
        prev = self.logs[self.me][-1].hash if seq > 1 else NO_PREV
        deps = self.deps_for(kind, epoch, payload)
        lamport = self._stamp(kind, epoch, payload, deps)
        op = seal_op(
            self.key, op_body(kind, self.table, self.me, seq, prev, lamport, epoch, deps, payload)
        )
        problem = self._problem(op)
        if problem is not None:
            # Ours to refuse: sending it would only get it rejected everywhere and leave our
            # own chain dead. Nothing was stored, so the seq is free again.
            raise LocalProtocolError(problem[0], f"cannot author this {kind.name}: {problem[1]}")
        self._deliver(op, authored=True)
        self._outbox.append((BROADCAST, op.datagram()))
        self._resolve_departures()
        return op

    def _stamp(self, kind: Kind, epoch: int, payload: object, deps: list[object]) -> int:
        """Our next op's Lamport time: the clock's next tick, but never more than
        MAX_LAMPORT_STEP past what the op names (our clock may have run ahead on an op we
        hold and do not name, a lobby op stamped far ahead, say), and always past our
        latest heartbeat's promise. An op that cannot be stamped is refused, never sent."""
        if epoch == 0:
            named: dict[bytes, int] = {pair[0]: pair[1] for pair in deps}  # type: ignore[index]
        else:
            log = self.epochs.get(epoch)
            players = log.participants if log is not None else payload[0]  # type: ignore[index]
            named = dict(zip(players, deps, strict=False))  # type: ignore[arg-type]
        floor = self._lamport_floor(self.me, epoch, named)
        lamport = max(min(self.clock.tick(), floor + MAX_LAMPORT_STEP), self._promised + 1)
        if lamport > min(floor + MAX_LAMPORT_STEP, MAX_LAMPORT):
            raise LocalProtocolError(
                DropReason.BACKDATED,
                "the table's Lamport time has reached its limit: no op can be stamped",
            )
        return lamport

    def _lamport_floor(self, author: bytes, epoch: int, named: dict[bytes, int]) -> int:
        """The highest Lamport time among what an op names: its author's previous op, every
        op its deps name (not an expelled author's from its expulsion on) and its round's
        START. An op may be stamped at most MAX_LAMPORT_STEP past it."""
        log = self.logs.get(author)
        floor = log[-1].lamport if log else 0
        for dep_author, dep_seq in named.items():
            if (
                dep_seq
                and not self._beyond_expulsion(dep_author, dep_seq)
                and self.delivered(dep_author) >= dep_seq
            ):
                floor = max(floor, self._dep_lamport(dep_author, dep_seq))
        start = self.epochs[epoch].start if epoch in self.epochs else None
        return max(floor, start.lamport) if start is not None else floor

    # --- receiving ---------------------------------------------------------------------

    def receive(self, datagram: bytes, source: Hashable, now: float) -> None:
        """Run one datagram through the gate. Never raises for anything a peer sends."""
        self._now = max(self._now, now)
        if len(datagram) > 1200:
            self.counters.count(DropReason.OVERSIZE)
            return
        if not self.limiter.allow(source, now):
            self.counters.count(DropReason.RATE_LIMITED)
            return
        try:
            message = decode(datagram, table=self.table)
            if isinstance(message, Op):
                self._receive_op(message, source, now)
                return
            if isinstance(message, Batch | Evidence):
                # Relays: every op and heartbeat inside is signed by its own author and checked
                # on its own, and nothing is taken from the relay's sender field, so the relay's
                # own signature is not worth a verification (a catching-up peer gets many).
                if isinstance(message, Evidence):
                    self._on_evidence(message, now)
                else:
                    self._on_batch(message, source, now)
                return
            if isinstance(message, AdmissionMessage):
                self.admission.receive(message, source, now)
                return
            known = self._verify_sender(message.sender, message.body, message.signature)
            if known:
                self.peers[message.sender] = source
            if isinstance(message, Heartbeat):
                if not known:
                    # A peer we know nothing of yet: ask for its first op, which carries its key.
                    self.request(source, [(message.sender, 1, 1)], now)
                    if self.resuming is not None:
                        self.resuming.knocked = True
                    raise RemoteProtocolError(
                        DropReason.UNKNOWN_AUTHOR, "a heartbeat from a peer we have no key for"
                    )
                self._on_heartbeat(message, source, now)
            elif isinstance(message, Request):
                self._on_request(message, source, first_ops_only=not known)
        except RemoteProtocolError as exc:
            self.counters.count_error(exc)

    def _on_batch(self, message: Batch, source: Hashable, now: float) -> None:
        """Ops relayed by anyone: each is checked on its own."""
        # A batch from a stranger is fine: every op in it is checked on its own.
        # What counts toward an answer: ops we now hold (delivered or parked), new or not. An op
        # dropped here (junk, or an expelled author's) does not: asking again at once for
        # what we will never hold would only loop.
        genuine = 0
        for body, signature in message.ops:
            held = op_hash(body)
            if held in self._held_hashes:
                # Catching up, the same op comes from every peer that pushes it:
                # known by its hash, it costs no decoding.
                self.duplicates += 1
                self.counters.count(DropReason.REPLAYED)
                genuine += 1
                continue
            try:
                self._receive_op(decode_op(body, signature, table=self.table), source, now)
            except RemoteProtocolError as exc:
                self.counters.count_error(exc)
            genuine += held in self._held_hashes
        if source in self._asking:
            self._answer_arrived(source, genuine, now)

    def load(self, datagrams: Sequence[bytes]) -> None:
        """Ops from our own store (a node restarting): every gate step but the rate limit,
        which is for the network. First ops (they carry keys) go first."""
        ops: list[Op] = []
        for datagram in datagrams:
            try:
                message = decode(datagram, table=self.table)
            except RemoteProtocolError as exc:
                self.counters.count_error(exc)
                continue
            if isinstance(message, Op):
                ops.append(message)
        ops.sort(key=lambda op: (op.public_key is None, op.seq))
        outbox = len(self._outbox)
        for op in ops:
            try:
                self._receive_op(op, None, 0.0)
            except RemoteProtocolError as exc:
                self.counters.count_error(exc)
        del self._outbox[outbox:]  # nothing to ask the store for

    def _verify_sender(self, sender: bytes, body: bytes, signature: bytes) -> bool:
        """Verify a sync message's signature; False if we have no key for its sender yet, or
        it is neither a member nor admitted (a key whose JOIN was refused is a stranger)."""
        public_key = self.keys.get(sender)
        if public_key is None or not self.serves(sender):
            return False
        verify(public_key, body, signature)
        return True

    def _receive_op(self, op: Op, source: Hashable, now: float) -> None:
        author, seq = op.author, op.seq
        known = self._held(author, seq)
        if known is not None:
            if known.body == op.body:
                # Duplication is normal on a LAN and harmless; counted, never an error.
                self.duplicates += 1
                self.counters.count(DropReason.REPLAYED)
                return
            public_key = self.keys.get(author)
            if public_key is None:
                raise RemoteProtocolError(DropReason.UNKNOWN_AUTHOR, "unknown author")
            verify(public_key, op.body, op.signature)
            self._expel(known, op)
            return
        if author in self.expelled and seq >= self.expelled[author]:
            return
        public_key = op.public_key or self.keys.get(author)
        if public_key is None:
            # Nothing about such an op is verified yet: anyone can make up author ids, so the
            # parking space is bounded for all of them together, not only per author.
            parked = self.awaiting_key.get(author, [])
            if len(parked) >= 64:
                raise RemoteProtocolError(
                    DropReason.UNKNOWN_AUTHOR, "too many ops from an author we have no key for"
                )
            while self._awaiting_total() >= MAX_AWAITING:
                # Full of made-up authors, perhaps: the oldest go, so a real newcomer is not
                # shut out for good (anti-entropy brings back anything real).
                oldest = next(iter(self.awaiting_key))
                self.counters.count(DropReason.UNKNOWN_AUTHOR, len(self.awaiting_key.pop(oldest)))
                parked = self.awaiting_key.get(author, [])
            self.awaiting_key[author] = [*parked, op]
            self.request(source, [(author, 1, 1)], now)
            return
        verify(public_key, op.body, op.signature)
        introduced = [(author, op.public_key)] if op.public_key is not None else []
        if op.kind == Kind.ADMIT:
            # The host's ADMIT names the joiner's key; a key is bound to its id, so it
            # verifies the joiner's ops even before its JOIN arrives.
            introduced.append((key_id(op.payload[0]), op.payload[0]))
        for new_author, new_key in introduced:
            if new_author in self.keys:
                continue
            self.keys[new_author] = new_key
            for parked_op in self.awaiting_key.pop(new_author, []):
                try:
                    self._receive_op(parked_op, source, now)
                except RemoteProtocolError as exc:
                    self.counters.count_error(exc)
        if seq <= self.delivered(author):
            return  # a different body would have been caught above as equivocation
        log = self.logs.get(author)
        if log and seq == len(log) + 1 and op.prev != log[-1].hash and source is not None:
            # Signed on top of an op seq-1 that is not the one we hold: its sender may hold
            # that other op. Asked for, it is the proof of an equivocation that equal
            # vectors would never show (the table is split until someone holds both).
            self.request(source, [(author, seq - 1, seq - 1)], now)
        pending = self.pending.setdefault(author, {})
        if len(pending) >= MAX_PENDING_PER_AUTHOR or self._pending_total() >= MAX_PENDING:
            raise RemoteProtocolError(DropReason.RATE_LIMITED, "too many ops waiting for others")
        pending[seq] = op
        self._held_hashes.add(op.hash)
        self._deliver_ready()

    def _held(self, author: bytes, seq: int) -> Op | None:
        log = self.logs.get(author)
        if log and seq <= len(log):
            return log[seq - 1]
        return self.pending.get(author, {}).get(seq)

    def _pending_total(self) -> int:
        return sum(len(p) for p in self.pending.values())

    def _awaiting_total(self) -> int:
        return sum(len(p) for p in self.awaiting_key.values())

    # --- delivery ----------------------------------------------------------------------

    def _deliver_ready(self) -> None:
        blocked = self._blocked_on
        progress = True
        while progress:
            progress = False
            for author in list(self.pending):
                queue = self.pending[author]
                nxt = self.delivered(author) + 1
                op = queue.get(nxt)
                if op is None:
                    continue
                waits = blocked.get(author)
                if (
                    waits is not None
                    and waits[0] is op
                    and self.delivered(waits[1]) < waits[2]
                    and not self._beyond_expulsion(waits[1], waits[2])
                ):
                    # Still short of the dep it failed on last time: no need to look again
                    # (a catching-up peer parks many ops, and each delivery re-scans them).
                    continue
                if not self._deps_met(op):
                    continue
                del queue[nxt]
                blocked.pop(author, None)
                if not queue:
                    del self.pending[author]
                self._deliver_checked(op)
                progress = True
            # A departure agreed on just now may make a waiting successor's START
            # deliverable (`_successor_waits`): look again, rather than wait for an op.
            progress = self._resolve_departures() or progress

    def _deps_met(self, op: Op) -> bool:
        if op.kind != Kind.OPEN and self.open_op is None:
            return False  # everything at a table happens after its OPEN
        if op.epoch == 0:
            for a, n in op.lobby_deps:
                if self.delivered(a) < n and not self._beyond_expulsion(a, n):
                    self._blocked_on[op.author] = (op, a, n)
                    return False
            return True
        log = self.epochs.get(op.epoch)
        if log is None and op.kind != Kind.START:
            return False
        if self._successor_waits(op):
            return False
        participants = log.participants if log is not None else op.payload[0]
        if len(op.round_deps) != len(participants):
            return True  # judged (and rejected) by the checks on delivery
        for p, n in zip(participants, op.round_deps, strict=True):
            if self.delivered(p) < n and not self._beyond_expulsion(p, n):
                # Remembered: while this dep is missing, the op cannot be delivered.
                self._blocked_on[op.author] = (op, p, n)
                return False
        return True

    def _reject(self, op: Op, reason: DropReason, message: str) -> None:
        # Only this copy is dropped, not its author's seq: a check failed here is not proof
        # the others hold (they may never see this copy), and a valid op with the same seq
        # may reach them and then us (an invalid twin must not split us off the table).
        # The author's ops parked behind it go too; anti-entropy brings back the real ones.
        self.dead[op.author] = min(op.seq, self.dead.get(op.author, op.seq))
        for parked in self.pending.pop(op.author, {}).values():
            self._held_hashes.discard(parked.hash)
        self._held_hashes.discard(op.hash)
        self.counters.count(reason)
        self._events.append(OpRejected(op, reason, message))

    def _dep_lamport(self, author: bytes, seq: int) -> int:
        return self.logs[author][seq - 1].lamport if seq else 0

    def _problem(self, op: Op) -> tuple[DropReason, str, tuple[bytes, int] | None] | None:
        """Why `op` cannot be delivered (reason, words, the dep it failed on), or None.
        Chain, Lamport discipline, deps shape and membership; no side effects."""
        author = op.author
        log = self.logs.get(author, [])
        previous = log[-1] if log else None
        if op.prev != (previous.hash if previous else NO_PREV):
            return (
                DropReason.BROKEN_CHAIN,
                f"op {op.seq} does not chain to the author's op {op.seq - 1}",
                None,
            )
        if previous is not None and op.lamport <= previous.lamport:
            return (
                DropReason.BACKDATED,
                "its Lamport time is not after the author's previous op",
                None,
            )
        if op.epoch == 0:
            claimed = dict(op.lobby_deps)
        else:
            participants = (
                self.epochs[op.epoch].participants if op.epoch in self.epochs else op.payload[0]
            )
            if len(op.round_deps) != len(participants):
                return (
                    DropReason.SCHEMA,
                    "deps must give one seq per participant of the round",
                    None,
                )
            claimed = dict(zip(participants, op.round_deps, strict=True))
            start = self.epochs[op.epoch].start if op.epoch in self.epochs else None
            if start is not None and op.lamport <= start.lamport:
                # A floor for every round op: nobody can stamp a move before the round began.
                return (DropReason.BACKDATED, "its Lamport time is before its round started", None)
        counts_itself = op.epoch == 0 or author in claimed
        if counts_itself and claimed.get(author, 0) != op.seq - 1 and (op.epoch or op.seq > 1):
            return DropReason.SCHEMA, "deps must count the author's own previous op", None
        for dep_author, dep_seq in claimed.items():
            if not dep_seq or self._beyond_expulsion(dep_author, dep_seq):
                continue
            if op.lamport <= self._dep_lamport(dep_author, dep_seq):
                return (
                    DropReason.BACKDATED,
                    "its Lamport time is not after an op it had seen",
                    (dep_author, dep_seq),
                )
        if op.lamport > self._lamport_floor(author, op.epoch, claimed) + MAX_LAMPORT_STEP:
            # A lie about time: delivered, it would push every peer's clock towards the
            # ceiling, past which nobody can author (2^48).
            return (
                DropReason.BACKDATED,
                "its Lamport time is far past everything it names",
                None,
            )
        membership = self._membership_problem(op)
        if membership is not None:
            return membership[0], membership[1], None
        discipline = self._discipline_problem(op, claimed)
        if discipline is not None:
            return discipline[0], discipline[1], None
        if self.game_check is not None:
            refused = self.game_check(op)
            if refused is not None:
                return DropReason.SCHEMA, refused, None
        return None

    def _named_deps(self, op: Op) -> dict[bytes, int]:
        """An op's deps as author -> seq (a round op's by its round's participants)."""
        if op.epoch == 0:
            return dict(op.lobby_deps)
        participants = (
            self.epochs[op.epoch].participants if op.epoch in self.epochs else op.payload[0]
        )
        return dict(zip(participants, op.round_deps, strict=False))

    def _discipline_problem(
        self, op: Op, claimed: dict[bytes, int]
    ) -> tuple[DropReason, str] | None:
        """What an author may not take back: what it had seen (deps never go down from one of
        its ops to the next), and its REVEAL (after it, no MOVE and no second REVEAL in that
        round: a REVEAL is its author's end of the round)."""
        log = self.logs.get(op.author)
        # Lobby deps name only what an op depends on (the OPEN, the author's own op), not all
        # it had seen: round deps are the claims of what was seen, so they are compared.
        previous_round_op = next((o for o in reversed(log or []) if o.epoch), None)
        if op.epoch and previous_round_op is not None:
            before = self._named_deps(previous_round_op)
            for author, seen in claimed.items():
                if seen < before.get(author, 0) and not self._beyond_expulsion(author, seen + 1):
                    return (
                        DropReason.BACKDATED,
                        "its deps name fewer ops of an author than its author's previous op did",
                    )
        if op.kind in (Kind.MOVE, Kind.REVEAL) and (op.epoch, op.author) in self.revealed:
            return (
                DropReason.SCHEMA,
                f"a {op.kind.name} after its author's REVEAL of round {op.epoch}",
            )
        return None

    def _beyond_expulsion(self, author: bytes, seq: int) -> bool:
        """An op of an expelled author from its equivocation on: never delivered here, and
        which version an honest peer saw cannot be known, so deps on it are not judged."""
        return author in self.expelled and seq >= self.expelled[author]

    def _deliver_checked(self, op: Op) -> None:
        problem = self._problem(op)
        if problem is not None:
            reason, message, failed_dep = problem
            if failed_dep is not None:
                self._backdated_on[op.author] = (op, failed_dep)
            self._reject(op, reason, message)
            return
        self._deliver(op)
        hb = self.promises.due(op)
        if hb is not None:
            self._check_promise(hb, op)

    def _deliver(self, op: Op, *, authored: bool = False) -> None:
        author = op.author
        self.logs.setdefault(author, []).append(op)
        self._vector = None
        self._delivered_at.setdefault(author, []).append(self._now)
        self._held_hashes.add(op.hash)
        if self.dead.get(author, op.seq + 1) <= op.seq:
            del self.dead[author]  # a valid twin of the op we rejected: nothing is dead now
        if not authored:
            # Our own ops come back this way only after a restart: the clock must pass them.
            self.clock.observe(op.lamport)
            # A sign of life, and progress on what its heartbeats claimed (section 13.1).
            self.heard[author] = max(self._now, self.heard.get(author, self._now))
            claim = self._claims.get(author)
            if claim is not None:
                if op.seq >= claim[0]:
                    del self._claims[author]
                else:
                    self._claims[author] = (claim[0], self._now)
        self._apply_membership(op)
        position = None
        if op.epoch:
            epoch = self.epochs[op.epoch]
            # Only the round's own ops are ordered in it: a LEAVE (any member, any epoch)
            # from someone who does not play the round has no place there.
            if epoch.counts_for_order(op) and epoch.orders(author):
                position = epoch.insert(op)
        # Any op, lobby ops too, says its author's next op is stamped later: a horizon.
        for other in self.epochs.values():
            other.hear(author, op.lamport)
        self._apply_waiting_heartbeat(author)
        self._events.append(OpDelivered(op, position))

    def _membership_problem(self, op: Op) -> tuple[DropReason, str] | None:
        kind, author = op.kind, op.author
        if kind == Kind.OPEN:
            return None  # the table id is derived from the host key: only the host can
        if self.open_op is None and kind != Kind.JOIN:
            # Everything at a table happens after its OPEN; deps make that causal.
            return DropReason.NOT_A_MEMBER, "the table has not been opened"
        if kind == Kind.JOIN:
            return admission.join_problem(self, op)
        if kind == Kind.ADMIT:
            return admission.admit_problem(self, op)
        member = self.members.get(author)
        if member is None or member.left:
            return DropReason.NOT_A_MEMBER, "the author is not a member of this table"
        if kind == Kind.LEAVE:
            return None
        if kind == Kind.READY:
            if member.role != PLAYER:
                return DropReason.SPECTATOR_OP, "a spectator cannot take part in a round"
            return None
        if kind == Kind.START:
            if author != self.starter(op.epoch):
                return (
                    DropReason.NOT_A_MEMBER,
                    "only the table's host (or successor) starts a round",
                )
            if op.epoch in self.epochs:
                return DropReason.SCHEMA, f"round {op.epoch} has already started"
            for p in op.payload[0]:
                m = self.members.get(p)
                if m is None or m.left or m.role != PLAYER:
                    return DropReason.NOT_A_MEMBER, "START names someone who is not a player here"
                if not self.ready_for(op.epoch, p, op):
                    return DropReason.SCHEMA, "START names a player who is not ready"
            return None
        epoch = self.epochs.get(op.epoch)
        if epoch is None:
            return DropReason.SCHEMA, f"round {op.epoch} has not started"
        if author not in epoch.index:
            if member.role == SPECTATOR:
                return DropReason.SPECTATOR_OP, "a spectator authors no game ops"
            return DropReason.NOT_A_MEMBER, f"the author does not play round {op.epoch}"
        if kind == Kind.MIX:
            return self._mix_problem(op, epoch)
        if kind == Kind.DEPART:
            return self._depart_problem(op, epoch)
        return None

    def ready_for(self, epoch: int, author: bytes, start: Op) -> Op | None:
        """The author's latest READY for `epoch` that `start` had seen."""
        seen = dict(zip(start.payload[0], start.round_deps, strict=False)).get(author, 0)
        candidates = [r for r in self.readies.get((epoch, author), []) if r.seq <= seen]
        return candidates[-1] if candidates else None

    def _apply_membership(self, op: Op) -> None:
        kind, author = op.kind, op.author
        if kind == Kind.OPEN:
            self.open_op, self.host = op, author
            pk, name = op.payload[0], op.payload[1]
            self.members[author] = Member(author, pk, name, PLAYER)
        elif kind == Kind.JOIN:
            pk, name, role = op.payload
            existing = self.members.get(author)
            if existing is None:
                self.members[author] = Member(author, pk, name, role)
        elif kind == Kind.ADMIT:
            pk, role = op.payload
            self.admits[key_id(pk)] = (op.seq, role)
            self.keys.setdefault(key_id(pk), pk)
        elif kind == Kind.LEAVE:
            self.members[author].left = True
        elif kind == Kind.READY:
            self.readies.setdefault((op.payload[0], author), []).append(op)
        elif kind == Kind.REVEAL:
            self.revealed.add((op.epoch, author))
        elif kind == Kind.START:
            participants = tuple(op.payload[0])
            readies = [self.ready_for(op.epoch, p, op) for p in participants]
            commitments = [r.payload[1] for r in readies if r is not None]
            log = EpochLog(
                op.epoch,
                participants,
                # The host may start a round it does not play: its START is still ordered.
                {p: self.keys[p] for p in (*participants, author)},
                round_mix(commitments),
                op,
            )
            for expelled, seq in self.expelled.items():
                log.exclude(expelled, seq)
            for p in participants:
                log.hear(p, self.logs[p][-1].lamport if self.logs.get(p) else 0)
            self.epochs[op.epoch] = log

    # --- departures, fair ties, restarts (PROTOCOL.md 6, 13, 14) -------------------------

    def starter(self, epoch: int) -> bytes | None:
        """Who may START round `epoch`: the host, unless it departed from (or left) an
        earlier round; then the first participant of that round, in START order, still in
        it. Deterministic: every peer that holds the earlier round's agreement names the
        same successor."""
        starter = self.host
        for number in sorted(self.epochs):
            if number >= epoch or starter is None:
                break
            log = self.epochs[number]
            gone = self.members.get(starter)
            if starter in log.departed or (gone is not None and gone.left):
                starter = next(
                    (
                        p
                        for p in log.participants
                        if p not in log.excluded and not self.members[p].left
                    ),
                    starter,
                )
        return starter

    def _successor_waits(self, op: Op) -> bool:
        """A START from someone other than the host is judged once this peer knows the
        host has departed (until then it waits, like an op whose deps are missing)."""
        if op.kind != Kind.START or op.author == self.host:
            return False
        previous = self.epochs.get(op.epoch - 1)
        if previous is None or self.starter(op.epoch) != self.host:
            return False
        heir = next(
            (
                p
                for p in previous.participants
                if p != self.host and p not in previous.excluded and not self.members[p].left
            ),
            None,
        )
        return op.author == heir  # anyone else is refused at once

    def _mix_problem(self, op: Op, epoch: EpochLog) -> tuple[DropReason, str] | None:
        if op.author in epoch.nonces:
            return DropReason.SCHEMA, f"a second MIX in round {op.epoch}"
        ready = self.ready_for(op.epoch, op.author, epoch.start)
        if ready is None or nonce_commitment(op.payload) != ready.payload[3]:
            return DropReason.SCHEMA, "the mix nonce does not open its author's READY commitment"
        return None

    def _depart_problem(self, op: Op, epoch: EpochLog) -> tuple[DropReason, str] | None:
        target, held = op.payload
        if target not in epoch.index or target == op.author:
            return DropReason.SCHEMA, "a DEPART names another participant of its round"
        if held != op.round_deps[epoch.index[target]]:
            return (
                DropReason.SCHEMA,
                "a DEPART names the target's seq its deps hold, no more and no less",
            )
        return None

    def _resolve_departures(self) -> bool:
        """Work out the departures again where a DEPART or an expulsion came in; True if
        any round's departures changed."""
        changed = False
        for epoch in self.epochs.values():
            seen = (epoch.depart_ops, len(epoch.excluded))
            if seen == epoch.depart_seen:
                continue  # no new vote and no expulsion: nothing to work out again
            epoch.depart_seen = seen
            agreed = departure.resolve(epoch)
            departed = {a: cut for a, (cut, _) in agreed.items()}
            if departed == epoch.departed:
                continue
            added = tuple(a for a in departed if a not in epoch.departed)
            epoch.departed = departed
            epoch.departed_at = {a: key for a, (_, key) in agreed.items()}
            self._events.append(DeparturesChanged(epoch.epoch, dict(departed), added))
            changed = True
        return changed

    def quarantine(self, hold: float = 1.0) -> None:
        """We may have authored ops at this table before losing them (a restart without
        the store): author nothing until the table has shown us our own chain."""
        self.quarantined = Quarantine(hold)

    def _quarantine_heartbeat(self, own_seq: int, now: float) -> None:
        q = self.quarantined
        if q is None:
            return
        q.wanted = max(q.wanted, own_seq)
        if q.since is None:
            q.since = now
        self._release_quarantine(now)

    def _release_quarantine(self, now: float) -> None:
        q = self.quarantined
        if (
            q is not None
            and q.since is not None
            and now - q.since >= q.hold
            and self.delivered(self.me) >= q.wanted
            and (q.wanted == 0 or q.own_seen)
            and all(self.delivered(a) >= n for a, n in (q.promised or {}).items())
        ):
            self.quarantined = None

    def resume(self, hold: float = 1.0) -> None:
        """We restarted from our store: every op we ever authored is loaded (delivered or
        waiting for its deps). Author nothing and promise nothing until caught up."""
        parked = self.pending.get(self.me, {})
        self.resuming = Resuming(max([self.delivered(self.me), *parked]), hold)

    def _resume_heartbeat(self, sender: bytes, vector: VersionVector, now: float) -> None:
        """The first heartbeat of each peer since the restart (sent after we went down:
        the socket is new) names every op its sender had made and every op it held. We
        had delivered no op of q that q had not made before our crash, so once we hold
        what q's first heartbeat names, our deps are at least what our last heartbeats
        before the crash promised."""
        r = self.resuming
        if r is None or sender == self.me or sender in r.heard:
            return
        r.heard.add(sender)
        for author, seq in vector.items():
            r.wanted[author] = max(seq, r.wanted.get(author, 0))
        if r.since is None:
            r.since = now
        self._release_resume(now)

    def _release_resume(self, now: float) -> None:
        r = self.resuming
        if r is None:
            return
        if r.started is None:
            r.started = now
        if self.delivered(self.me) < r.head:
            return
        if any(
            self.delivered(a) < n
            and not self._beyond_expulsion(a, n)
            and not (a in self.dead and n >= self.dead[a])
            for a, n in r.wanted.items()
        ):
            return
        # Every participant still in the latest round (in the lobby: every member we know)
        # heard, or `hold` seconds to hear them after the first: a silent one cannot keep
        # us quiet for ever. Nor can a table where nobody else is left: with no heartbeat
        # at all for `ALONE_HOLD` holds, nobody holds a promise of ours that we could break.
        if self.epochs:
            log = self.epochs[max(self.epochs)]
            expected = {p for p in log.participants if log.counts_author(p)}
        else:
            expected = {a for a, m in self.members.items() if not m.left}
        expected.discard(self.me)
        heard_all = bool(r.heard) and expected <= r.heard
        held_on = r.since is not None and now - r.since >= r.hold
        alone = r.since is None and not r.knocked and now - r.started >= ALONE_HOLD * r.hold
        if heard_all or held_on or alone:
            self.resuming = None
            # Our first sign of life is a heartbeat that shows we caught up, before any op
            # we author now: an op first would look like a peer that hides what it saw.
            self._heartbeat(now)

    # --- equivocation ------------------------------------------------------------------

    def _expel(self, first: Op, second: Op) -> None:
        author, seq = first.author, first.seq
        if author in self.expelled and self.expelled[author] <= seq:
            return
        self.evidence[author] = (first, second)
        self._expel_from(author, seq, (first, second), DropReason.EQUIVOCATION)
        # Everyone must learn it: relay both versions.
        self._outbox.append((BROADCAST, first.datagram()))
        self._outbox.append((BROADCAST, second.datagram()))

    def _expel_from(
        self,
        author: bytes,
        seq: int,
        evidence: tuple[Op, Op] | tuple[Heartbeat, Op],
        reason: DropReason,
    ) -> None:
        """Expel `author` from `seq` on: its ops from there do not count in any round, and it
        no longer holds back stability. The same on every peer that holds the evidence."""
        self.expelled[author] = seq
        for epoch in self.epochs.values():
            epoch.exclude(author, seq)
        self.counters.count(reason)
        self._events.append(AuthorExpelled(author, seq, evidence, reason))
        # An honest op judged against one version of the equivocated op may have been called
        # backdated here and not elsewhere: judge it again, now that the dep is not judged.
        for victim, (op, (dep_author, dep_seq)) in list(self._backdated_on.items()):
            if dep_author == author and dep_seq >= seq and self.dead.get(victim) == op.seq:
                del self._backdated_on[victim]
                del self.dead[victim]
                self.pending.setdefault(victim, {})[op.seq] = op
        self._deliver_ready()

    # --- heartbeats as promises (protocol/promises.py) ---------------------------------

    def _on_evidence(self, message: Evidence, now: float) -> None:
        """Heartbeats relayed by `message.sender`, each checked on its own like a BATCH's
        ops: a horizon for stability, and a promise to hold the author's next op to."""
        for body, signature in message.heartbeats:
            try:
                hb = decode_heartbeat(body, signature, table=self.table)
                held = self.promises.latest.get(hb.sender)
                if held is not None and held.body == hb.body and held.signature == hb.signature:
                    continue  # the one we hold already (most relays are): nothing to learn
                if not self._verify_sender(hb.sender, hb.body, hb.signature):
                    raise RemoteProtocolError(
                        DropReason.UNKNOWN_AUTHOR, "a relayed heartbeat of an unknown peer"
                    )
                self._sign_of_life(hb, VersionVector.from_pairs(hb.vector), now)
                self._on_promise(hb)
                self._hear_heartbeat(hb)
            except RemoteProtocolError as exc:
                self.counters.count_error(exc)

    def _sign_of_life(self, hb: Heartbeat, vector: VersionVector, now: float) -> None:
        """A heartbeat newer than any we had of its sender (direct or relayed: relays
        repeat old ones) shows it alive now, acknowledging `vector` (departures, 13)."""
        q = self.quarantined
        if q is not None and hb.sender == self.me:
            q.own_seen = True
            q.promised = {a: max(n, (q.promised or {}).get(a, 0)) for a, n in vector.items()}
            self.clock.observe(hb.lamport)
        if hb.lamport <= self._latest_hb.get(hb.sender, -1):
            return
        self._latest_hb[hb.sender] = hb.lamport
        self.heard[hb.sender] = max(now, self.heard.get(hb.sender, now))
        self.acks[hb.sender] = vector
        if hb.sender != self.me:
            self._claim(hb.sender, vector.seq(hb.sender), now)

    def _claim(self, author: bytes, own: int, now: float) -> None:
        """A heartbeat of `author` names `own` ops of its own: the first of them we lack
        starts a claim, which our deliveries of its ops meet (`signs_of_life`)."""
        delivered = self.delivered(author)
        claim = self._claims.get(author)
        if claim is not None and claim[0] > delivered:
            return  # an older claim still unmet: it keeps its time
        if own > delivered:
            self._claims[author] = (own, now)
        else:
            self._claims.pop(author, None)

    def signs_of_life(self) -> dict[bytes, float]:
        """author -> when we last had a sign of life from it that we can use (section 13.1).
        A heartbeat shows its sender alive only as far as the ops of its own it names reach
        us: one whose own ops named in a heartbeat have gone undelivered here (no copy of the
        next came, or only copies we rejected) shows no life from when it named them, however
        many heartbeats it sends, until one of those ops is delivered. Else a participant that
        sends only invalid copies of its op n, and heartbeats, would hold its round for ever."""
        out = dict(self.heard)
        for author, (seq, since) in self._claims.items():
            if author in out and self.delivered(author) < self._counted(author, seq):
                out[author] = min(out[author], since)
        return out

    def _on_promise(self, hb: Heartbeat) -> None:
        """Keep a verified heartbeat (direct or relayed) and hold its author to it."""
        if hb.sender == self.me:
            # Our own promise coming back (we restarted, say): never stamp below it.
            self.clock.observe(hb.lamport)
            self._promised = max(self._promised, hb.lamport)
            return
        delivered = self.delivered(hb.sender)
        self.promises.note(hb, delivered)
        own = dict(hb.vector).get(hb.sender, 0)
        if own < delivered:
            self._check_promise(hb, self.logs[hb.sender][own])

    def _check_promise(self, hb: Heartbeat, op: Op) -> None:
        epoch = self.epochs.get(op.epoch) if op.epoch else None
        why = broken_promise(hb, op, epoch.participants if epoch is not None else ())
        if why is None:
            return
        author = op.author
        if author in self.expelled and self.expelled[author] <= op.seq:
            return
        self.lies[author] = (hb, op)
        self._expel_from(author, op.seq, (hb, op), DropReason.BROKEN_PROMISE)
        self._deliver_ready()
        # Everyone must reach the same verdict: relay the promise and the op that broke it.
        self._outbox.append((BROADCAST, op.datagram()))
        self._outbox.append((BROADCAST, seal(self.key, evidence_body(self.table, self.me, [hb]))))

    def _relay_heartbeats(self) -> None:
        """Each participant's latest heartbeat, once, to everyone: a horizon that crosses a
        link losing everything one way (the heartbeats prove themselves)."""
        fresh = self.promises.to_relay(self.me)
        chunk: list[Heartbeat] = []
        size = 0
        for hb in fresh:
            cost = len(hb.body) + 64 + 6
            if chunk and (size + cost > 1000 or len(chunk) >= MAX_RELAYED):
                self._outbox.append(
                    (BROADCAST, seal(self.key, evidence_body(self.table, self.me, chunk)))
                )
                chunk, size = [], 0
            chunk.append(hb)
            size += cost
        if chunk:
            self._outbox.append(
                (BROADCAST, seal(self.key, evidence_body(self.table, self.me, chunk)))
            )

    # --- anti-entropy ------------------------------------------------------------------

    def tick(self, now: float) -> None:
        """Send a heartbeat when one is due."""
        self._now = max(self._now, now)
        self._release_quarantine(now)
        self._release_resume(now)
        if self.quarantined is not None or self.resuming is not None:
            # A heartbeat is a promise about our next op; a restarted peer does not know its
            # own chain yet, so it promises nothing (it only asks).
            return
        if now < self._next_heartbeat:
            return
        self._heartbeat(now)

    def _heartbeat(self, now: float) -> None:
        self._next_heartbeat = now + self.heartbeat_interval
        vector = self.vector()
        state_hash = self._state_hash_of(vector)
        # A promise: our next op is stamped later than this. Held within half a step of our
        # own latest op, so that op can keep it (`_stamp`) even when our clock ran ahead.
        own = self.logs.get(self.me)
        floor = own[-1].lamport if own else self.open_op.lamport if self.open_op else 0
        lamport = max(min(self.clock.tick(), floor + MAX_LAMPORT_STEP // 2), self._promised + 1)
        if lamport >= MAX_LAMPORT:
            return  # the table's time is spent (section 6): nothing more can be promised
        self._promised = lamport
        for epoch in self.epochs.values():
            epoch.hear(self.me, lamport)
        self._resolve_departures()
        self._outbox.append(
            (
                BROADCAST,
                seal(self.key, heartbeat_body(self.table, self.me, lamport, vector, state_hash)),
            )
        )
        self._ticks += 1
        if self._ticks % RELAY_EVERY == 0:
            self._relay_heartbeats()

    def _on_heartbeat(self, hb: Heartbeat, source: Hashable, now: float) -> None:
        theirs = VersionVector.from_pairs(hb.vector)  # canonical: sorted, no repeats
        self._sign_of_life(hb, theirs, now)
        self._quarantine_heartbeat(theirs.seq(self.me), now)
        self._resume_heartbeat(hb.sender, theirs, now)
        self._on_promise(hb)
        self._hear_heartbeat(hb)
        vector = self.vector()
        ours = (
            self._state_hash_of(vector)
            if hb.sender != self.me and hb.vector == vector and hb.state_hash
            else b""
        )
        if (
            hb.sender != self.me  # our own, replayed: folded before what we learned since
            and hb.vector == vector
            and hb.state_hash
            and ours
            and hb.state_hash[8:] == ours[8:]  # folded with the same expulsions
            and hb.state_hash != ours
        ):
            probe = self._probed.get(hb.sender)
            if (
                probe is not None
                and now - probe[1] < PROBE_FOR
                and (probe[0] == vector or now - probe[1] >= self.request_retry)
            ):
                self.divergences += 1
                self._events.append(DivergenceDetected(hb.sender, vector, ours, hb.state_hash))
            elif probe is None or now - probe[1] >= PROBE_FOR:
                # An equivocation looks just like this (half the table holds one op n, half
                # another, the vectors are equal): first ask for the sender's latest op of
                # every author, which brings the proof if there is one. A mismatch still there
                # at this vector, or once the answer has had time to come, is a divergence.
                self._probed[hb.sender] = (vector, now)
                self.request(source, [(a, n, n) for a, n in vector][:MAX_RANGES], now)
        held = VersionVector(vector)
        if len(self._offered) < MAX_ASKING or source in self._offered:
            self._offered[source] = theirs
        wanted = self._gaps(theirs)
        if wanted:
            self.request(source, wanted, now)
        # What we hold and they lack: push some of it at once, to heal faster than asking.
        # Shared fairly across authors: one author's long backlog must not starve another's
        # gap (their parked ops may wait on exactly that gap). Only ops we have held for a
        # heartbeat interval: younger ones are most likely still on their way to them (at
        # full speed every heartbeat finds some), and pushing those again only adds copies.
        if self.resuming is None:  # a quiet restart says nothing unasked (PROTOCOL.md 14)
            settled = now - self.heartbeat_interval
            push = fair_take(
                [
                    self.logs[a][
                        first - 1 : min(self._counted(a, last), self._held_since(a, settled))
                    ]
                    for a, first, last in theirs.missing_ranges(held)
                ],
                MAX_PUSH,
            )
            self._send_ops(source, push)
        self._resolve_departures()

    def _held_since(self, author: bytes, when: float) -> int:
        """How many of `author`'s ops were delivered here by time `when`."""
        return bisect.bisect_right(self._delivered_at.get(author, ()), when)

    def _counted(self, author: bytes, last: int) -> int:
        """`last`, or less: an expelled author's ops from its expulsion on are neither
        asked for nor pushed (a peer that holds the proof ignores them; only the evidence
        travels), else a peer that delivered one before the proof pushes it forever."""
        expelled = self.expelled.get(author)
        return last if expelled is None else min(last, expelled - 1)

    def _gaps(self, theirs: VersionVector) -> list[tuple[bytes, int, int]]:
        """What a peer with vector `theirs` holds that we lack, as ranges to ask it for: the
        seqs we have neither delivered nor parked (ops parked waiting for another author's op
        are not asked for again). Every author's first gap comes before anyone's second, so a
        request names the gap that blocks delivery. The work is bounded by what is parked, not
        by the seqs a heartbeat names (up to 2^32-1, any of them a lie)."""
        per_author: list[list[tuple[bytes, int, int]]] = []
        for author, first, whole in VersionVector(self.vector()).missing_ranges(theirs):
            last = self._counted(author, whole)
            parked = sorted(k for k in self.pending.get(author, {}) if first <= k <= last)
            ranges: list[tuple[bytes, int, int]] = []
            seq = first
            for stop in [*parked, last + 1]:
                if len(ranges) >= MAX_RANGES:
                    break
                if seq < stop:
                    ranges.append((author, seq, stop - 1))
                seq = stop + 1
            if ranges:
                per_author.append(ranges)
        out: list[tuple[bytes, int, int]] = []
        depth = 0
        while len(out) < MAX_RANGES and any(depth < len(r) for r in per_author):
            out.extend(r[depth] for r in per_author if depth < len(r))
            depth += 1
        return out[:MAX_RANGES]

    def _hear_heartbeat(self, hb: Heartbeat) -> None:
        """A heartbeat raises its sender's horizon once we hold every op it had made."""
        own_seq = dict(hb.vector).get(hb.sender, 0)
        if self.delivered(hb.sender) >= own_seq:
            for epoch in self.epochs.values():
                epoch.hear(hb.sender, hb.lamport)
        elif hb.lamport > self._waiting_hb.get(hb.sender, (-1, 0))[0]:
            self._waiting_hb[hb.sender] = (hb.lamport, own_seq)

    def _apply_waiting_heartbeat(self, author: bytes) -> None:
        waiting = self._waiting_hb.get(author)
        if waiting and self.delivered(author) >= waiting[1]:
            del self._waiting_hb[author]
            for epoch in self.epochs.values():
                epoch.hear(author, waiting[0])

    def request(
        self, source: Hashable, ranges: Sequence[tuple[bytes, int, int]], now: float
    ) -> None:
        """Ask `source` for ops `(author, first, last)`; an author asked about within
        `request_retry` seconds is not asked about again yet."""
        fresh = [r for r in ranges if now >= self._requested.get(r[0], -1.0)]
        if not fresh:
            return
        if len(self._requested) >= MAX_REQUESTED:
            # Strangers' heartbeats name made-up senders: keep only requests still in flight.
            self._requested = {a: t for a, t in self._requested.items() if t > now}
            if len(self._requested) >= MAX_REQUESTED:
                self._requested.clear()
        for author, _, _ in fresh:
            self._requested[author] = now + self.request_retry
        self._outbox.append((source, seal(self.key, request_body(self.table, self.me, fresh))))
        if len(self._asking) < MAX_ASKING or source in self._asking:
            asked = sum(last - first + 1 for _, first, last in fresh)
            self._asking[source] = (tuple(a for a, _, _ in fresh), min(asked, MAX_REPLY), 0)

    def _answer_arrived(self, source: Hashable, ops: int, now: float) -> None:
        """`ops` ops came from `source`. Once as many as our last request to it could bring
        have come, the answer is in: ask for the next ranges at once rather than after the
        next heartbeat and the 200 ms retry (a catching-up peer pipelines its requests; each
        request is still answered with at most MAX_REPLY ops)."""
        asking = self._asking.get(source)
        if asking is None:
            return
        authors, expected, received = asking
        received += ops
        if received < expected:
            self._asking[source] = (authors, expected, received)
            return
        del self._asking[source]
        offered = self._offered.get(source)
        if offered is None:
            return
        for author in authors:
            self._requested.pop(author, None)
        wanted = self._gaps(offered)
        if wanted:
            self.request(source, wanted, now)

    def _on_request(self, request: Request, source: Hashable, *, first_ops_only: bool) -> None:
        """Serve ops from our logs. A stranger (a peer about to join) gets only first ops,
        which carry keys: a forged request cannot make us flood someone else."""
        evidence: list[Op] = []
        wanted: list[list[Op]] = []
        for author, first, last in request.ranges:
            if first_ops_only:
                if author != self.host and admission.is_private(self):
                    continue  # a stranger at a private table learns the OPEN, nothing more
                first = last = 1
            log = self.logs.get(author, [])
            wanted.append(log[first - 1 : min(self._counted(author, last), len(log))])
            if author in self.evidence and self.evidence[author][0] not in evidence:
                evidence.extend(self.evidence[author])
            if author in self.lies and self.lies[author][1] not in evidence:
                promise, op = self.lies[author]
                evidence.append(op)
                self._outbox.append(
                    (source, seal(self.key, evidence_body(self.table, self.me, [promise])))
                )
        # One request, however many ranges it names, is answered with at most MAX_REPLY ops:
        # its source address could be forged, and the asker will ask again for the rest. The
        # budget is shared fairly, so every range asked for makes progress.
        ops = evidence[:MAX_REPLY]
        ops.extend(fair_take(wanted, MAX_REPLY - len(ops)))
        self._send_ops(source, ops)

    def _send_ops(self, destination: Hashable, ops: Sequence[Op]) -> None:
        """Pack ops into BATCH datagrams of at most 1200 bytes."""
        batch: list[Op] = []
        size = 0
        for op in ops:
            cost = len(op.body) + 64 + 8
            if cost > 1000:
                # Too big to share a BATCH (an op body may take up to MAX_BODY bytes, and a
                # batch adds its own framing): relay the op in its own envelope instead.
                self._outbox.append((destination, op.datagram()))
                continue
            if batch and (size + cost > 1000 or len(batch) >= MAX_BATCH):
                self._outbox.append(
                    (destination, seal(self.key, batch_body(self.table, self.me, batch)))
                )
                batch, size = [], 0
            batch.append(op)
            size += cost
        if batch:
            self._outbox.append(
                (destination, seal(self.key, batch_body(self.table, self.me, batch)))
            )


__all__ = [
    "BROADCAST",
    "AuthorExpelled",
    "DeparturesChanged",
    "DivergenceDetected",
    "Member",
    "OpDelivered",
    "OpRejected",
    "SyncEvent",
    "SyncPeer",
]
