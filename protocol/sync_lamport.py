"""Lamport stamping and its floor (PROTOCOL.md 5): what our next op is stamped with, and
the highest Lamport time an op names, which bounds how far ahead any op may be stamped.

Separate because both sides use it: authoring stamps with it, and the delivery checks
refuse a received op stamped too far past its floor (a lie about time).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import sync_checks
from .errors import DropReason, LocalProtocolError
from .messages import MAX_LAMPORT, Kind
from .sync_limits import MAX_LAMPORT_STEP

if TYPE_CHECKING:
    from .sync import SyncPeer


def stamp(sync: SyncPeer, kind: Kind, epoch: int, payload: object, deps: list[object]) -> int:
    """Our next op's Lamport time: the clock's next tick, but never more than
    MAX_LAMPORT_STEP past what the op names (our clock may have run ahead on an op we
    hold and do not name, a lobby op stamped far ahead, say), and always past our
    latest heartbeat's promise. An op that cannot be stamped is refused, never sent."""
    if epoch == 0:
        named: dict[bytes, int] = {pair[0]: pair[1] for pair in deps}  # type: ignore[index]
    else:
        players = sync.round_players(kind, epoch, payload)  # whom `deps_for` counted
        named = dict(zip(players, deps, strict=True))  # type: ignore[arg-type]
    floor = lamport_floor(sync, sync.me, epoch, named)
    lamport = max(min(sync.clock.tick(), floor + MAX_LAMPORT_STEP), sync._promised + 1)
    if lamport > min(floor + MAX_LAMPORT_STEP, MAX_LAMPORT):
        raise LocalProtocolError(
            DropReason.BACKDATED,
            "the table's Lamport time has reached its limit: no op can be stamped",
        )
    return lamport


def lamport_floor(sync: SyncPeer, author: bytes, epoch: int, named: dict[bytes, int]) -> int:
    """The highest Lamport time among what an op names: its author's previous op, every
    op its deps name (not an expelled author's from its expulsion on) and its round's
    START. An op may be stamped at most MAX_LAMPORT_STEP past it."""
    log = sync.logs.get(author)
    floor = log[-1].lamport if log else 0
    for dep_author, dep_seq in named.items():
        if (
            dep_seq
            and not sync_checks.beyond_expulsion(sync, dep_author, dep_seq)
            and sync.delivered(dep_author) >= dep_seq
        ):
            floor = max(floor, dep_lamport(sync, dep_author, dep_seq))
    start = sync.epochs[epoch].start if epoch in sync.epochs else None
    return max(floor, start.lamport) if start is not None else floor


def dep_lamport(sync: SyncPeer, author: bytes, seq: int) -> int:
    return sync.logs[author][seq - 1].lamport if seq else 0
