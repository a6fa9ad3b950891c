"""A table over the real node: the window's `TableSession` on a `TableNode`.

The window and the node run in one trio program. `serve` runs the node (and, at the host,
the table's mDNS announcement and the bots the host seats) in the window's nursery; each
frame `advance` reads what the node passed on and acts as a person at the table would:
join once the table's OPEN is here, say ready when asked to, and (the host, or its
successor) start the round once every player present is ready. Moves go straight to the
node (`apply_intent` is synchronous), so a move the engine refuses comes back in the same
frame with the engine's reason.

`leave` sends our LEAVE (and our bots'), keeps serving the table for `linger` seconds (so
the others get it, and any op they still ask us for), then stops the node.

The window keeps no crash store and no key between runs (the CLI's `--data-dir` does):
a window that is closed leaves its table; it does not come back to it.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field

import trio

from nerts_p2p.game.bots import CASUAL, BotLevel, BotPlayer
from nerts_p2p.game.errors import NertsError, Rejection, RejectReason
from nerts_p2p.game.moves import Move
from nerts_p2p.game.rules import Rules
from nerts_p2p.net.autopilot import Autopilot
from nerts_p2p.net.discovery import ALL_INTERFACES, TableAd, TableAnnouncer
from nerts_p2p.net.node import (
    Intent,
    IntentRefused,
    Join,
    Leave,
    NodeEvent,
    Play,
    Ready,
    Start,
    TableNode,
    VersionMismatch,
)
from nerts_p2p.net.transport import open_udp_transport
from nerts_p2p.table.replica import TableReplica
from protocol import admission
from protocol.envelope import PROTOCOL_VERSION
from protocol.messages import PLAYER, SPECTATOR
from protocol.signing import generate_signing_key

from .replica_view import EventReader, pending_cards, seat_names
from .session import ENDED, LOBBY, PLAYING, SCORED, MessageNotice, Notice, TableView

#: Seconds we keep serving the table after our LEAVE.
LINGER = 1.0
#: A JOIN not yet delivered is asked for again after this long (the first may be lost).
JOIN_RETRY = 2.0
#: A READY or START that has not happened is asked for again after this long.
INTENT_RETRY = 1.0
#: A table whose host has not sent its OPEN after this long is gone (or never was).
HOST_ANSWER_TIMEOUT = 10.0
#: Seconds without a word from the host, between rounds, before the table counts as gone.
SILENCE = 15.0


class NetTableError(NertsError):
    """Why a table cannot be hosted or joined, in a sentence for the screen."""


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
    bots: int


@dataclass
class _Bot:
    """A bot player this window seats: its own key, socket and node, like any peer."""

    node: TableNode
    pilot: Autopilot
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)


class NetworkTable:
    """A `TableSession` (and the lobby's model) for one table over the network."""

    def __init__(
        self,
        node: TableNode,
        *,
        table_name: str,
        interface: str,
        hosting: bool,
        announcer: TableAnnouncer | None = None,
        bot_level: BotLevel = CASUAL,
        host_timeout: float = HOST_ANSWER_TIMEOUT,
        silence: float = SILENCE,
        linger: float = LINGER,
    ) -> None:
        self.node = node
        self.replica: TableReplica = node.replica
        self.table_name = table_name
        self.interface = interface
        self.hosting = hosting
        self.announcer = announcer
        self.bot_level = bot_level
        self.host_timeout = host_timeout
        self.silence = silence
        self.linger = linger
        self.reader = EventReader(self.replica)
        self.results = self.reader.results
        self.now = 0.0
        self.problem: str | None = None
        #: The round we (the person at the window) said we want to play.
        self.want_round = 0
        self.bots: list[_Bot] = []
        self.initial_bots = 0
        #: A private table's key (from its passphrase): our bots need it to be let in.
        self.table_key: bytes | None = None
        self._bots_made = 0
        self.round_started_at: dict[int, float] = {}
        self.left = False
        self.done = trio.Event()
        self._notices: list[Notice] = []
        self._opened_at: float | None = None
        self._join_asked = -1e9
        self._asked: dict[tuple[str, int], float] = {}
        self._leave = trio.Event()
        self._nursery: trio.Nursery | None = None

    # --- running ------------------------------------------------------------------------

    async def serve(self) -> None:
        """Run the node (and the announcement and our bots) until `leave`, then say goodbye.
        An announcement that cannot start is a problem shown in plain words."""
        announcer = self.announcer
        if self._leave.is_set():  # left before it was ever served: nothing to run
            return
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                await nursery.start(self.node.run)
                if announcer is not None:
                    try:
                        await announcer.open()
                    except NertsError as exc:
                        self.problem = f"the table cannot be announced: {exc}"
                        announcer = self.announcer = None
                    else:
                        nursery.start_soon(self._keep_announcement, announcer)
                for _ in range(self.initial_bots):
                    self.add_bot()
                await self._leave.wait()
                self._farewell()
                await trio.sleep(self.linger)
                nursery.cancel_scope.cancel()
        finally:
            self.left = True
            if announcer is not None:
                await announcer.aclose()
            self.node.transport.close()
            for bot in self.bots:
                bot.node.transport.close()
            self.done.set()

    def _farewell(self) -> None:
        for node in [self.node, *(bot.node for bot in self.bots)]:
            if node.replica.is_member and not self._has_left(node.replica):
                node.apply_intent(Leave())

    @staticmethod
    def _has_left(replica: TableReplica) -> bool:
        member = replica.sync.members.get(replica.me)
        return member is not None and member.left

    async def _keep_announcement(self, announcer: TableAnnouncer) -> None:
        while True:
            rnd = self.replica.current_round
            phase = "playing" if rnd is not None and rnd.final is None else "lobby"
            await announcer.update(seats_taken=len(self._players()), phase=phase)
            await trio.sleep(0.5)

    # --- bots the host seats -------------------------------------------------------------

    def add_bot(self) -> None:
        """Seat one more bot (the host's lobby). It joins through its own node."""
        if self.left:
            return
        if self._nursery is None:
            # Pressed before the table is served (it is still opening): seated once it is.
            self.initial_bots += 1
            return
        self._bots_made += 1
        name = f"{self.bot_level.name} bot {self._bots_made}"
        self._nursery.start_soon(self._run_bot, name)

    def remove_bot(self) -> None:
        """The last bot we seated leaves the table (a LEAVE), then stops."""
        if self._nursery is None and self.initial_bots > 0:
            self.initial_bots -= 1  # not seated yet: it never will be
            return
        if not self.bots:
            return
        bot = self.bots.pop()
        if bot.node.replica.is_member:
            bot.node.apply_intent(Leave())
        bot.scope.deadline = trio.current_time() + self.linger

    async def _run_bot(self, name: str) -> None:
        try:
            transport = await open_udp_transport(self.interface)
        except NertsError as exc:
            self._notices.append(MessageNotice(f"no bot could be seated: {exc}"))
            return
        replica = TableReplica.joining(
            generate_signing_key(),
            self.replica.sync.table,
            name=name,
            role=PLAYER,
            randomness=os.urandom,
        )
        node = TableNode(
            replica, transport, bootstrap=self.node.address, table_host=self.replica.sync.host
        )
        if self.table_key is not None:
            replica.use_table_key(self.table_key)
        node.events.close()  # nobody reads a bot's events
        rng = random.Random(int.from_bytes(os.urandom(8), "big"))
        bot = _Bot(node, Autopilot(node, BotPlayer(self.bot_level, -1, rng)))
        self.bots.append(bot)
        try:
            with bot.scope:
                async with trio.open_nursery() as nursery:
                    await nursery.start(node.run)
                    await bot.pilot.run()
                    node.apply_intent(Leave())  # the match is over for it
                    await trio.sleep_forever()
        finally:
            transport.close()

    # --- TableSession ----------------------------------------------------------------------

    def view(self) -> TableView:
        replica = self.replica
        rules = replica.rules or Rules()
        rnd = replica.current_round
        if rnd is None:
            names = tuple(s.name for s in self.lobby().seats) or ("",)
            return TableView(LOBBY, rules, names, None, 0, None, results=tuple(self.results))
        if rnd.final is not None:
            phase = SCORED
            if self.want_round > rnd.number and replica.seat is not None:
                phase = LOBBY  # we asked for the next round: it is being dealt
        elif rnd.state.ended:
            phase = ENDED
        else:
            phase = PLAYING
        started = self.round_started_at.get(rnd.number, self.now)
        return TableView(
            phase,
            rnd.rules,
            seat_names(replica, rnd, rnd.rules.seats),
            replica.seat,
            rnd.number,
            rnd.state,
            pending_cards(replica, rnd),
            tuple(self.results),
            max(0.0, self.now - started),
        )

    def advance(self, now: float) -> None:
        self.now = now
        if self._opened_at is None:
            self._opened_at = now
        self._drain()
        if self.left:
            return
        self._act(now)
        self._check(now)
        rnd = self.replica.current_round
        if rnd is not None:
            self.round_started_at.setdefault(rnd.number, now)

    def notices(self) -> list[Notice]:
        out, self._notices = self._notices, []
        return out

    def submit(self, move: Move) -> Rejection | None:
        replica = self.replica
        if replica.seat is None:
            return Rejection(RejectReason.NO_SUCH_SEAT, "you are watching: you have no seat")
        rnd = replica.current_round
        if self.left or rnd is None or rnd.state.ended:
            return Rejection(RejectReason.ROUND_OVER, "no round is being played")
        intent = Play(move)
        self.node.apply_intent(intent)
        # A refusal is passed on at once, as an event: it is ours to show now.
        return self._drain(refusal_of=intent)

    def next_round(self) -> None:
        upcoming = self.replica.upcoming_round()
        if upcoming is not None and self.replica.role == PLAYER:
            self.want_round = max(self.want_round, upcoming)

    def ready(self) -> None:
        """The lobby's Ready (and the host's Start, which is its own ready as well). While
        a round we have no seat in is played, it is our ready for the next one."""
        replica = self.replica
        if replica.role != PLAYER:
            return
        upcoming = replica.upcoming_round()
        if upcoming is None and replica.rounds:
            upcoming = max(replica.rounds) + 1
        if upcoming is not None:
            self.want_round = max(self.want_round, upcoming)

    def fail(self, problem: str) -> None:
        """The table's service stopped on an error: said on screen, in its words."""
        self.problem = problem
        self.left = True

    def leave(self) -> None:
        if not self._leave.is_set():
            self._leave.set()
        if self._nursery is None:  # never served: nothing to say goodbye to
            self.left = True
            self.node.transport.close()
            self.done.set()

    # --- the lobby ---------------------------------------------------------------------------

    def _players(self) -> list[tuple[bytes, str]]:
        return [
            (author, member.name)
            for author, member in self.replica.sync.members.items()
            if member.role == PLAYER and not member.left
        ]

    def _seat_cap(self) -> int:
        rules = self.replica.rules
        if rules is None:
            return 0
        return rules.seats * (2 if rules.partnerships else 1)

    def lobby(self) -> LobbyView:
        replica = self.replica
        sync = replica.sync
        rules = replica.rules
        rounds = replica.rounds
        upcoming = replica.upcoming_round() or (max(rounds) + 1 if rounds else 1)
        ready = set(replica.ready_players(upcoming)) if rules is not None else set()
        bots = {bot.node.replica.me for bot in self.bots}
        seats = tuple(
            LobbySeat(
                name, author in ready, author == replica.me, author == sync.host, author in bots
            )
            for author, name in self._players()
        )
        spectators = sum(1 for m in sync.members.values() if m.role == SPECTATOR and not m.left)
        starter = rules is not None and sync.starter(upcoming) == replica.me
        everyone_else = all(seat.ready for seat in seats if not seat.me)
        can_start = (
            starter
            and len(seats) >= 2
            and everyone_else
            and upcoming not in sync.epochs
            and replica.upcoming_round() is not None
        )
        return LobbyView(
            self.table_name,
            rules,
            seats,
            self._seat_cap(),
            spectators,
            replica.is_member,
            replica.role == PLAYER,
            starter,
            upcoming,
            replica.me in ready or self.want_round >= upcoming,
            can_start,
            len(self.bots),
        )

    def _act(self, now: float) -> None:
        replica = self.replica
        if not replica.is_member:
            if replica.sync.open_op is not None and now - self._join_asked >= JOIN_RETRY:
                self._join_asked = now
                self.node.apply_intent(Join())
            return
        if replica.role != PLAYER:
            return
        upcoming = replica.upcoming_round()
        if upcoming is None or self.want_round < upcoming:
            return
        if upcoming not in replica.my_secrets and self._due("ready", upcoming, now):
            self._intent(Ready())
        needed = min(self._seat_cap(), max(2, len(self._players())))
        if replica.may_start(upcoming, needed) and self._due("start", upcoming, now):
            self._intent(Start())

    def _intent(self, intent: Intent) -> None:
        self.node.apply_intent(intent)
        self._drain()

    def _due(self, what: str, number: int, now: float) -> bool:
        if now - self._asked.get((what, number), -1e9) < INTENT_RETRY:
            return False
        self._asked[(what, number)] = now
        return True

    def _check(self, now: float) -> None:
        """Whether the table is gone for us, in plain words (shown until we leave)."""
        if self.problem is not None:
            return
        replica = self.replica
        opened = self._opened_at if self._opened_at is not None else now
        refused = replica.admission_refused
        if refused is not None:
            self.problem = (
                f"wrong passphrase for table {self.table_name!r}"
                if refused == "wrong passphrase"
                else f"table {self.table_name!r} did not let us in: {refused}"
            )
            return
        if replica.sync.open_op is None:
            if now - opened > self.host_timeout:
                self.problem = (
                    f"the table's host does not answer (nothing for {self.host_timeout:g} s): "
                    "the table is gone"
                )
            return
        others = [m for a, m in replica.sync.members.items() if a != replica.me]
        rnd = replica.current_round
        match_over = (
            rnd is not None and rnd.final is not None and rnd.final.match_winner is not None
        )
        # A host waits in its lobby for players, however many came and went.
        waiting = rnd is None and replica.sync.host == replica.me
        if others and all(m.left for m in others) and not match_over and not waiting:
            self.problem = "everyone else left the table"
            return
        host = replica.sync.host
        between_rounds = rnd is None or rnd.final is not None
        if host is not None and host != replica.me and between_rounds and not match_over:
            quiet = self.node.silence(host, now)
            member = replica.sync.members.get(host)
            if quiet is not None and quiet > self.silence and member is not None:
                self.problem = (
                    f"the table's host ({member.name}) has sent nothing for {quiet:.0f} s: "
                    "the table is gone"
                )

    def _drain(self, refusal_of: Intent | None = None) -> Rejection | None:
        """Take what the node passed on; returns the refusal of `refusal_of`, if any."""
        refusal = None
        while True:
            try:
                event = self.node.events.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                break
            if isinstance(event, IntentRefused) and event.intent is refusal_of:
                refusal = Rejection(RejectReason.DOES_NOT_FIT, event.reason)
            else:
                self._on_event(event)
        return refusal

    def _on_event(self, event: NodeEvent) -> None:
        if isinstance(event, VersionMismatch):
            self.problem = (
                f"protocol version mismatch: the table speaks version {event.version}, "
                f"this program speaks version {PROTOCOL_VERSION}"
            )
        elif isinstance(event, IntentRefused):
            if not isinstance(event.intent, Play):
                self._notices.append(MessageNotice(event.reason))
        else:
            self._notices.extend(self.reader.notices([event]))


# --- opening a table ------------------------------------------------------------------------


async def host_table(
    interface: str,
    *,
    table_name: str,
    player_name: str,
    rules: Rules,
    spectators: bool,
    port: int = 0,
    bots: int = 0,
    bot_level: BotLevel = CASUAL,
    passphrase: str = "",
) -> NetworkTable:
    """A new table on `interface`, announced once served (`serve`). A passphrase makes it
    private: only who knows it is let in (PROTOCOL.md 17)."""
    if not table_name.strip():
        raise NetTableError("the table needs a name")
    if 1 + bots > rules.seats * (2 if rules.partnerships else 1):
        raise NetTableError(
            f"you and {bots} bots need {1 + bots} seats; the table has {rules.seats}"
        )
    transport = await open_udp_transport(interface, port)
    replica = TableReplica.open_table(
        generate_signing_key(),
        name=player_name,
        rules=rules,
        spectators=spectators,
        randomness=os.urandom,
        private=bool(passphrase),
    )
    key = await _table_key(passphrase, replica) if passphrase else None
    node = TableNode(replica, transport)
    address = transport.address
    if interface == ALL_INTERFACES:
        address = (ALL_INTERFACES, address[1])
    ad = TableAd(
        name=table_name,
        address=address,
        protocol_version=PROTOCOL_VERSION,
        table_id=replica.sync.table,
        host_fingerprint=replica.me,
        seats_taken=1,
        seats_max=rules.seats * (2 if rules.partnerships else 1),
        phase="lobby",
        passphrase=bool(passphrase),
        spectators=spectators,
    )
    table = NetworkTable(
        node,
        table_name=table_name,
        interface=interface,
        hosting=True,
        announcer=TableAnnouncer(interface, ad),
        bot_level=bot_level,
    )
    table.initial_bots = bots
    table.table_key = key
    return table


async def _table_key(passphrase: str, replica: TableReplica) -> bytes:
    """The table key from its passphrase (argon2id: a fraction of a second of CPU, in a
    thread, so the frames go on), given to the replica."""
    key = await trio.to_thread.run_sync(admission.table_key, passphrase, replica.sync.table)
    replica.use_table_key(key)
    return key


def why_not_join(ad: TableAd, role: int) -> str | None:
    """Why this window cannot sit at (or watch) the announced table, or None."""
    if ad.protocol_version != PROTOCOL_VERSION:
        return (
            f"protocol version mismatch: table {ad.name!r} speaks version "
            f"{ad.protocol_version}, this program speaks version {PROTOCOL_VERSION}"
        )
    if role == PLAYER and ad.full:
        return f"table {ad.name!r} is full ({ad.seats_taken} of {ad.seats_max} seats taken)"
    if role == SPECTATOR and not ad.spectators:
        return f"table {ad.name!r} does not welcome spectators"
    if ad.address[0] == ALL_INTERFACES:
        return f"table {ad.name!r} announced no usable address"
    return None


async def join_table(
    interface: str,
    ad: TableAd,
    *,
    player_name: str,
    role: int,
    host_timeout: float = HOST_ANSWER_TIMEOUT,
    passphrase: str = "",
) -> NetworkTable:
    """Sit at (PLAYER) or watch (SPECTATOR) an announced table; served with `serve`. A
    private table needs its passphrase (a wrong one is said in the lobby)."""
    problem = why_not_join(ad, role)
    if problem is not None:
        raise NetTableError(problem)
    if ad.passphrase and not passphrase:
        raise NetTableError(f"table {ad.name!r} is private: it needs its passphrase")
    transport = await open_udp_transport(interface)
    replica = TableReplica.joining(
        generate_signing_key(), ad.table_id, name=player_name, role=role, randomness=os.urandom
    )
    if passphrase:
        await _table_key(passphrase, replica)
    node = TableNode(replica, transport, bootstrap=ad.address, table_host=ad.host_fingerprint)
    return NetworkTable(
        node,
        table_name=ad.name,
        interface=interface,
        hosting=False,
        host_timeout=host_timeout,
    )
