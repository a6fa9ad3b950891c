"""Restarting quietly (PROTOCOL.md 14): a peer back from a crash authors and promises
nothing until the table has shown it its own chain.

Two cases: `Quarantine` (the store is lost: wait for the table to show us our own ops) and
`Resuming` (restarted from the store: wait until caught up with what the table's first
heartbeats after the restart name). Separate because it is a state of its own that only
gates authoring and heartbeats, and is judged from heartbeats alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from . import sync_checks, sync_heartbeats, sync_requests
from .clocks import VersionVector
from .sync_limits import MAX_REPLY

if TYPE_CHECKING:
    from .sync import SyncPeer


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


def quarantine_heartbeat(sync: SyncPeer, own_seq: int, now: float) -> None:
    q = sync.quarantined
    if q is None:
        return
    q.wanted = max(q.wanted, own_seq)
    if q.since is None:
        q.since = now
    release_quarantine(sync, now)


def release_quarantine(sync: SyncPeer, now: float) -> None:
    q = sync.quarantined
    if (
        q is not None
        and q.since is not None
        and now - q.since >= q.hold
        and sync.delivered(sync.me) >= q.wanted
        and (q.wanted == 0 or q.own_seen)
        and all(sync.delivered(a) >= n for a, n in (q.promised or {}).items())
    ):
        sync.quarantined = None


def resume_heartbeat(sync: SyncPeer, sender: bytes, vector: VersionVector, now: float) -> None:
    """The first heartbeat of each peer since the restart (sent after we went down:
    the socket is new) names every op its sender had made and every op it held. We
    had delivered no op of q that q had not made before our crash, so once we hold
    what q's first heartbeat names, our deps are at least what our last heartbeats
    before the crash promised."""
    r = sync.resuming
    if r is None or sender == sync.me or sender in r.heard:
        return
    r.heard.add(sender)
    for author, seq in vector.items():
        r.wanted[author] = max(seq, r.wanted.get(author, 0))
    if r.since is None:
        r.since = now
    release_resume(sync, now)


def release_resume(sync: SyncPeer, now: float) -> None:
    r = sync.resuming
    if r is None:
        return
    if r.started is None:
        r.started = now
    if sync.delivered(sync.me) < r.head:
        return
    if any(
        sync.delivered(a) < n
        and not sync_checks.beyond_expulsion(sync, a, n)
        and not (a in sync.dead and n >= sync.dead[a])
        for a, n in r.wanted.items()
    ):
        return
    # Every participant still in the latest round (in the lobby: every member we know)
    # heard, or `hold` seconds to hear them after the first: a silent one cannot keep
    # us quiet for ever. Nor can a table where nobody else is left: with no heartbeat
    # at all for `ALONE_HOLD` holds, nobody holds a promise of ours that we could break.
    if sync.epochs:
        log = sync.epochs[max(sync.epochs)]
        expected = {p for p in log.participants if log.counts_author(p)}
    else:
        expected = {a for a, m in sync.members.items() if not m.left}
    expected.discard(sync.me)
    heard_all = bool(r.heard) and expected <= r.heard
    held_on = r.since is not None and now - r.since >= r.hold
    alone = r.since is None and not r.knocked and now - r.started >= ALONE_HOLD * r.hold
    if heard_all or held_on or alone:
        sync.resuming = None
        # Our first sign of life is a heartbeat that shows we caught up, before any op
        # we author now: an op first would look like a peer that hides what it saw.
        sync_heartbeats.heartbeat(sync, now)


def ask_everyone_while_our_chain_waits(sync: SyncPeer, now: float) -> None:
    """Every peer of the table may have restarted at once (a power cut, a host and its
    joiners killed together): then nobody sends a heartbeat, and each one's own ops wait
    for ops that only another one's store holds. So, until the first heartbeat arrives, a
    restored peer whose own chain is not all delivered asks every address it knows for the
    ops it lacks of every author it knows of, a reply's worth at a time. Asking promises
    nothing; the others answer while quiet too (PROTOCOL.md 14).

    Heard heartbeats do not always end that: two peers restarted while a third played on
    (`fuzz link` seed 4100) each wait for ops only the other holds, and the third's
    heartbeats name neither (the two are quiet, and it never had those ops). So a peer
    whose own chain is still not all delivered `hold` after its first heartbeat asks
    every address again, at the retry pace, until it is."""
    r = sync.resuming
    if r is None or sync.delivered(sync.me) >= r.head:
        return
    if r.since is not None and now - r.since < r.hold:
        return  # the heartbeats heard say what to ask for, and of whom: that first
    beyond = {a: sync.delivered(a) + MAX_REPLY for a in _authors_known(sync)}
    wanted = sync_requests.gaps(sync, VersionVector(beyond))
    if wanted:
        sync_requests.ask_everyone(sync, wanted, now)


def _authors_known(sync: SyncPeer) -> set[bytes]:
    """Every author but us that our logs, our parked ops and their deps name."""
    authors = set(sync.members) | set(sync.keys) | set(sync.pending)
    for queue in sync.pending.values():
        for op in queue.values():
            authors.update(author for author, _ in op.lobby_deps)
    for log in sync.epochs.values():
        authors.update(log.participants)
    authors.discard(sync.me)
    return authors
