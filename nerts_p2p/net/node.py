"""The trio node: one table replica on one datagram transport.

The h11 pattern: `TableReplica` decides everything; the node only moves datagrams in and
out, feeds it the time, and turns the application's intents into calls on it. One nursery
owns every task of a node:

- the receive loop: each datagram goes to the replica (or, if it is a CONTACTS datagram,
  to the address book), then whatever the replica wants sent is sent;
- the timer: `tick` at a fraction of the heartbeat interval (the replica decides when a
  heartbeat is due), and CONTACTS gossip once a second or when a new peer appears;
- the intent loop: the application's intents arrive on a bounded channel;
- the sender: what the replica wants sent goes to the kernel at once when the transport
  can take it without waiting (`send_now`); otherwise one task drains bounded queues.

Every queue is bounded. A full queue drops and counts (`NodeStats`): the network already
drops datagrams, and anti-entropy repairs it; a slow application loses events, never the
game, because the replica keeps the truth and the view can always read it.

Crash safety: before an op we authored is put on the send queue it is appended to the
store and flushed (`OwnOpStore.append_own`), in the same synchronous step that drained it
from the replica, so no await can slip between authoring and persisting.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import trio

from nerts_p2p.game.errors import NertsError, Rejection
from nerts_p2p.game.moves import Move
from nerts_p2p.net.contacts import (
    ContactsSchedule,
    decode_contacts,
    encode_contacts,
    is_contacts,
    verify_contacts,
)
from nerts_p2p.net.transport import Address, Transport
from nerts_p2p.table.replica import GameEvent, TableReplica
from protocol.codec import unpack_bounded
from protocol.envelope import PROTOCOL_VERSION
from protocol.errors import DropReason, ProtocolError, RemoteProtocolError
from protocol.messages import SPECTATOR, Op
from protocol.sync import BROADCAST

#: Datagrams taken from the socket in one turn of the receive loop (`UdpTransport.receive_now`).
RECEIVE_BURST = 64
#: Lamport times per lease written to the store (one fsync per this many clock ticks).
CLOCK_LEASE = 1024
#: Source addresses whose last datagram's time is kept (`TableNode.last_heard`) before
#: those that are no peer's are forgotten: a flood from ever new (forged) source addresses
#: must not grow the node without bound. A table has at most 64 members.
MAX_HEARD = 1024


class OwnOpStore(Protocol):
    """Where a node persists what its replica authors (see `nerts_p2p.net.store`)."""

    def append_own(self, op: Op) -> None: ...

    def append_seed(self, number: int, seed: bytes, salt: bytes) -> None: ...

    def append_clock_lease(self, value: int) -> None: ...


# --- intents (application -> node) --------------------------------------------------------


@dataclass(frozen=True)
class Join:
    pass


@dataclass(frozen=True)
class Ready:
    pass


@dataclass(frozen=True)
class Start:
    pass


@dataclass(frozen=True)
class Play:
    move: Move


@dataclass(frozen=True)
class Leave:
    pass


Intent = Join | Ready | Start | Play | Leave


# --- node events (node -> application), beside the replica's game events -------------------


@dataclass(frozen=True)
class IntentRefused:
    intent: Intent
    reason: str


@dataclass(frozen=True)
class VersionMismatch:
    """A datagram from `source` speaks another protocol version than ours."""

    source: Address
    version: int


NodeEvent = GameEvent | IntentRefused | VersionMismatch


@dataclass
class NodeStats:
    datagrams_in: int = 0
    datagrams_out: int = 0
    #: Queue overflows, each dropped and counted rather than blocking the node.
    events_dropped: int = 0
    intents_dropped: int = 0
    outbound_dropped: int = 0
    contacts_refused: int = 0
    version_mismatches: int = 0
    intents_refused: int = 0


@dataclass
class TableNode:
    replica: TableReplica
    transport: Transport
    #: Where the table was found (the host's address), until the table tells us more.
    bootstrap: Address | None = None
    #: The host's key id, to ask `bootstrap` for the table's OPEN until it arrives (the
    #: first request may be lost like any datagram).
    table_host: bytes | None = None
    store: OwnOpStore | None = None
    event_queue: int = 1024
    intent_queue: int = 64
    outbound_queue: int = 2048  # datagrams, per send queue
    #: After a restart: how many of our own ops the store gave back (they are in the store
    #: already, so they are not appended again when they are delivered). Until they are
    #: delivered and we have caught up, the replica authors nothing (PROTOCOL.md 14).
    resume_target: int = 0
    stats: NodeStats = field(default_factory=NodeStats)

    def __post_init__(self) -> None:
        self._events_in, self.events = trio.open_memory_channel[NodeEvent](self.event_queue)
        self._intents_in, self._intents_out = trio.open_memory_channel[Intent](self.intent_queue)
        # Two send queues: what we say to everyone (our own ops, heartbeats, evidence,
        # contacts) goes before what we answer one peer (replies and pushes, which the asker
        # asks for again if they are lost). A slow or starved sender then drops relays, never
        # our own ops or our LEAVE.
        self._urgent: deque[tuple[bytes, Address]] = deque()
        self._bulk: deque[tuple[bytes, Address]] = deque()
        self._sender_idle = trio.lowlevel.ParkingLot()
        self._news = trio.lowlevel.ParkingLot()  # who waits for the next datagram taken
        #: The transport's synchronous send, if it has one (`UdpTransport.send_now`).
        self._send_now: Callable[[bytes, Address], bool] | None = getattr(
            self.transport, "send_now", None
        )
        #: The transport's synchronous receive, if it has one (`UdpTransport.receive_now`).
        self._receive_now: Callable[[], tuple[bytes, Address] | None] | None = getattr(
            self.transport, "receive_now", None
        )
        #: author -> address learnt from a member's signed CONTACTS (verified ones win).
        self.gossiped: dict[bytes, Address] = {}
        #: address -> last time anything arrived from it (for silence).
        self.last_heard: dict[Address, float] = {}
        # A fresh node persists from its first op (a host authored its OPEN before the node
        # existed); a resumed one from past what the store gave back.
        self._persisted = (
            self.resume_target
            if self.store is not None
            else self.replica.sync.delivered(self.replica.me)
        )
        self._persisted_seeds = set(self.replica.my_secrets)
        self._clock_lease = 0
        self._contacts = ContactsSchedule()
        #: (members, peers) counts when contacts were last looked at after a datagram: a
        #: cheap sign that a member or an address may have appeared.
        self._contacts_looked: tuple[int, int] = (0, 0)
        self.cancel_scope: trio.CancelScope | None = None
        # Our own address is this machine (our bots ask from it), not a flood: the host's
        # per-address admission bounds leave it out (PROTOCOL.md 17.4).
        own = self.transport.address[0]
        if own != "0.0.0.0":
            self.replica.sync.admission.own_addresses.add(own)
        self.replica.on_signed = self._send_outgoing

    # --- the application's side -------------------------------------------------------

    def submit(self, intent: Intent) -> bool:
        """Queue an intent; False (and counted) if the intent queue is full."""
        try:
            self._intents_in.send_nowait(intent)
        except trio.WouldBlock:
            self.stats.intents_dropped += 1
            return False
        return True

    @property
    def address(self) -> Address:
        return self.transport.address

    def addresses(self) -> set[Address]:
        """Everyone a BROADCAST goes to."""
        out = set(self.gossiped.values())
        for author, source in self.replica.sync.peers.items():
            if isinstance(source, tuple):
                self.gossiped.pop(author, None)
                out.add(source)
        if self.bootstrap is not None:
            out.add(self.bootstrap)
        out.discard(self.address)
        return out

    def broadcast_order(self) -> list[Address]:
        """Everyone a BROADCAST goes to (`addresses`), spectators last: a move is on its way
        to every player before a spectator's copy is sent, so spectators never slow the
        players down (each `sendto` ahead of a player's, and the wake-up it starts, is part
        of that player's latency; eight watchers ahead of a player could double it)."""
        everyone = self.addresses()
        sync = self.replica.sync
        watching = {
            address
            for known in (self.gossiped.items(), sync.peers.items())
            for author, address in known
            if (member := sync.members.get(author)) is not None and member.role == SPECTATOR
        }
        if not watching:
            return list(everyone)
        return [a for a in everyone if a not in watching] + [a for a in everyone if a in watching]

    def _forget_strangers(self) -> None:
        """Keep the times of our peers' addresses (and the table's host's) only."""
        known = self.addresses() | {
            source for source in self.replica.sync.peers.values() if isinstance(source, tuple)
        }
        self.last_heard = {a: t for a, t in self.last_heard.items() if a in known}

    def silence(self, author: bytes, now: float) -> float | None:
        """Seconds since we last heard from `author`'s address (None: never heard of it)."""
        source = self.replica.sync.peers.get(author)
        heard = self.last_heard.get(source) if isinstance(source, tuple) else None
        return None if heard is None else now - heard

    # --- running -----------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run until cancelled (`stop`)."""
        async with trio.open_nursery() as nursery:
            self.cancel_scope = nursery.cancel_scope
            nursery.start_soon(self._sender)
            nursery.start_soon(self._receive_loop)
            nursery.start_soon(self._timer)
            nursery.start_soon(self._intent_loop)
            self._flush()
            task_status.started()

    def stop(self) -> None:
        if self.cancel_scope is not None:
            self.cancel_scope.cancel()

    async def _receive_loop(self) -> None:
        while True:
            datagram, source = await self.transport.receive()
            self._take(datagram, source)
            # What else the kernel already holds is taken now, without a trip through the
            # event loop for each; bounded, so the timer and the intents still get their turn.
            if self._receive_now is not None:
                for _ in range(RECEIVE_BURST - 1):
                    more = self._receive_now()
                    if more is None:
                        break
                    self._take(*more)

    def _take(self, datagram: bytes, source: Address) -> None:
        now = trio.current_time()
        self.stats.datagrams_in += 1
        self.last_heard[source] = now
        if len(self.last_heard) > MAX_HEARD:
            self._forget_strangers()
        if is_contacts(datagram):
            self._on_contacts(datagram)
        else:
            if not self.replica.is_member:
                self._check_version(datagram, source)
            self.replica.receive(datagram, source, now)
        self._flush()
        sync = self.replica.sync
        counts = (len(sync.members), len(sync.peers))
        if counts != self._contacts_looked:
            # A joiner was admitted, or we heard a member's address for the first time: tell
            # the table in this same step (after what the replica sent), not at the timer's
            # next look.
            self._contacts_looked = counts
            self._tell_contacts(now)
        self._news.unpark_all()

    async def wait_news(self) -> None:
        """Return once the next datagram has been taken (the application's lobby waits
        this way for the table's OPEN and the host's ADMIT instead of looking again later)."""
        await self._news.park()

    async def _timer(self) -> None:
        interval = self.replica.sync.heartbeat_interval
        while True:
            now = trio.current_time()
            self.replica.tick(now)
            if (
                self.replica.sync.open_op is None
                and self.table_host is not None
                and self.bootstrap is not None
            ):
                self.replica.request_table(self.table_host, self.bootstrap, now)
            self._tell_contacts(now)
            self._flush()
            await trio.sleep(interval / 3)

    async def _intent_loop(self) -> None:
        async for intent in self._intents_out:
            self.apply_intent(intent)

    @property
    def resuming(self) -> bool:
        """After a restart: our own ops are not all back yet, or we have not caught up with
        what our last heartbeats promised (the replica says when, PROTOCOL.md 14)."""
        return not self.replica.can_author

    def apply_intent(self, intent: Intent) -> None:
        replica = self.replica
        if self.resuming:
            self._refused(intent, "still waiting for our own ops from before the restart")
            return
        try:
            if isinstance(intent, Join):
                replica.join()
            elif isinstance(intent, Ready):
                replica.ready()
            elif isinstance(intent, Start):
                replica.start()
            elif isinstance(intent, Leave):
                replica.leave()
            else:
                result = replica.play(intent.move)
                if isinstance(result, Rejection):
                    self._refused(intent, result.message)
        except (NertsError, ProtocolError) as exc:
            self._refused(intent, str(exc))
        self._flush()

    def _refused(self, intent: Intent, reason: str) -> None:
        self.stats.intents_refused += 1
        self._emit(IntentRefused(intent, reason))

    async def _sender(self) -> None:
        while True:
            if self._urgent:
                datagram, destination = self._urgent.popleft()
            elif self._bulk:
                datagram, destination = self._bulk.popleft()
            else:
                await self._sender_idle.park()
                continue
            await self.transport.send(datagram, destination)
            self.stats.datagrams_out += 1

    # --- moving things -------------------------------------------------------------------

    def _flush(self) -> None:
        """Persist what we authored, then queue what the replica wants sent and pass its
        events on. Synchronous on purpose: nothing else runs between these steps."""
        self._send_outgoing()
        for event in self.replica.events():
            self._emit(event)

    def _send_outgoing(self) -> None:
        """Persist what we authored, then send (or queue) what the replica wants sent. Also
        the replica's `on_signed`: a move of ours goes out as soon as it is signed, and is
        folded here after, while the others fold it."""
        replica = self.replica
        own = replica.sync.logs.get(replica.me, [])
        if self.store is not None:
            for number in replica.my_secrets.keys() - self._persisted_seeds:
                self.store.append_seed(number, *replica.my_secrets[number])
                self._persisted_seeds.add(number)
            for op in own[self._persisted :]:
                self.store.append_own(op)
            clock = replica.sync.clock.value
            if clock >= self._clock_lease:
                # Before any heartbeat stamped past the last lease goes out (a heartbeat is
                # a signed promise about our clock), the new lease is on disk.
                self._clock_lease = clock + CLOCK_LEASE
                self.store.append_clock_lease(self._clock_lease)
        # Never below what the store already holds: after a restart our stored ops come
        # back (are delivered) only as the table's ops they depend on arrive.
        self._persisted = max(self._persisted, len(own))
        everyone: list[Address] | None = None  # worked out at the first BROADCAST only
        for destination, datagram in replica.outgoing():
            if destination == BROADCAST:
                if everyone is None:
                    everyone = self.broadcast_order()
                for address in everyone:
                    self._queue(datagram, address, urgent=True)
            elif isinstance(destination, tuple):
                self._queue(datagram, destination, urgent=False)

    def _queue(self, datagram: bytes, destination: Address, *, urgent: bool) -> None:
        queue = self._urgent if urgent else self._bulk
        # Nothing waiting ahead of it: straight to the kernel, in this same step (a move is
        # on the wire the moment it is signed, not after the event loop comes round to the
        # sender). Urgent ones may pass queued replies; replies never pass anything.
        if (
            not queue
            and (urgent or not self._urgent)
            and self._send_now is not None
            and self._send_now(datagram, destination)
        ):
            self.stats.datagrams_out += 1
            return
        if len(queue) >= self.outbound_queue:
            self.stats.outbound_dropped += 1
            return
        queue.append((datagram, destination))
        self._sender_idle.unpark()

    def _emit(self, event: NodeEvent) -> None:
        try:
            self._events_in.send_nowait(event)
        except (trio.WouldBlock, trio.BrokenResourceError):
            # Full, or the application closed its end (it does not want events): the game
            # goes on either way, since the replica holds the truth.
            self.stats.events_dropped += 1

    # --- contacts -------------------------------------------------------------------------

    def _contact_entries(self) -> list[tuple[bytes, Address]]:
        """The members whose addresses we know, as CONTACTS tells them."""
        sync = self.replica.sync
        return [
            (author, source)
            for author, source in sorted(sync.peers.items())
            if isinstance(source, tuple) and author in sync.members
        ]

    def _tell_contacts(self, now: float) -> None:
        """CONTACTS to everyone we know, when `ContactsSchedule` says it is due."""
        entries = self._contact_entries()
        if not self._contacts.due(entries, now):
            return
        if not entries or not self.replica.is_member:
            self._contacts.looked(now)  # told as soon as there is something and we may
            return
        self._contacts.told(entries, now)
        sync = self.replica.sync
        datagrams = encode_contacts(sync.key, sync.table, entries)  # signed once for all
        for address in self.addresses():
            for datagram in datagrams:
                self._queue(datagram, address, urgent=True)

    def _on_contacts(self, datagram: bytes) -> None:
        sync = self.replica.sync
        try:
            contacts = decode_contacts(datagram, table=sync.table)
            public_key = sync.keys.get(contacts.sender)
            if public_key is None or contacts.sender not in sync.members:
                raise RemoteProtocolError(DropReason.NOT_A_MEMBER, "contacts from a non-member")
            verify_contacts(contacts, public_key)
        except RemoteProtocolError:
            self.stats.contacts_refused += 1
            return
        for author, address in contacts.entries:
            if author != sync.me and author not in sync.peers:
                self.gossiped[author] = address

    def _check_version(self, datagram: bytes, source: Address) -> None:
        """Before we are in, tell the application plainly if the table speaks another
        protocol version (the gate only counts such datagrams as schema errors)."""
        try:
            outer = unpack_bounded(datagram)
        except RemoteProtocolError:
            return
        if isinstance(outer, list) and outer and type(outer[0]) is int:
            version = outer[0]
            if version != PROTOCOL_VERSION:
                self.stats.version_mismatches += 1
                self._emit(VersionMismatch(source, version))
