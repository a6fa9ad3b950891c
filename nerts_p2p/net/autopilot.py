"""A peer with nobody at the keyboard (`--headless`): what a person would do, done by code.

The autopilot joins the table, says ready before each round, lets a bot play the peer's own
seat, and (at the host) starts each round once every seat is taken and every player is ready.
It speaks to the node only through intents, like a window would, and reads the replica's
state as the view would.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import trio

from nerts_p2p.game.bots import BotPlayer
from nerts_p2p.net.node import Join, Play, Ready, Start, TableNode
from nerts_p2p.table.replica import ReplicatedRound
from nerts_p2p.table.status import everyone_ready_to_start, may_start_full_table
from protocol.messages import PLAYER

#: How often the lobby is looked at when nothing else happens (seconds).
LOBBY_POLL = 0.05
#: After this long without our JOIN delivered, ask again (the first one may have been lost
#: before we knew anyone's address; the replica refuses a second JOIN once we are in).
JOIN_RETRY = 2.0
INTENT_RETRY = 1.0


@dataclass
class Autopilot:
    node: TableNode
    bot: BotPlayer | None
    max_rounds: int | None = None
    #: Bot delays are multiplied by this (1.0: human pace; small: as fast as it can).
    pace: float = 1.0
    #: Seconds after a round appears here before the bot's first move in it (a person's
    #: "Go": a window's player gets a moment to look at the deal).
    go_delay: float = 0.0
    #: Seconds after a round is final here before saying ready for the next (people
    #: watching the table get time to read the results).
    rest: float = 0.0
    _asked: dict[tuple[str, int], float] = field(default_factory=dict)
    _join_asked_at: float = -1e9
    #: Round number -> when it first appeared here (for `go_delay`).
    _dealt_at: dict[int, float] = field(default_factory=dict)
    #: Round number -> when it was first seen final here (for `rest`).
    _final_at: dict[int, float] = field(default_factory=dict)

    def match_over(self) -> bool:
        """The match is over here: a seat won, we played our `max_rounds`, or the host
        left the table after its last round (its LEAVE says the match ended for it)."""
        replica = self.node.replica
        rounds = replica.rounds
        last = rounds[max(rounds)] if rounds else None
        if last is not None and last.final is None:
            return False
        host = replica.sync.members.get(replica.sync.host or b"")
        if host is not None and host.left:
            return True
        if last is None or last.final is None:
            return False
        return last.final.match_winner is not None or (
            self.max_rounds is not None and last.number >= self.max_rounds
        )

    async def run(self) -> None:
        """Play until the match is over here (the caller decides how long to linger)."""
        while not self.match_over():
            delay = self.step(trio.current_time())
            if self.node.replica.is_member:
                await trio.sleep(delay)
            else:
                # Joining: answered the moment the OPEN (or the host's ADMIT) is in, not at
                # the next look, which a spectator catching up would otherwise wait for.
                with trio.move_on_after(delay):
                    await self.node.wait_news()

    def step(self, now: float) -> float:
        """One look at the table; returns how long to wait before the next."""
        replica = self.node.replica
        if not replica.is_member:
            if replica.sync.open_op is not None and now - self._join_asked_at >= JOIN_RETRY:
                self._join_asked_at = now
                self.node.submit(Join())
            return LOBBY_POLL
        if replica.role != PLAYER:
            return LOBBY_POLL
        rounds = replica.rounds
        last = max(rounds) if rounds else 0
        current = rounds.get(last)
        if current is not None and current.final is None:
            dealt = self._dealt_at.setdefault(current.number, now)
            if now < dealt + self.go_delay:
                return dealt + self.go_delay - now
            return self._play(current)
        if self.match_over():
            return LOBBY_POLL
        upcoming = last + 1
        if self.max_rounds is not None and upcoming > self.max_rounds:
            return LOBBY_POLL
        if current is not None:
            final_at = self._final_at.setdefault(current.number, now)
            if now < final_at + self.rest:
                return min(LOBBY_POLL, final_at + self.rest - now)
        if upcoming not in replica.my_secrets and self._due(("ready", upcoming), now):
            self.node.submit(Ready())
        if self._may_start(upcoming) and self._due(("start", upcoming), now):
            self.node.submit(Start())
        return LOBBY_POLL

    def _due(self, what: tuple[str, int], now: float) -> bool:
        """Ask once, and again after INTENT_RETRY if it has not happened (the replica may
        have refused it, for example a START while the last round is not final here)."""
        if now - self._asked.get(what, -1e9) < INTENT_RETRY:
            return False
        self._asked[what] = now
        return True

    def _may_start(self, number: int) -> bool:
        """We are the round's starter (the host, or its successor once the host has
        departed: the replica knows which) and its players are ready: for the first round
        every seat's, after it every player's still at the table (`everyone_ready_to_start`)."""
        replica = self.node.replica
        rules = replica.rules
        if rules is None:
            return False
        if number == 1:
            return may_start_full_table(replica)  # the first: every seat taken
        # Later rounds go on with whoever is still there: a player who left or was voted
        # out as silent leaves a free seat, and the others play on.
        return everyone_ready_to_start(replica)

    def _play(self, rnd: ReplicatedRound) -> float:
        replica = self.node.replica
        seat = replica.seat
        if self.bot is None or seat is None or rnd.state.ended_by is not None:
            return LOBBY_POLL
        self.bot.seat = seat
        move = self.bot.act(rnd.state)
        if move is not None:
            self.node.submit(Play(move))
        return max(self.bot.delay(move) * self.pace, 0.001)
