"""A table over the real node: the window's `TableSession` on a `TableNode`.

The window and the node run in one trio program. `serve` runs the node (and, at the host,
the table's mDNS announcement and the process of the bots the host seats, `bot_house`) in
the window's nursery; each frame `advance` reads what the node passed on and acts as a
person at the table would: join once the table's OPEN is here, say ready when asked to, and
(the host, or its successor) start the round once every player present is ready. Whether a
round may start, and with whom, is the core's answer (`nerts_p2p.table.status`). Moves go
straight to the node (`apply_intent` is synchronous), so a move the engine refuses comes
back in the same frame with the engine's reason.

`leave` sends our LEAVE (our bots leave as their process is told to stop), keeps serving
the table for `linger` seconds (so the others get it, and any op they still ask us for),
then stops the node. A network table with a data directory (`net_open`) keeps the CLI's
store: its ops for a window reopened after a crash, and when it is over its signed log as a
replay in `replays/`, which the window's replay screen lists beside practice matches.
"""

from __future__ import annotations

from pathlib import Path

import trio

from nerts_p2p.game.bots import CASUAL, BotLevel
from nerts_p2p.game.errors import NertsError, Rejection, RejectReason
from nerts_p2p.game.moves import Move
from nerts_p2p.game.rules import Rules
from nerts_p2p.net.discovery import TableAnnouncer
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
from nerts_p2p.net.replay import save_replay
from nerts_p2p.net.store import TableStore
from nerts_p2p.table.replica import TableReplica
from nerts_p2p.table.status import (
    everyone_ready_to_start,
    has_left,
    lobby_round,
    match_won,
    may_start_full_table,
    moves_open,
    others_ready,
    present_players,
)
from protocol.envelope import PROTOCOL_VERSION
from protocol.messages import PLAYER, SPECTATOR

