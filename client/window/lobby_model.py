"""The lobby of a network table as the lobby screen shows it (`NetworkTable.lobby`)."""

from __future__ import annotations

from dataclasses import dataclass

from nerts_p2p.game.rules import Rules


@dataclass(frozen=True)
class LobbySeat:
    name: str
    ready: bool
    me: bool
    host: bool
    bot: bool  # one of the bots this window seats


@dataclass(frozen=True)
class LobbyView:
    """The lobby as the screen shows it: who sits, who is ready, what may be done."""

    table_name: str
    rules: Rules | None  # None until the table's OPEN has arrived
    seats: tuple[LobbySeat, ...]
    seats_max: int
    spectators: int
    joined: bool
    playing: bool  # we hold a seat (else we watch)
    starter: bool  # we start the next round (the host, or its successor)
    round: int  # the round the lobby prepares
    i_am_ready: bool
    can_start: bool
    bots: int  # the bots we seat (asked for, seated or on their way)
    #: A round has been played and the next may be prepared (bots come and go now too).
    between_rounds: bool = False
