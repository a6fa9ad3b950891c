"""Practice against bots: the real replicated table, every seat in this process.

One `TableReplica` per player (you at the host's seat, a bot at every other seat) plus, to
watch, a spectator replica. They talk through `InMemoryLink`, so ops are signed, ordered,
raced and made stable exactly as over a network: your moves show as pending until stable,
and a bot that reached a foundation first makes your card go back. Bots play in real time
through their own replicas, seeing only what their seat may see. Nothing touches the network.
"""

from __future__ import annotations

import hashlib
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from nerts_p2p.game.bots import BotLevel, BotPlayer
from nerts_p2p.game.errors import NertsError, Rejection, RejectReason
from nerts_p2p.game.moves import Move
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import GameEvent, ReplicatedRound, TableReplica
from protocol.messages import PLAYER, SPECTATOR
from protocol.signing import SigningKeyPair

from .link import InMemoryLink
from .recorder import MatchRecorder
from .replay_file import Replay
from .replica_view import EventReader, pending_cards, seat_names
from .session import (
    ENDED,
    LOBBY,
    PLAYING,
    SCORED,
    Notice,
    RoundResult,
    RoundScoredNotice,
    TableView,
)

#: Seconds between the deal and the bots' first move (the "Go").
GO_DELAY = 1.5
#: Watching bots: seconds the round's result stays up before the next round is dealt.
WATCH_PAUSE = 6.0
#: The share of a 60 Hz frame the window gives the practice table's peers.
WINDOW_FRAME_BUDGET = 0.004
#: The longest a datagram is held back past its arrival to keep a frame within its budget.
MAX_DEFERRAL = 0.1
#: Heartbeats between the in-process peers. Slower than on a LAN (75 ms) because this one
#: process does the work of every peer in the frame loop; a move settles within about two
#: intervals, which is still quick to the eye.
HEARTBEAT = 0.2


def seeded_randomness(label: str) -> Callable[[int], bytes]:
    """Deterministic bytes for a seeded practice table (the same seed deals the same game)."""
    counter = 0

    def draw(n: int) -> bytes:
        nonlocal counter
        out = b""
        while len(out) < n:
            counter += 1
            out += hashlib.sha256(f"nerts-practice/{label}/{counter}".encode()).digest()
        return out[:n]

    return draw


def _first_draw_is(seed: bytes, then: Callable[[int], bytes]) -> Callable[[int], bytes]:
    """Hands out `seed` for the first deal-sized draw, then draws from `then`."""
    handed = False

    def draw(n: int) -> bytes:
        nonlocal handed
        if n == len(seed) and not handed:
            handed = True
            return seed
        return then(n)

    return draw


