"""Anti-entropy's requests and answers: asking a peer for the ranges we lack, serving
what others ask for, and packing ops into BATCH datagrams.

Separate from heartbeats (which only reveal what is missing) because this is where the
traffic bounds live: at most MAX_REPLY ops per request, fairly shared across authors, and
requests pipelined once an answer is in.
"""

from __future__ import annotations

import bisect
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from . import admission
from .clocks import VersionVector
from .envelope import seal
from .messages import MAX_BATCH, MAX_RANGES, Op, Request, batch_body, evidence_body, request_body
from .sync_limits import BROADCAST, MAX_ASKING, MAX_REPLY, MAX_REQUESTED
from .sync_vouchers import relayable, taking_order

if TYPE_CHECKING:
    from .sync import SyncPeer


class AnswersDue(NamedTuple):
    """The answers awaited from one source (`SyncPeer._asking`): once `received` reaches
    `expected`, they are all in and `authors` may be asked about again at once; past `due`
    (the retry time of the latest request) they are taken as lost."""

    authors: tuple[bytes, ...]
    expected: int
    received: int
    due: float


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


def held_since(sync: SyncPeer, author: bytes, when: float) -> int:
    """How many of `author`'s ops were delivered here by time `when`."""
    return bisect.bisect_right(sync._delivered_at.get(author, ()), when)


def counted(sync: SyncPeer, author: bytes, last: int) -> int:
    """`last`, or less: an expelled author's ops from its expulsion on are neither
    asked for nor pushed (a peer that holds the proof ignores them; only the evidence
    travels), else a peer that delivered one before the proof pushes it forever."""
    expelled = sync.expelled.get(author)
    return last if expelled is None else min(last, expelled - 1)


def gaps(sync: SyncPeer, theirs: VersionVector) -> list[tuple[bytes, int, int]]:
    """What a peer with vector `theirs` holds that we lack, as ranges to ask it for: the
    seqs we have neither delivered nor parked (ops parked waiting for another author's op
    are not asked for again). Every author's first gap comes before anyone's second, so a
    request names the gap that blocks delivery. The work is bounded by what is parked, not
    by the seqs a heartbeat names (up to 2^32-1, any of them a lie)."""
    per_author: list[list[tuple[bytes, int, int]]] = []
    for author, first, whole in VersionVector(sync.vector()).missing_ranges(theirs):
        last = counted(sync, author, whole)
        parked = sorted(k for k in sync.pending.get(author, {}) if first <= k <= last)
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


def request(
    sync: SyncPeer, source: Hashable, ranges: Sequence[tuple[bytes, int, int]], now: float
) -> None:
    """Ask `source` for ops `(author, first, last)`; an author asked about within
    `request_retry` seconds is not asked about again yet."""
    fresh = _not_asked_lately(sync, ranges, now)
    if not fresh:
        return
    sync._outbox.append((source, seal(sync.key, request_body(sync.table, sync.me, fresh))))
    if len(sync._asking) < MAX_ASKING or source in sync._asking:
        authors = tuple(a for a, _, _ in fresh)
        asked = min(sum(last - first + 1 for _, first, last in fresh), MAX_REPLY)
        due = now + sync.request_retry
        earlier = sync._asking.get(source)
        if earlier is not None and now < earlier.due:
            # An answer from there is still on its way (a heartbeat named an author new
            # to us meanwhile): the answers are in once both are. Taking this request's
            # place alone let the first answer's ops complete it, and the peer then asked
            # for the new author once per datagram of that answer while the rest of the
            # first gap waited out the retry time.
            sync._asking[source] = AnswersDue(
                tuple(dict.fromkeys((*earlier.authors, *authors))),
                earlier.expected + asked,
                earlier.received,
                due,
            )
        else:  # none due, or it was lost: its authors may be asked about again by now
            sync._asking[source] = AnswersDue(authors, asked, 0, due)


def ask_everyone(sync: SyncPeer, ranges: Sequence[tuple[bytes, int, int]], now: float) -> None:
    """`request`, of every peer the shell knows an address of (BROADCAST): for a peer that
    does not know who holds what (`sync_restart.ask_everyone_while_our_chain_waits`)."""
    fresh = _not_asked_lately(sync, ranges, now)
    if fresh:
        sync._outbox.append((BROADCAST, seal(sync.key, request_body(sync.table, sync.me, fresh))))


def _not_asked_lately(
    sync: SyncPeer, ranges: Sequence[tuple[bytes, int, int]], now: float
) -> list[tuple[bytes, int, int]]:
    """The ranges whose author was not asked about within `request_retry` seconds, now
    noted as asked about."""
    fresh = [r for r in ranges if now >= sync._requested.get(r[0], -1.0)]
    if fresh and len(sync._requested) >= MAX_REQUESTED:
        # Strangers' heartbeats name made-up senders: keep only requests still in flight.
        sync._requested = {a: t for a, t in sync._requested.items() if t > now}
        if len(sync._requested) >= MAX_REQUESTED:
            sync._requested.clear()
    for author, _, _ in fresh:
        sync._requested[author] = now + sync.request_retry
    return fresh


