"""Heartbeats: sending ours (a promise and a horizon, with the state hash of exactly our
vector), hearing others' (signs of life, horizons for stability, divergence probes,
pushing what they lack), and relaying the latest heartbeat of every participant.

Separate from requests: a heartbeat only says what its sender holds and promises; asking
for and serving the missing ranges is `sync_requests`.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

from . import sync_delivery, sync_evidence, sync_membership, sync_requests, sync_restart
from .clocks import VersionVector
from .envelope import seal
from .messages import MAX_LAMPORT, MAX_RANGES, MAX_RELAYED, Heartbeat, evidence_body, heartbeat_body
from .sync_events import DivergenceDetected
from .sync_limits import BROADCAST, MAX_ASKING, MAX_LAMPORT_STEP, MAX_PUSH, PROBE_FOR, RELAY_EVERY

if TYPE_CHECKING:
    from .sync import SyncPeer


def state_hash_of(sync: SyncPeer, vector: tuple[tuple[bytes, int], ...]) -> bytes:
    """Our state hash if it is the hash of exactly `vector`, else b"" (not computed)."""
    hashed = sync._hashed
    if hashed is None or hashed[0] != vector:
        return b""
    state_hash = hashed[1]
    if callable(state_hash):
        state_hash = state_hash()
        sync._hashed = (vector, state_hash)
    return state_hash


def relay_heartbeats(sync: SyncPeer) -> None:
    """Each participant's latest heartbeat, once, to everyone: a horizon that crosses a
    link losing everything one way (the heartbeats prove themselves)."""
    fresh = sync.promises.to_relay(sync.me)
    chunk: list[Heartbeat] = []
    size = 0
    for hb in fresh:
        cost = len(hb.body) + 64 + 6
        if chunk and (size + cost > 1000 or len(chunk) >= MAX_RELAYED):
            sync._outbox.append(
                (BROADCAST, seal(sync.key, evidence_body(sync.table, sync.me, chunk)))
            )
            chunk, size = [], 0
        chunk.append(hb)
        size += cost
    if chunk:
        sync._outbox.append((BROADCAST, seal(sync.key, evidence_body(sync.table, sync.me, chunk))))


def heartbeat(sync: SyncPeer, now: float) -> None:
    sync._next_heartbeat = now + sync.heartbeat_interval
    vector = sync.vector()
    state_hash = state_hash_of(sync, vector)
    # A promise: our next op is stamped later than this. Held within half a step of our
    # own latest op, so that op can keep it (`sync_lamport.stamp`) even when our clock ran ahead.
    own = sync.logs.get(sync.me)
    floor = own[-1].lamport if own else sync.open_op.lamport if sync.open_op else 0
    lamport = max(min(sync.clock.tick(), floor + MAX_LAMPORT_STEP // 2), sync._promised + 1)
    if lamport >= MAX_LAMPORT:
        return  # the table's time is spent (section 6): nothing more can be promised
    sync._promised = lamport
    for epoch in sync.epochs.values():
        epoch.hear(sync.me, lamport)
    sync_membership.resolve_departures(sync)
    datagram = seal(sync.key, heartbeat_body(sync.table, sync.me, lamport, vector, state_hash))
    sync._outbox.append((BROADCAST, datagram))
    sync._last_heartbeat = datagram
    sync._ticks += 1
    if sync._ticks % RELAY_EVERY == 0:
        relay_heartbeats(sync)


def on_heartbeat(sync: SyncPeer, hb: Heartbeat, source: Hashable, now: float) -> None:
    theirs = VersionVector.from_pairs(hb.vector)  # canonical: sorted, no repeats
    sync_evidence.sign_of_life(sync, hb, theirs, now)
    sync_restart.quarantine_heartbeat(sync, theirs.seq(sync.me), now)
    sync_restart.resume_heartbeat(sync, hb.sender, theirs, now)
    sync_evidence.on_promise(sync, hb)
    hear_heartbeat(sync, hb)
    vector = sync.vector()
    ours = (
        state_hash_of(sync, vector)
        if hb.sender != sync.me and hb.vector == vector and hb.state_hash
        else b""
    )
    if (
        hb.sender != sync.me  # our own, replayed: folded before what we learned since
        and hb.vector == vector
        and hb.state_hash
        and ours
        and hb.state_hash[8:] == ours[8:]  # folded with the same expulsions
        and hb.state_hash != ours
    ):
        probe = sync._probed.get(hb.sender)
        if (
            probe is not None
            and now - probe[1] < PROBE_FOR
            and (probe[0] == vector or now - probe[1] >= sync.request_retry)
        ):
            sync.divergences += 1
            sync._events.append(DivergenceDetected(hb.sender, vector, ours, hb.state_hash))
        elif probe is None or now - probe[1] >= PROBE_FOR:
            # An equivocation looks just like this (half the table holds one op n, half
            # another, the vectors are equal): first ask for the sender's latest op of
            # every author, which brings the proof if there is one. A mismatch still there
            # at this vector, or once the answer has had time to come, is a divergence.
            sync._probed[hb.sender] = (vector, now)
            sync.request(source, [(a, n, n) for a, n in vector][:MAX_RANGES], now)
    held = VersionVector(vector)
    if len(sync._offered) < MAX_ASKING or source in sync._offered:
        sync._offered[source] = theirs
    wanted = sync_requests.gaps(sync, theirs)
    if wanted:
        sync.request(source, wanted, now)
    # What we hold and they lack: push some of it at once, to heal faster than asking.
    # Shared fairly across authors: one author's long backlog must not starve another's
    # gap (their parked ops may wait on exactly that gap). Only ops we have held for a
    # heartbeat interval: younger ones are most likely still on their way to them (at
    # full speed every heartbeat finds some), and pushing those again only adds copies.
    if sync.resuming is None:  # a quiet restart says nothing unasked (PROTOCOL.md 14)
        settled = now - sync.heartbeat_interval
        push = sync_requests.fair_take(
            [
                sync.logs[a][
                    first - 1 : min(
                        sync_requests.counted(sync, a, last),
                        sync_requests.held_since(sync, a, settled),
                    )
                ]
                for a, first, last in theirs.missing_ranges(held)
            ],
            MAX_PUSH,
        )
        sync_requests.send_ops(sync, source, push)
        if len(push) == MAX_PUSH and sync._last_heartbeat is not None:
            # Far behind (a joiner, a peer back from a split): the push is a start, and our
            # latest heartbeat, again, to it alone tells it what to ask us for now rather
            # than at our next heartbeat. (The same promise: nothing new is promised.)
            sync._outbox.append((source, sync._last_heartbeat))
    sync_membership.resolve_departures(sync)
    sync_delivery.after_acknowledgment(sync)


def hear_heartbeat(sync: SyncPeer, hb: Heartbeat) -> None:
    """A heartbeat raises its sender's horizon once we hold every op it had made."""
    own_seq = dict(hb.vector).get(hb.sender, 0)
    if sync.delivered(hb.sender) >= own_seq:
        for epoch in sync.epochs.values():
            epoch.hear(hb.sender, hb.lamport)
    elif hb.lamport > sync._waiting_hb.get(hb.sender, (-1, 0))[0]:
        sync._waiting_hb[hb.sender] = (hb.lamport, own_seq)


def apply_waiting_heartbeat(sync: SyncPeer, author: bytes) -> None:
    waiting = sync._waiting_hb.get(author)
    if waiting and sync.delivered(author) >= waiting[1]:
        del sync._waiting_hb[author]
        for epoch in sync.epochs.values():
            epoch.hear(author, waiting[0])
