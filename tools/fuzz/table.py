"""`FuzzTable`: a table of replicas with bots, in simulated time, under a fault schedule.

The fuzzer's own transport (like `tools/mesh.py`, whose `PeerMesh` this does not change):
every datagram between peers goes through the active faults of a `Schedule` (drop,
duplicate, delay, corrupt, partition, one-way links), and peers themselves can be paused,
have their clocks skewed, be killed, or crash and restart from their store. Everything is
drawn from seeded random sources, so one (config, schedule, injections) triple replays
exactly: that is what makes a finding reproducible with one command.

The table also watches, at every step, what a user or another implementation would notice:
an exception out of a replica (a crash), a state that loses or doubles a card, a round
result that does not add up, a divergence report, an honest peer expelled or called a
cheater, and a peer that signs two different ops with one seq.
"""

from __future__ import annotations

import hashlib
import heapq
import random
import time
import traceback
from collections.abc import Callable, Hashable
from typing import Any

from nerts_p2p.game.bots import BotPlayer, level_named
from nerts_p2p.game.errors import Rejection
from nerts_p2p.game.moves import move_text
from nerts_p2p.game.position import state_hash
from nerts_p2p.table.replica import TableReplica
from protocol.messages import PLAYER, SPECTATOR, Op
from protocol.signing import SigningKeyPair
from protocol.sync import BROADCAST
from tools.fuzz.peers import (
    HISTORY_LIMIT,
    SOCKET_BUFFER,
    LinkStats,
    Peer,
    Problem,
    ReplicaFactory,
    Store,
    TableConfig,
    default_factory,
)
from tools.fuzz.schedule import Fault, Schedule
from tools.fuzz.watching import check_states, on_event, persist