def answer_arrived(sync: SyncPeer, source: Hashable, ops: int, now: float) -> None:
    """`ops` ops came from `source`. Once as many as our last request to it could bring
    have come, the answer is in: ask for the next ranges at once rather than after the
    next heartbeat and the 200 ms retry (a catching-up peer pipelines its requests; each
    request is still answered with at most MAX_REPLY ops)."""
    asking = sync._asking.get(source)
    if asking is None:
        return
    received = asking.received + ops
    if received < asking.expected:
        sync._asking[source] = asking._replace(received=received)
        return
    del sync._asking[source]
    # Answered in full: these authors may be asked about again at once (the first op a
    # joiner asks the host for comes before any heartbeat, and must not hold back the
    # host's chain until the retry runs out).
    for author in asking.authors:
        sync._requested.pop(author, None)
    offered = sync._offered.get(source)
    if offered is None:
        return
    wanted = gaps(sync, offered)
    if wanted:
        sync.request(source, wanted, now)


def ask_for_gap(sync: SyncPeer, op: Op, source: Hashable, now: float) -> None:
    """An op that came alone and waits behind a gap in its author's chain (a datagram lost,
    or the host's ADMIT of a joiner that holds only the OPEN): ask its sender for the gap
    at once. It holds the ops below (it delivered them, or it is their author), and the
    next heartbeat is up to an interval away. (Not for a BATCH's ops: the ops below them are
    most likely in the same answer.)"""
    parked = sync.pending.get(op.author)
    if parked is None or op.seq not in parked:
        return
    first = sync.delivered(op.author) + 1
    last = min([seq for seq in parked if seq >= first], default=op.seq) - 1
    if first <= last:
        sync.request(source, [(op.author, first, last)], now)


def on_request(sync: SyncPeer, request: Request, source: Hashable, *, first_ops_only: bool) -> None:
    """Serve ops from our logs. A stranger (a peer about to join) gets only first ops,
    which carry keys, each author's once: a forged request cannot make us flood someone
    else (one naming the same author 16 times was answered with 16 copies of its first
    op). Nobody gets one op twice in one answer."""
    evidence: list[Op] = []
    wanted: list[list[Op]] = []
    named: set[bytes] = set()
    for author, first, last in request.ranges:
        if first_ops_only:
            if author in named:
                continue
            named.add(author)
            if author != sync.host and admission.is_private(sync):
                continue  # a stranger at a private table learns the OPEN, nothing more
            first = last = 1
        log = sync.logs.get(author, [])
        run = log[first - 1 : min(counted(sync, author, last), len(log))]
        if author == sync.me and sync.pending.get(author):
            run.extend(_own_waiting(sync, max(first, len(log) + 1), last))
        wanted.append(run)
        if author in sync.evidence and sync.evidence[author][0] not in evidence:
            evidence.extend(sync.evidence[author])
        if author in sync.lies and sync.lies[author][1] not in evidence:
            promise, op = sync.lies[author]
            evidence.append(op)
            sync._outbox.append(
                (source, seal(sync.key, evidence_body(sync.table, sync.me, [promise])))
            )
    # One request, however many ranges it names, is answered with at most MAX_REPLY ops:
    # its source address could be forged, and the asker will ask again for the rest. The
    # budget is shared fairly, so every range asked for makes progress.
    ops = evidence[:MAX_REPLY]
    ops.extend(fair_take(wanted, MAX_REPLY - len(ops)))
    send_ops(sync, source, list({op.hash: op for op in ops}.values()))  # each op once


def _own_waiting(sync: SyncPeer, first: int, last: int) -> list[Op]:
    """Our own ops `first..last` back from the store and waiting, unbroken from `first`
    (PROTOCOL.md 14). They were on the wire before the crash; when every peer of a table
    restarts at once, a table op ours wait for may in turn wait for one of these (a round's
    START is confirmed at its starter only by the others' acknowledgments)."""
    waiting = sync.pending[sync.me]
    out = []
    for seq in range(first, last + 1):
        op = waiting.get(seq)
        if op is None:
            break
        out.append(op)
    return out


def send_ops(sync: SyncPeer, destination: Hashable, ops: Sequence[Op]) -> None:
    """Pack ops into BATCH datagrams of at most 1200 bytes, in the order a receiver takes
    them (`sync_vouchers.taking_order`): it verifies one signature per run of an author's
    ops and the op above vouches for the rest, across the datagrams of an answer too."""
    batch: list[Op] = []
    size = 0
    for op in sorted(relayable(sync, ops), key=taking_order):
        cost = len(op.body) + 64 + 8
        if cost > 1000:
            # Too big to share a BATCH (an op body may take up to MAX_BODY bytes, and a
            # batch adds its own framing): relay the op in its own envelope instead.
            sync._outbox.append((destination, op.datagram()))
            continue
        if batch and (size + cost > 1000 or len(batch) >= MAX_BATCH):
            sync._outbox.append(
                (destination, seal(sync.key, batch_body(sync.table, sync.me, batch)))
            )
            batch, size = [], 0
        batch.append(op)
        size += cost
    if batch:
        sync._outbox.append((destination, seal(sync.key, batch_body(sync.table, sync.me, batch))))
