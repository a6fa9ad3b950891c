"""Signs of life: when a peer last showed one that we can use (PROTOCOL.md 13.1).

Departure by agreement votes out a participant that has shown no sign of life for the
silence bound, so what counts as one decides whether a round can be held for ever:

- an op of the author counts when it is *delivered*, not when a copy arrives: a copy we
  reject (backdated, wrongly signed, ...) or one that waits for an op that never comes
  shows nothing;
- a heartbeat names ops of its sender's own (its vector's entry for the sender). That is a
  claim: while an op it names is not delivered here, the heartbeat, and every later one,
  count only up to when the claim was first made. Each op of the sender delivered moves
  that time on (the claim is being met); the last one ends it.

So a participant that sends only invalid copies of its op n, and heartbeats that name op n,
falls silent here the silence bound after it first claimed op n, however many heartbeats it
sends. An honest heartbeat overtakes its op by milliseconds, and a lost op is asked for
again within the request retry, far inside the bound.

Separate from the heartbeats and evidence it hears because it is what the table's
presence watch reads (`signs_of_life`), and only that.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .sync_requests import counted

if TYPE_CHECKING:
    from .messages import Op
    from .sync import SyncPeer


def claim(sync: SyncPeer, author: bytes, own: int, now: float) -> None:
    """A heartbeat of `author`, newer than any before, names `own` ops of its own: the
    first of them we lack starts a claim (an older claim still unmet keeps its time)."""
    delivered = sync.delivered(author)
    held = sync._claims.get(author)
    if held is not None and held[0] > delivered:
        return
    if own > delivered:
        sync._claims[author] = (own, now)
    else:
        sync._claims.pop(author, None)


def op_delivered(sync: SyncPeer, op: Op) -> None:
    """An op of another author delivered: a sign of life, and progress on its claim."""
    now = sync._now
    sync.heard[op.author] = max(now, sync.heard.get(op.author, now))
    held = sync._claims.get(op.author)
    if held is None:
        return
    if op.seq >= held[0]:
        del sync._claims[op.author]
    else:
        sync._claims[op.author] = (held[0], now)


def signs_of_life(sync: SyncPeer) -> dict[bytes, float]:
    """author -> when it last showed a sign of life we can use: its latest heartbeat or
    delivered op, but no later than its oldest claim still unmet."""
    out = dict(sync.heard)
    for author, (seq, since) in sync._claims.items():
        if author in out and sync.delivered(author) < counted(sync, author, seq):
            out[author] = min(out[author], since)
    return out


__all__ = ["claim", "op_delivered", "signs_of_life"]
