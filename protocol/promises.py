"""Signed heartbeats as promises: relayed so horizons cross one-way links, and held as evidence.

A HEARTBEAT from author A with Lamport time H and vector V promises two things about A's next
op, the op with seq V[A] + 1 (PROTOCOL.md section 7):

- it is stamped above H (A's clock ticked to H for the heartbeat), and
- its deps are not below V for any participant of its round (what A had delivered, it still
  has: delivered counts never go down).

An op that breaks either promise, together with the heartbeat, proves a lie: anyone can check
both signatures. The sync state machine expels the author from that op's seq, as for
equivocation, and relays the pair so every peer reaches the same verdict.

`PromiseBook` keeps what this needs, bounded per author:

- `latest`: each author's heartbeat with the highest Lamport time, relayed once to every peer
  (an EVIDENCE message), so a horizon travels around a link that loses everything one way;
- `open`: heartbeats whose promised op has not been delivered here yet, a few per author
  (and the latest heartbeat's, whatever the others), checked when that op arrives.

Pure data and pure functions: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from .messages import Heartbeat, Op

MAX_OPEN_PER_AUTHOR: Final = 8  # unchecked promises kept per author (the newest seqs)


def broken_promise(hb: Heartbeat, op: Op, participants: Sequence[bytes]) -> str | None:
    """Why `op` breaks the promise `hb` made (in words), or None if it keeps it or `op` is not
    the op the heartbeat promised about. `participants`: the op's round, in START order (empty
    for a lobby op, whose deps name only the OPEN and the author's own op)."""
    vector = dict(hb.vector)
    if op.author != hb.sender or op.seq != vector.get(hb.sender, 0) + 1:
        return None
    if op.lamport <= hb.lamport:
        return (
            f"op {op.seq} is stamped {op.lamport}, but its author's heartbeat had promised a "
            f"time above {hb.lamport}"
        )
    if op.epoch and len(op.round_deps) == len(participants):
        for participant, seen in zip(participants, op.round_deps, strict=True):
            if seen < vector.get(participant, 0):
                return (
                    f"op {op.seq} names {seen} ops of {participant.hex()[:8]} as seen, but its "
                    f"author's heartbeat had already held {vector[participant]}"
                )
    return None


@dataclass
class PromiseBook:
    latest: dict[bytes, Heartbeat] = field(default_factory=dict)
    open: dict[bytes, dict[int, Heartbeat]] = field(default_factory=dict)
    _relayed: dict[bytes, int] = field(default_factory=dict)  # author -> lamport relayed

    def note(self, hb: Heartbeat, delivered: int) -> None:
        """Keep a verified heartbeat of another peer. `delivered`: how many of its author's
        ops are delivered here."""
        author = hb.sender
        if author not in self.latest or hb.lamport > self.latest[author].lamport:
            self.latest[author] = hb
        own = dict(hb.vector).get(author, 0)
        if own < delivered:
            return  # its promised op is already here: checked by the caller at once
        pending = self.open.setdefault(author, {})
        kept = pending.get(own)
        if kept is None or hb.lamport > kept.lamport:
            pending[own] = hb
            # Bounded: the promises about the newest ops are the ones still to be checked,
            # and always the latest heartbeat's (the horizon it raised is what that promise
            # guards): a liar's heartbeats stamped earlier but naming more of its own ops
            # must not push it out unchecked (found by tools.mutate, seed 501).
            latest = self.latest[author]
            for stale in sorted(pending)[:-MAX_OPEN_PER_AUTHOR]:
                if pending[stale] is not latest:
                    del pending[stale]

    def due(self, op: Op) -> Heartbeat | None:
        """The kept heartbeat that made a promise about `op` (now delivered), if any. None
        is kept about an earlier op of its author: a promise is kept only while its op is
        not delivered (`note`), and an author's ops are delivered in seq order, each
        passing here."""
        pending = self.open.get(op.author)
        if not pending:
            return None
        hb = pending.pop(op.seq - 1, None)
        if not pending:
            del self.open[op.author]
        return hb

    def to_relay(self, me: bytes) -> list[Heartbeat]:
        """Each other author's latest heartbeat that has not been relayed yet."""
        fresh = [
            hb
            for author, hb in sorted(self.latest.items())
            if author != me and hb.lamport > self._relayed.get(author, -1)
        ]
        for hb in fresh:
            self._relayed[hb.sender] = hb.lamport
        return fresh


__all__ = ["MAX_OPEN_PER_AUTHOR", "PromiseBook", "broken_promise"]
