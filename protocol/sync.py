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

The machine is one `SyncPeer` (its state, reading, authoring, the receive gate and the
tick); each concept of it lives in a module of its own, as functions over the peer:
`sync_parking` (an op's way from the gate to the queue), `sync_delivery` (causal
delivery), `sync_checks` (why an op cannot be delivered), `sync_lamport` (stamping),
`sync_membership` (who may do what, departures), `sync_starters` (who starts a round, and
when a START counts and is confirmed), `sync_heartbeats`,
`sync_requests` (anti-entropy), `sync_evidence` (equivocation, broken promises,
expulsion), `sync_restart` (quiet restarts), `sync_events` (what it reports) and
`sync_limits` (its bounds). This module keeps every public name the others had.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Sequence

from . import (
    admission,
    sync_checks,
    sync_delivery,
    sync_evidence,
    sync_heartbeats,
    sync_lamport,
    sync_liveness,
    sync_membership,
    sync_parking,
    sync_requests,
    sync_restart,
    sync_starters,
)
from .clocks import LamportClock, VersionVector
from .counters import DropCounters
from .errors import DropReason, LocalProtocolError, RemoteProtocolError
from .messages import (
    NO_PREV,
    AdmissionMessage,
    Batch,
    Evidence,
    Heartbeat,
    Kind,
    Kinds,
    Message,
    Op,
    Request,
    decode,
    op_body,
    seal_op,
)
from .order import EpochLog
from .promises import PromiseBook
from .ratelimit import TokenBucketLimiter
from .signing import SigningKeyPair, verify
from .sync_events import (
    AuthorExpelled,
    DeparturesChanged,
    DivergenceDetected,
    OpDelivered,
    OpRejected,
    StartVoided,
    SyncEvent,
)
from .sync_limits import (
    BROADCAST,
    MAX_ASKING,
    MAX_AWAITING,
    MAX_LAMPORT_STEP,
    MAX_PENDING,
    MAX_PENDING_PER_AUTHOR,
    MAX_PUSH,
    MAX_REPLY,
    MAX_REQUESTED,
    PROBE_FOR,
    RELAY_EVERY,
)
from .sync_membership import Member
from .sync_requests import fair_take
from .sync_restart import ALONE_HOLD, Quarantine, Resuming


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
        self._expelled_digest: tuple[tuple[tuple[bytes, int], ...], bytes] | None = None
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
        #: source -> the answers we await from it (`sync_requests.request`)
        self._asking: dict[Hashable, sync_requests.AnswersDue] = {}
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
        #: Something that may let a parked op be delivered (a delivery, an expulsion, a
        #: departure) happened since `sync_delivery.deliver_ready` last looked at them all
        self._unscanned = True
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
        #: author -> (the first seq of its own its heartbeats named that we have not
        #: delivered, since when that claim is unmet): `signs_of_life`
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
        #: op hash -> the op that vouched for it, for ops taken without their own signature
        #: checked (`sync_vouchers`); and those whose own signature was found bad
        self._vouched: dict[bytes, Op] = {}
        self._garbled: set[bytes] = set()
        self._last_heartbeat: bytes | None = None  # the datagram of our latest heartbeat
        #: The table's whole log is here and nothing more will come (a replay file): the
        #: STARTs the earlier rounds' departures have not voided are confirmed.
        self.log_closed = False
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
        # Asked for after every datagram; the set almost never changes, so the digest is
        # kept with the set it was made of.
        expelled = tuple(self.expelled.items())
        cached = self._expelled_digest
        if cached is not None and cached[0] == expelled:
            return cached[1]
        digest = hashlib.sha256(b"nerts-p2p/expelled\x00")
        for author, seq in sorted(expelled):
            digest.update(author + seq.to_bytes(4, "big"))
        self._expelled_digest = (expelled, digest.digest()[:8])
        return self._expelled_digest[1]

    # --- authoring ---------------------------------------------------------------------

    def deps_for(self, kind: Kind, epoch: int, payload: object) -> list[object]:
        """The deps our next op of this kind names, as `author` writes them."""
        if epoch == 0:
            # Only what a lobby op depends on: the table's OPEN and our own previous op. (All
            # authors would make lobby ops grow with every spectator who ever joined.)
            needed = {self.me: self.delivered(self.me)}
            if self.host is not None and self.host != self.me:
                needed[self.host] = 1
                if kind == Kinds.JOIN and self.me in self.admits:
                    needed[self.host] = self.admits[self.me][0]  # the host's ADMIT of us
            return [[a, n] for a, n in sorted(needed.items()) if n]
        return [self.delivered(p) for p in self.round_players(kind, epoch, payload)]

    def round_players(self, kind: Kind, epoch: int, payload: object) -> Sequence[bytes]:
        """Whom the round deps of our next op of round `epoch` count, in order: a START's
        own players, else the round's participants."""
        if kind == Kinds.START:
            return payload[0]  # type: ignore[index,no-any-return]
        log = self.epochs.get(epoch)
        if log is None:
            raise LocalProtocolError(DropReason.SCHEMA, f"round {epoch} has not started here")
        return log.participants

    def author(self, kind: Kind, epoch: int, payload: object) -> Op:
        """Sign and deliver an op of our own; it is queued for every peer. The caller stores
        it before sending (crash safety) by reading `outgoing()` after persisting."""
        if self.quarantined is not None or self.resuming is not None:
            raise LocalProtocolError(
                DropReason.SCHEMA,
                "restarting: waiting for the table to show us our own ops before authoring",
            )
        if epoch and kind not in (Kinds.START, Kinds.LEAVE) and not self.start_confirmed(epoch):
            # Nothing of ours may hang on a START that the votes of the round before might
            # still void (PROTOCOL.md 13.3): our chain would be stuck on it.
            raise LocalProtocolError(
                DropReason.SCHEMA,
                f"round {epoch} has not begun for us yet: its start is not confirmed",
            )
        seq = self.delivered(self.me) + 1
        prev = self.logs[self.me][-1].hash if seq > 1 else NO_PREV
        deps = self.deps_for(kind, epoch, payload)
        lamport = sync_lamport.stamp(self, kind, epoch, payload, deps)
        op = seal_op(
            self.key, op_body(kind, self.table, self.me, seq, prev, lamport, epoch, deps, payload)
        )
        problem = sync_checks.problem(self, op)
        if problem is not None:
            # Ours to refuse: sending it would only get it rejected everywhere and leave our
            # own chain dead. Nothing was stored, so the seq is free again.
            raise LocalProtocolError(problem[0], f"cannot author this {kind.name}: {problem[1]}")
        sync_delivery.deliver(self, op, authored=True)
        self._outbox.append((BROADCAST, op.datagram()))
        sync_membership.resolve_departures(self)
        if kind == Kinds.JOIN:
            # A newcomer says at once what it holds: the table pushes it ops and tells it
            # what to ask for, without waiting for our next heartbeat.
            sync_heartbeats.heartbeat(self, self._now)
        return op

    # --- receiving ---------------------------------------------------------------------

    def receive(self, datagram: bytes, source: Hashable, now: float) -> bool:
        """Run one datagram through the gate. Never raises for anything a peer sends.
        False if it was dropped unread (too big, rate limited, malformed, of another
        version or table: steps 1-5 of the gate), when nothing here has changed but the
        drop counters, so the caller need not look at anything again: a flood of junk costs
        the unpacking and no more."""
        self._now = max(self._now, now)
        if len(datagram) > 1200:
            self.counters.count(DropReason.OVERSIZE)
            return False
        if not self.limiter.allow(source, now):
            self.counters.count(DropReason.RATE_LIMITED)
            return False
        try:
            message = decode(datagram, table=self.table)
        except RemoteProtocolError as exc:
            self.counters.count_error(exc)
            return False
        try:
            self._take(message, source, now)
        except RemoteProtocolError as exc:
            self.counters.count_error(exc)
        return True

    def _take(self, message: Message, source: Hashable, now: float) -> None:
        """A decoded message, from step 6 of the gate on."""
        if isinstance(message, Op):
            sync_parking.receive_op(self, message, source, now)
            sync_requests.ask_for_gap(self, message, source, now)
            return
        if isinstance(message, Batch | Evidence):
            # Relays: every op and heartbeat inside is signed by its own author and checked
            # on its own, and nothing is taken from the relay's sender field, so the relay's
            # own signature is not worth a verification (a catching-up peer gets many).
            if isinstance(message, Evidence):
                sync_evidence.on_evidence(self, message, now)
            else:
                sync_parking.on_batch(self, message, source, now)
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
                if self.resuming is not None and self.host != self.me:
                    # Someone is there whose ops we lack: not alone. Not so at the host: its
                    # ADMITs (its own ops, restored) carry every member's key, so a sender
                    # it has no key for is a joiner still at the door, who holds no promise
                    # of ours and would keep a lone host quiet for ever.
                    self.resuming.knocked = True
                raise RemoteProtocolError(
                    DropReason.UNKNOWN_AUTHOR, "a heartbeat from a peer we have no key for"
                )
            sync_heartbeats.on_heartbeat(self, message, source, now)
        elif isinstance(message, Request):
            sync_requests.on_request(self, message, source, first_ops_only=not known)

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
                sync_parking.receive_op(self, op, None, 0.0)
            except RemoteProtocolError as exc:
                self.counters.count_error(exc)
        del self._outbox[outbox:]  # nothing to ask the store for

    def close_log(self) -> None:
        """Every op the table will ever have is here (a replay file): the STARTs that the
        departures of the rounds before them did not void are confirmed, and the ops
        waiting for that are delivered."""
        self.log_closed = True
        sync_delivery.deliver_ready(self)

    def _verify_sender(self, sender: bytes, body: bytes, signature: bytes) -> bool:
        """Verify a sync message's signature; False if we have no key for its sender yet, or
        it is neither a member nor admitted (a key whose JOIN was refused is a stranger)."""
        public_key = self.keys.get(sender)
        if public_key is None or not self.serves(sender):
            return False
        verify(public_key, body, signature)
        return True

    # --- restarts (sync_restart, PROTOCOL.md 14) -----------------------------------------

    def quarantine(self, hold: float = 1.0) -> None:
        """We may have authored ops at this table before losing them (a restart without
        the store): author nothing until the table has shown us our own chain."""
        self.quarantined = Quarantine(hold)

    def resume(self, hold: float = 1.0) -> None:
        """We restarted from our store: every op we ever authored is loaded (delivered or
        waiting for its deps). Author nothing and promise nothing until caught up."""
        parked = self.pending.get(self.me, {})
        self.resuming = Resuming(max([self.delivered(self.me), *parked]), hold)

    # --- heartbeats and anti-entropy (sync_heartbeats, sync_requests) ---------------------

    def tick(self, now: float) -> None:
        """Send a heartbeat when one is due."""
        self._now = max(self._now, now)
        sync_restart.release_quarantine(self, now)
        sync_restart.release_resume(self, now)
        sync_restart.ask_everyone_while_our_chain_waits(self, now)
        if self.quarantined is not None or self.resuming is not None:
            # A heartbeat is a promise about our next op; a restarted peer does not know its
            # own chain yet, so it promises nothing (it only asks).
            return
        if now < self._next_heartbeat:
            return
        sync_heartbeats.heartbeat(self, now)

    def request(
        self, source: Hashable, ranges: Sequence[tuple[bytes, int, int]], now: float
    ) -> None:
        """Ask `source` for ops `(author, first, last)` (`sync_requests.request`)."""
        sync_requests.request(self, source, ranges, now)

    # --- membership (sync_membership) ----------------------------------------------------

    def starter(self, epoch: int) -> bytes | None:
        """Who may START round `epoch` (`sync_starters.starter`)."""
        return sync_starters.starter(self, epoch)

    def start_confirmed(self, epoch: int) -> bool:
        """May we act in round `epoch`: can its START no longer be voided
        (`sync_starters.start_confirmed`)?"""
        return sync_starters.start_confirmed(self, epoch)

    def ready_for(self, epoch: int, author: bytes, start: Op) -> Op | None:
        """The author's latest READY for `epoch` that `start` had seen."""
        return sync_membership.ready_for(self, epoch, author, start)

    # --- signs of life (sync_liveness) ------------------------------------------------------

    @property
    def now(self) -> float:
        """The latest time we were handed (by `receive` or `tick`)."""
        return self._now

    def signs_of_life(self) -> dict[bytes, float]:
        """author -> when it last showed a sign of life we can use (PROTOCOL.md 13.1): a
        heartbeat naming an op of its own that has not come shows nothing, nor does a copy
        of an op we rejected (`sync_liveness`)."""
        return sync_liveness.signs_of_life(self)


__all__ = [
    "ALONE_HOLD",
    "BROADCAST",
    "MAX_ASKING",
    "MAX_AWAITING",
    "MAX_LAMPORT_STEP",
    "MAX_PENDING",
    "MAX_PENDING_PER_AUTHOR",
    "MAX_PUSH",
    "MAX_REPLY",
    "MAX_REQUESTED",
    "PROBE_FOR",
    "RELAY_EVERY",
    "AuthorExpelled",
    "DeparturesChanged",
    "DivergenceDetected",
    "Member",
    "OpDelivered",
    "OpRejected",
    "Quarantine",
    "Resuming",
    "StartVoided",
    "SyncEvent",
    "SyncPeer",
    "fair_take",
]
