"""What the window talks to: a `TableSession`, whatever plays the table underneath.

The window never decides a rule. It reads a `TableView` (a snapshot of the speculative
state, our seat, which of our moves are still pending) and hands intents back as moves;
the session answers with the engine's `Rejection` or nothing. Everything that should be
announced (a race lost, the stocks rotated, Nerts called, a round scored) arrives as a
`Notice`. The practice table (`practice.PracticeTable`) implements this with real
replicas over an in-memory link; a network session implements the same protocol.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from nerts_p2p.game.errors import Rejection
from nerts_p2p.game.moves import Move
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.scoring import SeatScore
from nerts_p2p.game.state import GameState

#: The phases a table goes through, as the window needs to know them.
LOBBY = "lobby"  # no round yet (or the next one is being dealt)
PLAYING = "playing"
ENDED = "ended"  # play is over; the reveals and the audit are under way
SCORED = "scored"  # the round's result is final


@dataclass(frozen=True)
class RoundResult:
    """One round's final result, as every peer computed it."""

    round: int
    scores: tuple[SeatScore, ...]
    cheaters: frozenset[int]
    totals: tuple[int, ...]
    ended_by: str
    called_by: int | None
    match_winner: int | None
    #: Who sat where this round (key ids and names per seat): players may come and go
    #: between rounds, so the match table follows players, not seat numbers. Empty where
    #: unknown (a replay file), then seat numbers stand for players.
    players: tuple[bytes, ...] = ()
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class TableView:
    """A snapshot of the table for one frame. Immutable: the session builds a new one."""

    phase: str
    rules: Rules
    names: tuple[str, ...]  # per seat
    my_seat: int | None  # None: we watch
    round: int
    state: GameState | None
    #: Cards of our moves that are applied but not yet stable (they may still lose a race).
    pending: frozenset[int] = frozenset()
    results: tuple[RoundResult, ...] = ()
    #: Seconds since the round started (for the clock on screen and replays).
    elapsed: float = 0.0

    @property
    def watching(self) -> bool:
        return self.my_seat is None


# --- notices: what the window announces ------------------------------------------------------


@dataclass(frozen=True)
class RaceLostNotice:
    """One of our moves lost a foundation race: the card goes back where it was."""

    move: Move
    winner_seat: int | None
    text: str  # "seat 2 was first: your 5 of hearts goes back"


@dataclass(frozen=True)
class RotationNotice:
    """Every seat was stuck: the stocks rotated (or the round ended stuck)."""

    rotations: int
    text: str


@dataclass(frozen=True)
class NertsNotice:
    seat: int | None
    text: str


@dataclass(frozen=True)
class RoundScoredNotice:
    result: RoundResult


@dataclass(frozen=True)
class MessageNotice:
    """Anything else worth a line on screen (a peer expelled, a protocol problem)."""

    text: str


Notice = RaceLostNotice | RotationNotice | NertsNotice | RoundScoredNotice | MessageNotice


class TableSession(Protocol):
    """The window's side of a table (see the module docstring)."""

    #: Why the table is gone for us, in plain words (None while all is well).
    problem: str | None

    def view(self) -> TableView: ...

    def advance(self, now: float) -> None:
        """Let the table run up to `now` (seconds on the window's monotonic clock)."""

    def notices(self) -> list[Notice]:
        """Notices since the last call."""

    def submit(self, move: Move) -> Rejection | None:
        """Play one of our moves; the engine's reason if it has no effect."""

    def next_round(self) -> None:
        """Say we are ready for the next round (the round end screen's button)."""

    def leave(self) -> None:
        """Leave the table cleanly (the window closes or goes back to the start)."""


@dataclass
class NoticeLog:
    """The last few notices with the time they arrived, for toasts and the announcements."""

    items: list[tuple[float, Notice]] = field(default_factory=list)
    keep: int = 8

    def add(self, now: float, notice: Notice) -> None:
        self.items.append((now, notice))
        del self.items[: -self.keep]

    def live(self, now: float, seconds: float) -> list[Notice]:
        return [n for at, n in self.items if now - at < seconds]
