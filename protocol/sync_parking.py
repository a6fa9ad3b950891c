"""An op's way from the receive gate to the delivery queue (one at a time, or a relayed
BATCH's ops one by one): duplicates and equivocations found, ops of an author whose key is
missing parked (bounded for all made-up authors together), the signature verified, keys
learnt, and the op queued until its deps arrive.

Separate from delivery because this is where untrusted input is held and bounded; delivery
only ever sees verified ops.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

from . import sync_delivery, sync_evidence, sync_requests
from .errors import DropReason, RemoteProtocolError
from .messages import Batch, Kinds, Op, decode_op
from .signing import key_id, op_hash
from .sync_limits import MAX_AWAITING, MAX_AWAITING_PER_AUTHOR, MAX_PENDING, MAX_PENDING_PER_AUTHOR
from .sync_vouchers import Vouchers, authenticate, taking_order

if TYPE_CHECKING:
    from .sync import SyncPeer

_REPLAYED = DropReason.REPLAYED  # counted for every copy: read once (the enum's hook is slow)
#: The kinds that carry their author's public key (`Op.public_key`).
_KEY_CARRIERS = frozenset({Kinds.OPEN, Kinds.JOIN})


def on_batch(sync: SyncPeer, message: Batch, source: Hashable, now: float) -> None:
    """Ops relayed by anyone: each is checked on its own, each author's highest seq first,
    so that one signature vouches for the run below it (`sync_vouchers`)."""
    # A batch from a stranger is fine: every op in it is checked on its own.
    # What counts toward an answer: ops we now hold (delivered or parked), new or not. An op
    # dropped here (junk, or an expelled author's) does not: asking again at once for
    # what we will never hold would only loop.
    genuine = 0
    held_hashes, table, counters = sync._held_hashes, sync.table, sync.counters
    fresh: list[Op] = []
    for body, signature in message.ops:
        held = op_hash(body)
        if held in held_hashes:
            # Catching up, the same op comes from every peer that pushes it:
            # known by its hash, it costs no decoding.
            sync.duplicates += 1
            counters.count(_REPLAYED)
            genuine += 1
            continue
        try:
            fresh.append(decode_op(body, signature, table=table, body_hash=held))
        except RemoteProtocolError as exc:
            counters.count_error(exc)
    fresh.sort(key=taking_order)
    vouchers: Vouchers = {}
    for op in fresh:
        try:
            if receive_op(sync, op, source, now, vouchers):
                vouchers[op.author, op.seq] = op
        except RemoteProtocolError as exc:
            counters.count_error(exc)
    # Counted once the whole batch is in: an op parked for its author's key is held only
    # once the batch's first op of that author (below it, so taken after it) brought it.
    genuine += sum(op.hash in held_hashes for op in fresh)
    if source in sync._asking:
        sync_requests.answer_arrived(sync, source, genuine, now)


def receive_op(
    sync: SyncPeer, op: Op, source: Hashable, now: float, batch: Vouchers | None = None
) -> bool:
    """Take one op: True if it is authentic and held here now (or was already), so it may
    vouch for its author's op below it in the same BATCH (`batch`: those so far)."""
    # Every op that reaches a peer passes here (a catching-up one, the whole table's):
    # `held`, `SyncPeer.delivered` and `pending_total` are written out.
    author, seq = op.author, op.seq
    log = sync.logs.get(author)
    delivered = len(log) if log else 0
    pending = sync.pending.get(author)
    known = log[seq - 1] if log and seq <= delivered else pending.get(seq) if pending else None
    if known is not None:
        if known.body == op.body:
            # Duplication is normal on a LAN and harmless; counted, never an error.
            sync.duplicates += 1
            sync.counters.count(_REPLAYED)
            return True  # a copy of the op held here: authentic, as that one was
        public_key = sync.keys.get(author)
        if public_key is None:
            raise RemoteProtocolError(DropReason.UNKNOWN_AUTHOR, "unknown author")
        authenticate(sync, op, public_key, batch)
        sync_evidence.expel(sync, known, op)
        return True
    expelled = sync.expelled
    if author in expelled and seq >= expelled[author]:
        return False
    kind = op.kind
    carried = op.payload[0] if kind in _KEY_CARRIERS else None  # `Op.public_key`
    public_key = carried or sync.keys.get(author)
    if public_key is None:
        # Nothing about such an op is verified yet: anyone can make up author ids, so the
        # parking space is bounded for all of them together, not only per author.
        parked = sync.awaiting_key.get(author, [])
        if len(parked) >= MAX_AWAITING_PER_AUTHOR:
            raise RemoteProtocolError(
                DropReason.UNKNOWN_AUTHOR, "too many ops from an author we have no key for"
            )
        while awaiting_total(sync) >= MAX_AWAITING:
            # Full of made-up authors, perhaps: the oldest go, so a real newcomer is not
            # shut out for good (anti-entropy brings back anything real).
            oldest = next(iter(sync.awaiting_key))
            sync.counters.count(DropReason.UNKNOWN_AUTHOR, len(sync.awaiting_key.pop(oldest)))
            parked = sync.awaiting_key.get(author, [])
        sync.awaiting_key[author] = [*parked, op]
        sync.request(source, [(author, 1, 1)], now)
        return False  # parked unchecked: it vouches for nothing
    authenticate(sync, op, public_key, batch)
    if carried is not None or kind == Kinds.ADMIT:
        introduced = [(author, carried)] if carried is not None else []
        if kind == Kinds.ADMIT:
            # The host's ADMIT names the joiner's key; a key is bound to its id, so it
            # verifies the joiner's ops even before its JOIN arrives.
            introduced.append((key_id(op.payload[0]), op.payload[0]))
        for new_author, new_key in introduced:
            if new_author in sync.keys:
                continue
            sync.keys[new_author] = new_key
            for parked_op in sync.awaiting_key.pop(new_author, []):
                try:
                    receive_op(sync, parked_op, source, now)
                except RemoteProtocolError as exc:
                    sync.counters.count_error(exc)
        # The parked ops just taken in may have delivered some of this author's.
        log = sync.logs.get(author)
        delivered = len(log) if log else 0
    if seq <= delivered:
        return True  # a different body would have been caught above as equivocation
    if log and seq == delivered + 1 and op.prev != log[-1].hash and source is not None:
        # Signed on top of an op seq-1 that is not the one we hold: its sender may hold
        # that other op. Asked for, it is the proof of an equivocation that equal
        # vectors would never show (the table is split until someone holds both).
        sync.request(source, [(author, seq - 1, seq - 1)], now)
    pending = sync.pending.setdefault(author, {})
    if len(pending) >= MAX_PENDING_PER_AUTHOR or (
        sum(map(len, sync.pending.values())) >= MAX_PENDING
    ):
        raise RemoteProtocolError(DropReason.RATE_LIMITED, "too many ops waiting for others")
    pending[seq] = op
    sync._held_hashes.add(op.hash)
    if seq == delivered + 1 or sync._unscanned:
        sync_delivery.deliver_ready(sync)
    # Else it waits behind an earlier op of its author, and nothing that could let any
    # parked op through has happened since they were all looked at: a catching-up peer
    # parks most of what it is sent, and each look goes over every author's queue.
    return True


def awaiting_total(sync: SyncPeer) -> int:
    return sum(len(p) for p in sync.awaiting_key.values())