class FuzzTable:
    def __init__(
        self,
        config: TableConfig,
        schedule: Schedule,
        *,
        factory: ReplicaFactory | None = None,
        trace: bool = False,
    ) -> None:
        from tools.fuzz.planted import planted_factory

        self.config = config
        self.schedule = schedule
        self.factory = factory or planted_factory(config) or default_factory
        self.trace = trace
        self.now = 0.0
        self.rng = random.Random(f"link/{schedule.seed}")
        self.stats = LinkStats()
        self.history: list[dict[str, Any]] = []
        self.problems: list[Problem] = []
        self.max_rounds = config.rounds
        self.last_heartbeat: dict[int, bytes] = {}
        #: Called with (sender, destination, datagram) for every datagram a peer sends.
        self.taps: list[Callable[[int, int, bytes], None]] = []
        #: Where datagrams for addresses that are not peers of this table go (a UDP shell).
        self.external: Callable[[Hashable, bytes], None] | None = None
        #: Called after each step with (kind, peer, datagrams it sent, wall seconds taken).
        self.watchers: list[Callable[[str, int, int, float], None]] = []
        self._sent_in_step = 0
        self.last_injected: tuple[Hashable, bytes] | None = None
        self._queue: list[tuple[float, int, str, int, Any]] = []
        self._counter = 0
        self.peers: list[Peer] = []
        self.table_id = b""
        total = config.players + config.spectators
        for i in range(total):
            key = SigningKeyPair(hashlib.sha256(f"fuzz-key/{config.seed}/{i}".encode()).digest())
            role = PLAYER if i < config.players else SPECTATOR
            level = level_named(config.level)
            bot = BotPlayer(level, -1, random.Random(f"bot/{config.seed}/{i}"))
            peer = Peer(i, key, role, None, bot if role == PLAYER else None)  # type: ignore[arg-type]
            self.peers.append(peer)
            peer.replica = self.factory(self, i, key, role, False)
            if i == 0:
                self.table_id = peer.replica.sync.table
            else:
                peer.replica.request_table(self.peers[0].key.key_id, 0, 0.0)
        start = random.Random(f"start/{config.seed}")
        for i, peer in enumerate(self.peers):
            self.schedule_at(start.random() * config.heartbeat, "tick", i)
            if peer.bot is not None:
                self.schedule_at(1.0 + start.random(), "bot", i)
        for fault in schedule.faults:
            if fault.kind in ("pause", "restart", "kill"):
                self.schedule_at(fault.start, "fault_on", fault.peers[0], fault)
                if fault.kind != "kill":
                    self.schedule_at(fault.end, "fault_off", fault.peers[0], fault)
        for i in range(len(self.peers)):
            self._after(i)

    # --- the event loop ------------------------------------------------------------------

    def schedule_at(self, at: float, kind: str, peer: int, payload: Any = None) -> None:
        self._counter += 1
        heapq.heappush(self._queue, (at, self._counter, kind, peer, payload))

    def inject(self, at: float, target: int, datagram: bytes, source: Hashable = "fuzzer") -> None:
        """Hand `datagram` to `target` at `at`, as if it came from `source` (no faults)."""
        self.schedule_at(at, "inject", target, (source, datagram))

    def call_at(self, at: float, action: Callable[[FuzzTable], None]) -> None:
        self.schedule_at(at, "call", -1, action)

    def record(self, event: str, **fields: Any) -> None:
        if len(self.history) >= HISTORY_LIMIT:
            del self.history[: HISTORY_LIMIT // 10]
        self.history.append({"t": round(self.now, 6), "ev": event, **fields})

    def problem(self, kind: str, peer: int | None, detail: str) -> None:
        self.problems.append(Problem(kind, peer, round(self.now, 6), detail))
        self.record("problem", kind=kind, peer=peer, detail=detail)

    def local_now(self, peer: int) -> float:
        """`peer`'s own clock: the table's, plus every skew that has begun. The node reads a
        monotonic clock, which may jump ahead (a machine resumed, a VM moved) but never
        back: a skew that ended by jumping back only froze the peer's time (the replica
        keeps the latest time it was given) for as long as the jump, its timers and
        heartbeats stopped while it played on, which no machine does (`fuzz link` seed
        5095 counted the ops such a peer had not yet announced as a split)."""
        skew = sum(
            f.value
            for f in self.schedule.faults
            if f.kind == "skew" and f.peers[0] == peer and f.start <= self.now
        )
        return self.now + skew

    def step(self) -> bool:
        if not self._queue:
            return False
        at, _, kind, index, payload = heapq.heappop(self._queue)
        self.now = max(self.now, at)
        if kind == "call":
            payload(self)
            return True
        peer = self.peers[index]
        self._sent_in_step = 0
        # CPU time, not wall time: the core is sans-I/O (it never waits), so a datagram that
        # takes long is work; on a loaded host wall time also counts the others' turns.
        began = time.thread_time()
        if kind in ("fault_on", "fault_off"):
            self._life(peer, payload, on=kind == "fault_on")
        elif not peer.alive:
            return True
        elif kind in ("deliver", "inject"):
            source, datagram = payload
            if kind == "inject":
                self.stats.injected += 1
                self.last_injected = (source, datagram)
                if self.trace:
                    self.record("inject", to=index, source=str(source), hex=datagram.hex())
            if peer.paused:
                if len(peer.buffer) < SOCKET_BUFFER:
                    peer.buffer.append((source, datagram))
                return True
            self.stats.delivered += kind == "deliver"
            self._guard(
                peer,
                "receive",
                lambda: peer.replica.receive(datagram, source, self.local_now(index)),
            )
        elif kind == "tick":
            if not peer.paused:
                self._guard(peer, "tick", lambda: peer.replica.tick(self.local_now(index)))
            self.schedule_at(self.now + self.config.heartbeat, "tick", index)
        elif kind == "bot":
            if not peer.paused:
                self._bot_turn(peer)
            else:
                self.schedule_at(self.now + 0.5, "bot", index)
        if peer.alive:
            self._after(index)
        if self.watchers:
            took = time.thread_time() - began
            for watch in self.watchers:
                watch(kind, index, self._sent_in_step, took)
        return True

    def _guard(self, peer: Peer, what: str, action: Callable[[], None]) -> None:
        """A replica that raises is a crash: it is reported, and the peer is gone."""
        try:
            action()
        except Exception as exc:
            tb = traceback.format_exception(exc)
            if not peer.honest:
                # The fuzzer's own member, refused an intent because of what the fuzzer signed
                # in its name: it goes on (a vanished player would hold the round back).
                self.record("puppet_refused", peer=peer.index, error=str(exc)[:200])
                return
            self.problem(
                "crash",
                peer.index,
                f"{what} raised {type(exc).__name__}: {exc} | {tb[-2].strip()[:300]}",
            )
            peer.alive = False

    def _life(self, peer: Peer, fault: Fault, *, on: bool) -> None:
        self.record("fault_on" if on else "fault_off", fault=fault.describe())
        if fault.kind == "pause":
            peer.paused = on
            if not on:
                for source, datagram in peer.buffer:
                    self.schedule_at(self.now, "deliver", peer.index, (source, datagram))
                peer.buffer.clear()
        elif fault.kind == "kill":
            peer.alive = False
        elif fault.kind == "restart":
            if on:
                peer.alive = False
            else:
                self._restart(peer)

    def _restart(self, peer: Peer) -> None:
        from tools.fuzz.planted import forgets_store

        peer.restarts += 1
        peer.alive = True
        peer.paused = False
        peer.buffer.clear()
        peer.checked = []
        if forgets_store(self.config, peer.index):
            peer.store = Store()
        # The factory rebuilds the replica from `peer.store` with main's own restart
        # (`TableReplica.restore`: ops through the gate, secrets from the READY escrow).
        restored: list[TableReplica] = []

        def restore() -> None:
            restored.append(self.factory(self, peer.index, peer.key, peer.role, True))

        self._guard(peer, "restore", restore)
        if not restored:  # the crash is recorded; the peer stays down
            peer.alive = False
            return
        peer.replica = restored[0]
        replica = peer.replica
        peer.recovering = not replica.can_author or replica.sync.delivered(replica.me) < len(
            peer.store.ops
        )
        peer.replica.request_table(self.peers[0].key.key_id, 0, self.now)
        self.schedule_at(self.now, "tick", peer.index)
        self.schedule_at(self.now + 0.5, "bot", peer.index)
        self._after(peer.index)

    def _bot_turn(self, peer: Peer) -> None:
        replica, bot = peer.replica, peer.bot
        assert bot is not None
        rnd, seat = replica.current_round, replica.seat
        delay = 0.5
        if (
            not peer.recovering
            and rnd is not None
            and seat is not None
            and rnd.final is None
            and rnd.state.ended_by is None
        ):
            bot.seat = seat
            move = bot.act(rnd.state)
            delay = bot.delay(move)
            if move is not None:
                result: object = None

                def play() -> None:
                    nonlocal result
                    result = replica.play(move)

                self._guard(peer, "play", play)
                if isinstance(result, Op):
                    peer.pending_moves[result.hash] = self.now
                    self.record(
                        "move", peer=peer.index, move=move_text(move), lamport=result.lamport
                    )
                elif isinstance(result, Rejection):
                    self.record("intent_refused", peer=peer.index, move=move_text(move))
        self.schedule_at(self.now + delay, "bot", peer.index)

    def _lobby(self, peer: Peer) -> None:
        """What each person does between rounds: join, say ready, and (the host) start."""
        replica = peer.replica
        if peer.recovering:
            if replica.can_author and replica.sync.delivered(replica.me) >= len(peer.store.ops):
                peer.recovering = False
                self.record("recovered", peer=peer.index)
            return
        if not replica.is_member and replica.sync.open_op is not None:
            replica.join()
        if not replica.is_member or replica.role != PLAYER:
            return
        upcoming = replica.upcoming_round()
        if upcoming is None or upcoming > self.max_rounds:
            return
        if upcoming not in replica.my_secrets:
            replica.ready()
        if replica.may_start(upcoming, self.config.players):
            replica.start()

    def _after(self, index: int) -> None:
        peer = self.peers[index]
        self._guard(peer, "lobby", lambda: self._lobby(peer))
        if not peer.alive:
            return
        replica = peer.replica
        out = replica.outgoing()
        persist(self, peer, out)
        if peer.transform is not None:
            out = peer.transform(self, out)
        self._sent_in_step += len(out)
        for destination, datagram in out:
            self._send(index, destination, datagram)
        for event in replica.events():
            on_event(self, peer, event)
        check_states(self, peer)

    # --- the link ------------------------------------------------------------------------

    def _send(self, sender: int, destination: Hashable, datagram: bytes) -> None:
        if destination == BROADCAST:
            targets = [i for i in range(len(self.peers)) if i != sender]
        elif isinstance(destination, int) and 0 <= destination < len(self.peers):
            targets = [destination]
        else:
            # An answer to an address outside the table: the fuzzer's own, or a real socket's.
            if self.external is not None:
                self.external(destination, datagram)
            return
        for target in targets:
            for tap in self.taps:
                tap(sender, target, datagram)
            self._transmit(sender, target, datagram)

    def _transmit(self, sender: int, target: int, datagram: bytes) -> None:
        self.stats.sent += 1
        drop = duplicate = corrupt = delay = lag = 0.0
        for f in self.schedule.faults:
            if not f.active(self.now):
                continue
            if f.cuts(sender, target):
                drop = 1.0
            elif f.kind == "lag":
                if f.peers[0] == sender and target in f.peers[1:]:
                    lag = max(lag, f.value)
            elif f.kind == "drop":
                drop = max(drop, f.value)
            elif f.kind == "duplicate":
                duplicate = max(duplicate, f.value)
            elif f.kind == "corrupt":
                corrupt = max(corrupt, f.value)
            elif f.kind == "delay":
                delay = max(delay, f.value)
        rng = self.rng
        if drop and rng.random() < drop:
            self.stats.dropped += 1
            return
        copies = 2 if duplicate and rng.random() < duplicate else 1
        self.stats.duplicated += copies - 1
        for _ in range(copies):
            data = datagram
            if corrupt and rng.random() < corrupt:
                buf = bytearray(data)
                for _ in range(rng.randint(1, 4)):
                    buf[rng.randrange(len(buf))] = rng.randrange(256)
                data = bytes(buf)
                self.stats.corrupted += 1
            at = self.now + lag + 0.001 + rng.random() * (0.003 + delay)
            self.schedule_at(at, "deliver", target, (sender, data))

    # --- running -------------------------------------------------------------------------

    def honest_live(self) -> list[Peer]:
        return [p for p in self.peers if p.honest and p.alive]

    def done(self) -> bool:
        players = [p for p in self.honest_live() if p.role == PLAYER] or self.honest_live()
        return all(len(p.finals) >= self.max_rounds for p in players)

    def run(self, *, until: float, at_least: float = 0.0) -> None:
        """Until every honest peer has its rounds final (and every fault has healed, and
        `at_least` has passed), or `until`; then a few heartbeats more so that every peer
        holds every op."""
        settled_from = max(self.schedule.heal_at, at_least)
        while self.now < until and self.step():
            if self.now >= settled_from and self.done():
                break
        settle = self.now + 12 * self.config.heartbeat
        while self.now < settle and self.step():
            pass

    def run_for(self, seconds: float) -> None:
        end = self.now + seconds
        while self.now < end and self.step():
            pass

    # --- reading -------------------------------------------------------------------------

    def index_of(self, author: bytes) -> int | None:
        for p in self.peers:
            if p.key.key_id == author:
                return p.index
        return None

    def is_honest_author(self, author: bytes) -> bool:
        index = self.index_of(author)
        return index is not None and self.peers[index].honest

    def state_hashes(self) -> dict[int, str]:
        out = {}
        for p in self.honest_live():
            rnd = p.replica.current_round
            out[p.index] = state_hash(rnd.state) if rnd else ""
        return out


__all__ = ["FuzzTable", "LinkStats", "Peer", "Problem", "Store", "TableConfig", "default_factory"]