from .bot_house import BotHouseConfig, BotSeats
from .lobby_model import LobbySeat, LobbyView
from .recorder import MatchRecorder
from .replay_file import Replay
from .replica_view import EventReader, pending_cards, seat_names
from .session import ENDED, LOBBY, PLAYING, SCORED, MessageNotice, Notice, TableView
from .table_health import why_gone

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
        store: TableStore | None = None,
        data_dir: Path | None = None,
        practice: bool = False,
        seed: str | None = None,
        bot_pace: float = 1.0,
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
        #: The table's crash store (None: nothing is kept) and where replays go.
        self.store = store
        self.data_dir = data_dir
        #: A practice table: we are ready for round 1 at once, and each round starts once
        #: every seat is taken (by us and our bots).
        self.practice = practice
        self.seed = seed
        self.bot_pace = bot_pace
        self.reader = EventReader(self.replica)
        self.results = self.reader.results
        self.recorder = MatchRecorder()
        self.now = 0.0
        self.problem: str | None = None
        #: The round we (the person at the window) said we want to play.
        self.want_round = 1 if practice else 0
        self.bots: BotSeats | None = None
        self.initial_bots = 0
        #: A private table's key (from its passphrase): our bots need it to be let in.
        self.table_key: bytes | None = None
        self.round_started_at: dict[int, float] = {}
        self.left = False
        self.saved_replay: Path | None = None
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
                if self.bots is not None:
                    with trio.move_on_after(self.linger + 2):
                        await self.bots.done.wait()
                nursery.cancel_scope.cancel()
        finally:
            self.left = True
            if announcer is not None:
                with trio.CancelScope(shield=True):
                    await announcer.aclose()
            self.node.transport.close()
            self._save_replay()
            self.done.set()

    def _farewell(self) -> None:
        if self.replica.is_member and not has_left(self.replica):
            self.node.apply_intent(Leave())
        if self.store is not None:
            self.store.end()  # we left: nothing to take up again
        if self.bots is not None:
            self.bots.close()  # the bots leave as their process is told to stop

    def _save_replay(self) -> None:
        """A network match that had a round is kept as its signed log (the CLI's format,
        `nerts-p2p replay` reads it too), finished or interrupted."""
        if self.data_dir is None or not self.replica.rounds or self.saved_replay is not None:
            return
        try:
            self.saved_replay = save_replay(
                self.data_dir / "replays", self.replica, table_name=self.table_name
            )
        except OSError as exc:
            self.problem = f"the replay could not be saved: {exc.strerror or exc}"

    async def _keep_announcement(self, announcer: TableAnnouncer) -> None:
        while True:
            rnd = self.replica.current_round
            phase = "playing" if rnd is not None and rnd.final is None else "lobby"
            await announcer.update(seats_taken=len(present_players(self.replica)), phase=phase)
            await trio.sleep(0.5)

    # --- bots the host seats -------------------------------------------------------------

    def add_bot(self) -> None:
        """Seat one more bot (the starter's lobby, before any round or between rounds).
        It joins through its own node, in the bots' process (`bot_house`)."""
        if self.left:
            return
        if self._nursery is None:
            # Pressed before the table is served (it is still opening): seated once it is.
            self.initial_bots += 1
            return
        if self.bots is None:
            self.bots = BotSeats(
                BotHouseConfig(
                    interface=self.interface,
                    table=self.replica.sync.table,
                    host=self.replica.sync.host or self.replica.me,
                    address=self.node.address,
                    level=self.bot_level.name,
                    table_key=self.table_key,
                    seed=self.seed,
                    pace=self.bot_pace,
                )
            )
            self._nursery.start_soon(self.bots.run)
        self.bots.add()

    def remove_bot(self) -> None:
        """The last bot we seated leaves the table (a LEAVE), then stops."""
        if self._nursery is None and self.initial_bots > 0:
            self.initial_bots -= 1  # not seated yet: it never will be
            return
        if self.bots is not None:
            self.bots.remove()

    @property
    def bot_count(self) -> int:
        if self.bots is None:
            return self.initial_bots
        return self.bots.count

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
        elif moves_open(rnd):
            phase = PLAYING
        else:
            phase = LOBBY  # dealt, but not every player's mix nonce is here: still dealing
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
        self._bot_news()
        rnd = self.replica.current_round
        if rnd is not None:
            self.round_started_at.setdefault(rnd.number, now)
        if self.practice:
            self.recorder.note(self.replica, now)

    def notices(self) -> list[Notice]:
        out, self._notices = self._notices, []
        return out

    def submit(self, move: Move) -> Rejection | None:
        replica = self.replica
        if replica.seat is None:
            return Rejection(RejectReason.NO_SUCH_SEAT, "you are watching: you have no seat")
        rnd = replica.current_round
        if self.left or rnd is None:  # an ended round: the engine says so itself
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
        self.want_round = max(self.want_round, lobby_round(replica))

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

    # --- a practice match as a replay ----------------------------------------------------

    def replay(self) -> Replay | None:
        """Every round that has started, as our replica folded it, with when each move was
        seen here (practice matches are kept this way; network ones as their signed log)."""
        rules = self.replica.rules
        if rules is None:
            return None
        names = seat_names(self.replica, self.replica.current_round, rules.seats)
        return self.recorder.replay(self.replica, rules, names, self.round_started_at)

    # --- the lobby ---------------------------------------------------------------------------

    def lobby(self) -> LobbyView:
        replica = self.replica
        sync = replica.sync
        rules = replica.rules
        number = lobby_round(replica)
        ready = set(replica.ready_players(number)) if rules is not None else set()
        bots = self.bots.seated if self.bots is not None else set()
        seats = tuple(
            LobbySeat(
                name, author in ready, author == replica.me, author == sync.host, author in bots
            )
            for author, name in present_players(replica)
        )
        spectators = sum(1 for m in sync.members.values() if m.role == SPECTATOR and not m.left)
        starter = rules is not None and sync.starter(number) == replica.me
        return LobbyView(
            self.table_name,
            rules,
            seats,
            rules.players if rules is not None else 0,
            spectators,
            replica.is_member,
            replica.role == PLAYER,
            starter,
            number,
            replica.me in ready or self.want_round >= number,
            others_ready(replica),
            self.bot_count,
            between_rounds=replica.upcoming_round() is not None and bool(replica.rounds),
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
        if upcoming is None:
            self._match_over()
            return
        if self.want_round < upcoming:
            return
        if upcoming not in replica.my_secrets and self._due("ready", upcoming, now):
            self._intent(Ready())
        start = may_start_full_table if self.practice else everyone_ready_to_start
        if start(replica) and self._due("start", upcoming, now):
            self._intent(Start())

    def _bot_news(self) -> None:
        """What the bots' process had to say; at practice, bots gone is the table gone."""
        bots = self.bots
        if bots is None:
            return
        self._notices.extend(MessageNotice(text) for text in bots.problems)
        bots.problems.clear()
        if bots.stopped and self.practice and self.problem is None:
            self.problem = "the bots' process stopped: the practice table cannot go on"

    def _match_over(self) -> None:
        """A seat won the match: nothing of this table is left to take up again."""
        if match_won(self.replica) and self.store is not None and not self.store.ended:
            self.store.end()

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
        opened = self._opened_at if self._opened_at is not None else now
        self.problem = why_gone(
            self.node,
            table_name=self.table_name,
            waited=now - opened,
            now=now,
            host_timeout=self.host_timeout,
            silence=self.silence,
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
