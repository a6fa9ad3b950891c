"""What the sync machine tells the game: the events `SyncPeer.events()` hands back.

Separate from the machine itself because they are its output contract, read by the table
replica and the tools without any of the machinery behind them.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import DropReason
from .messages import Heartbeat, Op


@dataclass(frozen=True)
class OpDelivered:
    op: Op
    position: int | None  # where it sorts in its round (None for lobby ops)


@dataclass(frozen=True)
class OpRejected:
    """A signed op that breaks the protocol (backdated, not a member, broken chain): it is
    dropped for good, and its author's later ops cannot be delivered either."""

    op: Op
    reason: DropReason
    message: str


@dataclass(frozen=True)
class AuthorExpelled:
    """Proof of cheating: two ops with one (author, seq) (equivocation), or a signed heartbeat
    and a later op of its author that breaks its promise (`reason` says which)."""

    author: bytes
    seq: int
    evidence: tuple[Op, Op] | tuple[Heartbeat, Op]
    reason: DropReason = DropReason.EQUIVOCATION


@dataclass(frozen=True)
class DivergenceDetected:
    peer: bytes
    vector: tuple[tuple[bytes, int], ...]
    ours: bytes
    theirs: bytes


@dataclass(frozen=True)
class DeparturesChanged:
    """The round's departures by agreement (PROTOCOL.md 13) changed: `departed` maps each
    departed participant to the last of its seqs that counts. Usually one more participant
    has gone; a late DEPART sorting earlier may also move an agreement."""

    epoch: int
    departed: dict[bytes, int]
    added: tuple[bytes, ...]


@dataclass(frozen=True)
class StartVoided:
    """A START that began its round here no longer counts (PROTOCOL.md 13.3): the votes of
    an earlier round, which this peer did not hold when it delivered the START, agree that
    its author had departed before it signed it. The round is gone; its successor's START
    begins it again."""

    epoch: int
    start: Op


SyncEvent = (
    OpDelivered | OpRejected | AuthorExpelled | DivergenceDetected | DeparturesChanged | StartVoided
)