@dataclass
class PracticeTable:
    """A `TableSession` for practice: you (or, watching, a spectator) and bots."""

    rules: Rules
    levels: tuple[BotLevel, ...]  # one per bot seat
    my_name: str = "you"
    seed: int | None = None
    watch: bool = False  # True: bots at every seat, we only watch
    #: Round 1's deal seed per replica (index 0 is the host, us when we play): to set up a
    #: chosen deal (tests, demonstrations). Later rounds deal from the seeded randomness.
    first_deals: tuple[bytes, ...] = ()
    #: Seconds of each `advance` that delivering datagrams may take (None: no limit). This
    #: one process does the work of every peer; in the window, what does not fit in a
    #: frame waits for the next (a little more latency, never a dropped frame).
    frame_budget: float | None = None
    #: The start time on the caller's clock (the window's monotonic seconds).
    now: float = 0.0
    _notices: list[Notice] = field(default_factory=list)
    #: Nothing here can go away from under us: the practice table has no problem to show.
    problem: str | None = None

    def __post_init__(self) -> None:
        if self.rules.partnerships:
            raise NertsError("practice tables seat one player per seat")
        bots = self.rules.seats if self.watch else self.rules.seats - 1
        if len(self.levels) != bots:
            raise NertsError(f"{bots} bot level(s) needed, got {len(self.levels)}")
        label = str(self.seed) if self.seed is not None else os.urandom(8).hex()
        draw = seeded_randomness(label) if self.seed is not None else os.urandom
        self.rng = random.Random(f"practice/{label}")
        humans = 0 if self.watch else 1
        count = self.rules.seats + (1 if self.watch else 0)
        keys = [SigningKeyPair(draw(32)) for _ in range(count)]
        names = [self.my_name] * humans + [
            f"{level.name} bot {i + 1}" for i, level in enumerate(self.levels)
        ]
        if self.watch:
            names.append(self.my_name)
        randomness = [
            seeded_randomness(f"{label}/{i}") if self.seed is not None else os.urandom
            for i in range(count)
        ]
        for i, deal in enumerate(self.first_deals[:count]):
            randomness[i] = _first_draw_is(deal, randomness[i])
        host = TableReplica.open_table(
            keys[0],
            name=names[0],
            rules=self.rules,
            spectators=True,
            randomness=randomness[0],
            heartbeat_interval=HEARTBEAT,
        )
        self.replicas = [host]
        for i in range(1, count):
            role = SPECTATOR if self.watch and i == count - 1 else PLAYER
            replica = TableReplica.joining(
                keys[i],
                host.sync.table,
                name=names[i],
                role=role,
                randomness=randomness[i],
                heartbeat_interval=HEARTBEAT,
            )
            replica.request_table(host.me, 0, self.now)
            self.replicas.append(replica)
        self.me_index = count - 1 if self.watch else 0
        self.link = InMemoryLink(count, self.rng)
        # Each peer's heartbeats start at its own phase of the interval: in step, every
        # peer's heartbeat would land on every other peer in the same frame.
        self._ticks_from: list[float] | None = None  # set by the first `advance`
        #: replica index -> its bot (None for our own replica)
        self.bots: dict[int, BotPlayer] = {}
        bot_indexes = [i for i in range(count) if i != self.me_index]
        for level, index in zip(self.levels, bot_indexes, strict=True):
            self.bots[index] = BotPlayer(level, -1, random.Random(f"{label}/bot/{index}"))
        self.next_bot: dict[int, float] = {}
        self.round_started_at: dict[int, float] = {}
        self.want_round = 1  # the round we are ready to play (we say ready at once for round 1)
        self.left = False
        self.reader = EventReader(self.me)
        self.results: list[RoundResult] = self.reader.results
        self.recorder = MatchRecorder()
        self._scored_at: float | None = None
        self._flush()

    # --- TableSession ----------------------------------------------------------------

    @property
    def me(self) -> TableReplica:
        return self.replicas[self.me_index]

    def view(self) -> TableView:
        replica = self.me
        rnd = replica.current_round
        names = self._names(rnd)
        if rnd is None:
            return TableView(LOBBY, self.rules, names, None if self.watch else 0, 0, None)
        if rnd.final is not None:
            phase = SCORED
            # Between rounds: once we asked for the next round, the table is in its lobby.
            if self.want_round > rnd.number and not self.watch:
                phase = LOBBY
        elif rnd.state.ended:
            phase = ENDED
        else:
            phase = PLAYING
        started = self.round_started_at.get(rnd.number, self.now)
        return TableView(
            phase,
            rnd.rules,
            names,
            replica.seat,
            rnd.number,
            rnd.state,
            self._pending(rnd),
            tuple(self.results),
            max(0.0, self.now - started),
        )

    def advance(self, now: float) -> None:
        if self.left:
            return
        self.now = max(self.now, now)
        deadline = None if self.frame_budget is None else time.perf_counter() + self.frame_budget
        while (arrival := self.link.first_arrival()) is not None and arrival <= self.now:
            # Past the frame's budget, only datagrams that have waited too long still go in
            # this frame: bursts are spread over a few frames, but nothing waits for ever.
            if (
                deadline is not None
                and arrival > self.now - MAX_DEFERRAL
                and time.perf_counter() > deadline
            ):
                break
            due = self.link.next_due(self.now)
            assert due is not None
            target, sender, datagram = due
            self.replicas[target].receive(datagram, sender, self.now)
        if self._ticks_from is None:
            count = len(self.replicas)
            self._ticks_from = [self.now + HEARTBEAT * i / count for i in range(count)]
        for index, replica in enumerate(self.replicas):
            if self.now >= self._ticks_from[index]:
                replica.tick(self.now)
        for index in self.bots:
            self._bot_turn(index)
        for index in range(len(self.replicas)):
            self._lobby(index)
        self._flush()
        self.recorder.note(self.me, self.now)

    def notices(self) -> list[Notice]:
        out, self._notices = self._notices, []
        return out

    def submit(self, move: Move) -> Rejection | None:
        if self.watch:
            return Rejection(RejectReason.NO_SUCH_SEAT, "you are watching: you have no seat")
        rnd = self.me.current_round
        if rnd is None:  # an ended round: the engine says so itself
            return Rejection(RejectReason.ROUND_OVER, "no round is being played")
        result = self.me.play(move)
        self._flush()
        return result if isinstance(result, Rejection) else None

    def next_round(self) -> None:
        rnd = self.me.current_round
        if rnd is None or rnd.final is None or rnd.final.match_winner is not None:
            return
        self.want_round = max(self.want_round, rnd.number + 1)

    def leave(self) -> None:
        self.left = True

    # --- a finished match as a replay ---------------------------------------------------

    def replay(self) -> Replay | None:
        """Every round that has started, as our replica folded it (None before the deal)."""
        names = self._names(self.me.current_round)
        return self.recorder.replay(self.me, self.rules, names, self.round_started_at)

    # --- the machinery -------------------------------------------------------------------

    def _names(self, rnd: ReplicatedRound | None) -> tuple[str, ...]:
        return seat_names(self.me, rnd, self.rules.seats)

    def _pending(self, rnd: ReplicatedRound) -> frozenset[int]:
        return pending_cards(self.me, rnd)

    def _flush(self) -> None:
        for index, replica in enumerate(self.replicas):
            for destination, datagram in replica.outgoing():
                self.link.send(index, destination, datagram, self.now)
            events = replica.events()
            if index == self.me_index:
                self._on_events(events)

    def _on_events(self, events: list[GameEvent]) -> None:
        notices = self.reader.notices(events)
        if any(isinstance(n, RoundScoredNotice) for n in notices):
            self._scored_at = self.now
        self._notices.extend(notices)

    def _bot_turn(self, index: int) -> None:
        replica, bot = self.replicas[index], self.bots[index]
        rnd, seat = replica.current_round, replica.seat
        if rnd is None or seat is None or rnd.final is not None or rnd.state.ended:
            return
        due = self.next_bot.get(index)
        if due is None:
            due = self.round_started_at.get(rnd.number, self.now) + GO_DELAY
            due += self.rng.random() * 0.5
            self.next_bot[index] = due
        if self.now < due:
            return
        if bot.seat != seat:
            # A bot is made for its seat (it prepares its moves for that seat), so a bot
            # learns its seat from the START and is made anew; its random source goes on.
            bot = self.bots[index] = BotPlayer(bot.level, seat, bot.rng)
        move = bot.act(rnd.state)
        if move is not None:
            replica.play(move)  # a rejection (a race lost locally) just means: think again
        self.next_bot[index] = self.now + bot.delay(move)

    def _lobby(self, index: int) -> None:
        """What each person does between rounds: join, say ready, and (the host) start."""
        replica = self.replicas[index]
        if not replica.is_member and replica.sync.open_op is not None:
            replica.join()
        if not replica.is_member or replica.role != PLAYER:
            return
        upcoming = replica.upcoming_round()
        if upcoming is None:
            return
        last = upcoming - 1
        if self._wants_next(index, last) and upcoming not in replica.my_secrets:
            replica.ready()
        if replica.may_start(upcoming, self.rules.seats):
            replica.start()
            self.next_bot.clear()
            self.round_started_at.setdefault(last + 1, self.now)
        rnd = replica.current_round
        if rnd is not None:
            self.round_started_at.setdefault(rnd.number, self.now)

    def _wants_next(self, index: int, last: int) -> bool:
        if index == self.me_index or (index == 0 and not self.watch):
            return self.want_round > last
        if last == 0:
            return True
        if self.watch:
            return self._scored_at is not None and self.now - self._scored_at >= WATCH_PAUSE
        return True


def practice_table(
    seats: int,
    level: BotLevel,
    *,
    name: str = "you",
    seed: int | None = None,
    watch: bool = False,
    rules: Rules | None = None,
    frame_budget: float | None = None,
) -> PracticeTable:
    rules = rules or Rules(seats=seats)
    bots = seats if watch else seats - 1
    return PracticeTable(
        rules, (level,) * bots, my_name=name, seed=seed, watch=watch, frame_budget=frame_budget
    )
