"""Causal delivery: a queued op is delivered once its author's previous op and every op
its deps name are delivered, then checked (`sync_checks`) and either appended to its
author's log (and its round's order) or rejected with its parked successors.

Separate because it is the one loop every other part feeds: receiving, expulsion and
departures all end by asking it to deliver what became ready.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import (
    sync_checks,
    sync_evidence,
    sync_heartbeats,
    sync_liveness,
    sync_membership,
    sync_starters,
)
from .errors import DropReason
from .messages import Kinds, Op
from .sync_events import OpDelivered, OpRejected

if TYPE_CHECKING:
    from .sync import SyncPeer


def deliver_ready(sync: SyncPeer) -> None:
    blocked = sync._blocked_on
    pending, logs, expelled = sync.pending, sync.logs, sync.expelled
    progress = True
    while progress:
        progress = False
        for author in list(pending):
            queue = pending.get(author)
            if queue is None:
                # Emptied by a pass run from inside this one: a lie found on delivery
                # expels its author and delivers what that frees (`expel_from`).
                continue
            log = logs.get(author)
            nxt = (len(log) if log else 0) + 1
            op = queue.get(nxt)
            if op is None:
                continue
            waits = blocked.get(author)
            if (
                waits is not None
                and waits[0] is op
                and len(logs.get(waits[1]) or ()) < waits[2]
                and (waits[1] not in expelled or waits[2] < expelled[waits[1]])
            ):
                # Still short of the dep it failed on last time: no need to look again
                # (a catching-up peer parks many ops, and each delivery re-scans them).
                # `sync.delivered` and `sync_checks.beyond_expulsion`, written out: this
                # runs for every parked author on every op a catching-up peer receives.
                continue
            if not deps_met(sync, op):
                continue
            del queue[nxt]
            blocked.pop(author, None)
            if not queue:
                del pending[author]
            deliver_checked(sync, op)
            progress = True
        # A departure agreed on just now may make a waiting successor's START
        # deliverable (`sync_starters.successor_waits`): look again, rather than wait for an op.
        progress = sync_membership.resolve_departures(sync) or progress
    sync._unscanned = False


def after_acknowledgment(sync: SyncPeer) -> None:
    """A heartbeat came (an acknowledgment, 13.3): a round's START may be confirmed now
    (or was found confirmed since the last delivery pass: `_unscanned`), and the ops of
    that round waiting for it delivered."""
    if sync.pending and (sync._unscanned or any(not log.confirmed for log in sync.epochs.values())):
        deliver_ready(sync)


def deps_met(sync: SyncPeer, op: Op) -> bool:
    kind = op.kind
    if sync.open_op is None and kind != Kinds.OPEN:
        return False  # everything at a table happens after its OPEN
    logs, expelled = sync.logs, sync.expelled
    # Each dep is (author, seq) held here, or past its author's expulsion
    # (`sync_checks.beyond_expulsion`, written out: every op of the table passes here).
    if op.epoch == 0:
        for a, n in op.lobby_deps:
            held = logs.get(a)
            if (len(held) if held else 0) < n and (a not in expelled or n < expelled[a]):
                sync._blocked_on[op.author] = (op, a, n)
                return False
        return True
    if kind == Kinds.START:
        if sync_starters.successor_waits(sync, op):
            return False
        participants = op.payload[0]  # a START's deps follow its own list
    else:
        log = sync.epochs.get(op.epoch)
        if log is None:
            return sync_starters.signed_before_its_start(sync, op)
        if not sync_starters.start_confirmed(sync, op.epoch):
            # No op of a round is delivered before its START is confirmed here (13.3):
            # a START that is voided later then has no op delivered in its round on any
            # peer, so its round's ops are judged alike everywhere, in the round that does
            # begin. An honest author acts only once it finds the START confirmed itself.
            return False
        participants = log.participants
    deps = op.round_deps
    if len(deps) != len(participants):
        return True  # judged (and rejected) by the checks on delivery
    for p, n in zip(participants, deps, strict=True):
        held = logs.get(p)
        if (len(held) if held else 0) < n and (p not in expelled or n < expelled[p]):
            # Remembered: while this dep is missing, the op cannot be delivered.
            sync._blocked_on[op.author] = (op, p, n)
            return False
    return True


def reject(sync: SyncPeer, op: Op, reason: DropReason, message: str) -> None:
    # Only this copy is dropped, not its author's seq: a check failed here is not proof
    # the others hold (they may never see this copy), and a valid op with the same seq
    # may reach them and then us (an invalid twin must not split us off the table).
    # The author's ops parked behind it go too; anti-entropy brings back the real ones.
    sync.dead[op.author] = min(op.seq, sync.dead.get(op.author, op.seq))
    for parked in sync.pending.pop(op.author, {}).values():
        sync._held_hashes.discard(parked.hash)
    sync._held_hashes.discard(op.hash)
    sync.counters.count(reason)
    sync._events.append(OpRejected(op, reason, message))


def deliver_checked(sync: SyncPeer, op: Op) -> None:
    problem = sync_checks.problem(sync, op)
    if problem is not None:
        reason, message, failed_dep = problem
        if failed_dep is not None:
            sync._backdated_on[op.author] = (op, failed_dep)
        reject(sync, op, reason, message)
        return
    deliver(sync, op)
    hb = sync.promises.due(op)
    if hb is not None:
        sync_evidence.check_promise(sync, hb, op)


def deliver(sync: SyncPeer, op: Op, *, authored: bool = False) -> None:
    # Every op of the table passes here once: lookups are made once, and the steps that
    # have nothing to do for most ops (membership, a waiting heartbeat) are not called.
    author = op.author
    log = sync.logs.get(author)
    if log is None:
        log = sync.logs[author] = []
    log.append(op)
    # (No rescan is flagged here: an op delivered inside `deliver_ready` is followed by
    # another pass over every parked op there, and no parked op can wait for one of our
    # own that we only now author.)
    sync._vector = None
    times = sync._delivered_at.get(author)
    if times is None:
        times = sync._delivered_at[author] = []
    times.append(sync._now)
    sync._held_hashes.add(op.hash)
    dead_from = sync.dead.get(author)
    if dead_from is not None and dead_from <= op.seq:
        del sync.dead[author]  # a valid twin of the op we rejected: nothing is dead now
    lamport = op.lamport
    if not authored:
        # Our own ops come back this way only after a restart: the clock must pass them.
        sync.clock.observe(lamport)
        sync_liveness.op_delivered(sync, op)
    if op.kind in sync_membership.MEMBERSHIP_KINDS:
        sync_membership.apply_membership(sync, op)
    position = None
    epochs = sync.epochs
    if op.epoch:
        epoch = epochs.get(op.epoch)
        # Only the round's own ops are ordered in it: a LEAVE (any member, any epoch)
        # from someone who does not play the round has no place there, nor a former
        # starter's START (PROTOCOL.md 13.3), which begins nothing.
        if (
            epoch is not None
            and (op.kind != Kinds.START or epoch.start is op)
            and epoch.counts_for_order(op)
            and epoch.orders(author)
        ):
            position = epoch.insert(op)
    # Any op, lobby ops too, says its author's next op is stamped later: a horizon.
    for other in epochs.values():
        other.hear(author, lamport)
    if author in sync._waiting_hb:
        sync_heartbeats.apply_waiting_heartbeat(sync, author)
    sync._events.append(OpDelivered(op, position))
