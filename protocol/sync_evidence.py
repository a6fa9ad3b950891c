"""Proof of cheating and what follows: equivocation (two ops with one author and seq),
broken promises (a signed heartbeat and a later op of its author that contradicts it),
expelling the author from that seq on, and relaying the proof so every peer reaches the
same verdict. Also the heartbeats relayed as EVIDENCE, which carry those promises.

Separate because expulsion changes every round's order and stability at once and must be
reached identically everywhere, from evidence alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import sync_delivery, sync_heartbeats, sync_liveness, sync_requests
from .clocks import VersionVector
from .envelope import seal
from .errors import DropReason, RemoteProtocolError
from .messages import Evidence, Heartbeat, Op, decode_heartbeat, evidence_body
from .promises import broken_promise
from .sync_events import AuthorExpelled
from .sync_limits import BROADCAST
from .sync_vouchers import relayable

if TYPE_CHECKING:
    from .sync import SyncPeer


def expel(sync: SyncPeer, first: Op, second: Op) -> None:
    author, seq = first.author, first.seq
    if author in sync.expelled and sync.expelled[author] <= seq:
        return
    sync.evidence[author] = (first, second)
    expel_from(sync, author, seq, (first, second), DropReason.EQUIVOCATION)
    # Everyone must learn it: relay both versions (after the op that vouches for one,
    # if its own signature does not verify: `sync_vouchers`).
    relay(sync, [first, second])


def relay(sync: SyncPeer, ops: list[Op]) -> None:
    """Each op in a datagram of its own to everyone; any op vouched for and not signed
    alone goes in one BATCH with its vouchers instead, so a receiver holds the voucher when
    it takes the op."""
    ready = relayable(sync, ops)
    if len(ready) == len(ops):
        for op in ops:
            sync._outbox.append((BROADCAST, op.datagram()))
    else:
        sync_requests.send_ops(sync, BROADCAST, ready)


def expel_from(
    sync: SyncPeer,
    author: bytes,
    seq: int,
    evidence: tuple[Op, Op] | tuple[Heartbeat, Op],
    reason: DropReason,
) -> None:
    """Expel `author` from `seq` on: its ops from there do not count in any round, and it
    no longer holds back stability. The same on every peer that holds the evidence."""
    sync.expelled[author] = seq
    for epoch in sync.epochs.values():
        epoch.exclude(author, seq)
    sync.counters.count(reason)
    sync._events.append(AuthorExpelled(author, seq, evidence, reason))
    # An honest op judged against one version of the equivocated op may have been called
    # backdated here and not elsewhere: judge it again, now that the dep is not judged.
    for victim, (op, (dep_author, dep_seq)) in list(sync._backdated_on.items()):
        if dep_author == author and dep_seq >= seq and sync.dead.get(victim) == op.seq:
            del sync._backdated_on[victim]
            del sync.dead[victim]
            sync.pending.setdefault(victim, {})[op.seq] = op
            # It takes the place of any op parked at that seq since (a twin): what delivery
            # remembered that op waiting for says nothing about this one.
            sync._blocked_on.pop(victim, None)
    # Deps on its ops from `seq` on are no longer waited for: every parked op looked at.
    sync_delivery.deliver_ready(sync)


def on_evidence(sync: SyncPeer, message: Evidence, now: float) -> None:
    """Heartbeats relayed by `message.sender`, each checked on its own like a BATCH's
    ops: a horizon for stability, and a promise to hold the author's next op to."""
    for body, signature in message.heartbeats:
        try:
            hb = decode_heartbeat(body, signature, table=sync.table)
            held = sync.promises.latest.get(hb.sender)
            if held is not None and held.body == hb.body and held.signature == hb.signature:
                continue  # the one we hold already (most relays are): nothing to learn
            if not sync._verify_sender(hb.sender, hb.body, hb.signature):
                raise RemoteProtocolError(
                    DropReason.UNKNOWN_AUTHOR, "a relayed heartbeat of an unknown peer"
                )
            sign_of_life(sync, hb, VersionVector.from_pairs(hb.vector), now)
            on_promise(sync, hb)
            sync_heartbeats.hear_heartbeat(sync, hb)
        except RemoteProtocolError as exc:
            sync.counters.count_error(exc)
    sync_delivery.after_acknowledgment(sync)


def sign_of_life(sync: SyncPeer, hb: Heartbeat, vector: VersionVector, now: float) -> None:
    """A heartbeat newer than any we had of its sender (direct or relayed: relays
    repeat old ones) shows it alive now, acknowledging `vector` (departures, 13)."""
    q = sync.quarantined
    if q is not None and hb.sender == sync.me:
        q.own_seen = True
        q.promised = {a: max(n, (q.promised or {}).get(a, 0)) for a, n in vector.items()}
        sync.clock.observe(hb.lamport)
    if hb.lamport <= sync._latest_hb.get(hb.sender, -1):
        return
    sync._latest_hb[hb.sender] = hb.lamport
    sync.heard[hb.sender] = max(now, sync.heard.get(hb.sender, now))
    sync.acks[hb.sender] = vector
    if hb.sender != sync.me:
        sync_liveness.claim(sync, hb.sender, vector.seq(hb.sender), now)


def on_promise(sync: SyncPeer, hb: Heartbeat) -> None:
    """Keep a verified heartbeat (direct or relayed) and hold its author to it."""
    if hb.sender == sync.me:
        # Our own promise coming back (we restarted, say): never stamp below it.
        sync.clock.observe(hb.lamport)
        sync._promised = max(sync._promised, hb.lamport)
        return
    delivered = sync.delivered(hb.sender)
    sync.promises.note(hb, delivered)
    own = dict(hb.vector).get(hb.sender, 0)
    if own < delivered:
        check_promise(sync, hb, sync.logs[hb.sender][own])


def check_promise(sync: SyncPeer, hb: Heartbeat, op: Op) -> None:
    epoch = sync.epochs.get(op.epoch) if op.epoch else None
    why = broken_promise(hb, op, epoch.participants if epoch is not None else ())
    if why is None:
        return
    author = op.author
    if author in sync.expelled and sync.expelled[author] <= op.seq:
        return
    sync.lies[author] = (hb, op)
    expel_from(sync, author, op.seq, (hb, op), DropReason.BROKEN_PROMISE)  # delivers what it frees
    # Everyone must reach the same verdict: relay the promise and the op that broke it.
    relay(sync, [op])
    sync._outbox.append((BROADCAST, seal(sync.key, evidence_body(sync.table, sync.me, [hb]))))
