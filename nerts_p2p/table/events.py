"""What the table tells its shell: the game events `TableReplica.events()` hands back.

Separate because they are the replica's output contract, read by every shell (terminal,
window, node, tools) without any of the folding behind them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from nerts_p2p.game.audit import AuditReport
from nerts_p2p.game.moves import Move
from nerts_p2p.game.position import state_hash
from nerts_p2p.game.scoring import SeatScore
from nerts_p2p.game.state import GameState


@dataclass(frozen=True)
class RoundStarted:
    round: int
    seat: int | None  # ours, or None when we watch


@dataclass(frozen=True)
class StableState:
    """The stable prefix of a round grew: this state can no longer change on any peer."""

    round: int
    stable_ops: int
    state: GameState = field(repr=False)

    @cached_property
    def state_hash(self) -> str:
        # Hashed when someone reads it: a peer catching up announces a stable prefix per
        # datagram, and hashing a state costs more than folding an op.
        return state_hash(self.state)


@dataclass(frozen=True)
class RaceLost:
    """One of our moves was applied, then a late op sorted before it and it no longer fits."""

    round: int
    move: Move
    reason: str
    winner_seat: int | None


@dataclass(frozen=True)
class RoundEnded:
    round: int
    ended_by: str
    called_by: int | None


@dataclass(frozen=True)
class RoundFinal:
    round: int
    scores: tuple[SeatScore, ...]
    cheaters: frozenset[int]
    audit: AuditReport
    totals: tuple[int, ...]
    match_winner: int | None
    #: Seats whose players departed (PROTOCOL.md 13): frozen as they lay, scored that way,
    #: and not audited (their seeds were never revealed).
    departed: frozenset[int] = frozenset()


@dataclass(frozen=True)
class SeatDeparted:
    """The round's other participants agreed that this seat's player has gone."""

    round: int
    seat: int
    author: bytes


@dataclass(frozen=True)
class SeatLagging:
    """A participant has not acknowledged what the others have for `seconds`: a peer that
    hides what it saw (or a bad link). Past the bound it is treated as silent."""

    round: int
    seat: int
    author: bytes
    seconds: float


@dataclass(frozen=True)
class RoundVoided:
    """The round we saw `author` start did not begin after all: the others had voted
    `author` out of the round before (its START was still on its way to them), and the
    next in line starts it instead (PROTOCOL.md 13.3). Nothing was played in it."""

    round: int
    author: bytes


@dataclass(frozen=True)
class PeerExpelled:
    author: bytes
    seq: int


@dataclass(frozen=True)
class ProtocolViolation:
    author: bytes
    reason: str


@dataclass(frozen=True)
class Divergence:
    peer: bytes


GameEvent = (
    RoundStarted
    | StableState
    | RaceLost
    | RoundEnded
    | RoundFinal
    | PeerExpelled
    | ProtocolViolation
    | Divergence
    | SeatDeparted
    | SeatLagging
    | RoundVoided
)
