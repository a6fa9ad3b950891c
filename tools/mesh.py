"""`PeerMesh`: N table replicas over a fault-injecting in-memory link, in simulated time.

The h11 `ConnectionPair` idea for a whole table. Every datagram a replica sends goes through
`FaultyLink`, which may drop, duplicate, delay (and so reorder) it, or hold it back while a
partition separates sender and receiver; all of it drawn from one seeded random source, so a
schedule is replayed exactly by its seed. Bots sit at the players' seats and play through
their own replica, as a person at that peer would. Nothing here touches a socket.
"""

from __future__ import annotations

import hashlib
import heapq
import random
from collections.abc import Hashable
from dataclasses import dataclass, field

from nerts_p2p.game.bots import CASUAL, BotLevel, BotPlayer
from nerts_p2p.game.errors import Rejection
from nerts_p2p.game.position import state_hash
from nerts_p2p.game.rules import Rules
from nerts_p2p.seeded import (
    seeded_bytes as seeded_bytes,
)  # re-exported: tests seed their peers with it
from nerts_p2p.table.replica import (
    Divergence,
    GameEvent,
    RaceLost,
    RoundFinal,
    TableReplica,
)
from protocol import admission
from protocol.messages import PLAYER, SPECTATOR
from protocol.signing import SigningKeyPair
from protocol.sync import BROADCAST


@dataclass(frozen=True)
class Faults:
    drop: float = 0.0
    duplicate: float = 0.0
    delay: tuple[float, float] = (0.001, 0.004)  # seconds; a spread reorders datagrams
    #: (start, end, group): while start <= now < end, peers in `group` and the others
    #: cannot reach each other.
    partitions: tuple[tuple[float, float, frozenset[int]], ...] = ()
    #: (sender, receiver): every datagram from sender to receiver is lost, for the whole run
    #: (the other direction works). Horizons must then travel through the other peers.
    one_way: frozenset[tuple[int, int]] = frozenset()
    #: (start, end, peer): the peer is frozen (a laptop lid, a debugger): it handles nothing
    #: until `end`, then takes everything that arrived meanwhile at once, as an OS socket
    #: buffer would hand it over.
    pauses: tuple[tuple[float, float, int], ...] = ()

    def partitioned(self, a: int, b: int, now: float) -> bool:
        return (a, b) in self.one_way or any(
            start <= now < end and ((a in group) != (b in group))
            for start, end, group in self.partitions
        )

    def paused_until(self, peer: int, now: float) -> float | None:
        """When `peer` wakes, if it is paused at `now`."""
        ends = [end for start, end, p in self.pauses if p == peer and start <= now < end]
        return max(ends) if ends else None

    def disturbed(self, peer: int, now: float) -> bool:
        """Is a partition or a pause acting on `peer` now (one-way links are not counted:
        they last for ever, and the other peers relay around them)?"""
        return self.paused_until(peer, now) is not None or any(
            start <= now < end for start, end, _ in self.partitions
        )


class MeshStalledError(AssertionError):
    """A peer held ops it could not deliver and delivered nothing for `stall_limit` simulated
    seconds of an undisturbed network: anti-entropy has stopped making progress."""


class MeshIdleError(AssertionError):
    """`run` was asked for rounds that no peer has finished, and no peer delivered a new op
    for `idle_limit` simulated seconds of an undisturbed network with the bots playing: the
    table is wedged (nobody readies, starts or moves), and running on to `until` would only
    take time."""


PERFECT = Faults()


@dataclass
class MeshStats:
    sent: int = 0
    dropped: int = 0
    duplicated: int = 0
    bytes_sent: int = 0
    rejected_intents: int = 0
    races_lost: int = 0


@dataclass
class PeerMesh:
    players: int
    rules: Rules
    seed: int = 0
    faults: Faults = PERFECT
    spectators: int = 0
    levels: tuple[BotLevel, ...] = ()
    heartbeat: float = 0.075
    now: float = 0.0
    stats: MeshStats = field(default_factory=MeshStats)
    #: While set, bots make no moves (to measure how the mesh settles on its own).
    bots_paused: bool = False
    #: Peers that are gone (a closed laptop lid): they neither send nor receive.
    vanished: set[int] = field(default_factory=set)
    #: Simulated seconds a peer may hold undeliverable ops without delivering anything (while
    #: no partition or pause acts) before the mesh fails with `MeshStalledError`; None: never.
    stall_limit: float | None = 60.0
    #: Simulated seconds `run` goes on with no new op delivered anywhere (no partition or
    #: pause acting, bots not paused, no peer done with the rounds asked for) before it
    #: fails with `MeshIdleError`; None: never.
    #: Bots move every few seconds and the lobby readies at once, so a quiet minute or two
    #: means the table is stuck (a broken rule): fail then, rather than at `until`.
    idle_limit: float | None = 120.0
    #: The bots' delays are multiplied by this (1.0: human pace; smaller: faster bots, more
    #: foundation races).
    pace: float = 1.0
    #: A private table (PROTOCOL.md 17): every peer knows this passphrase.
    passphrase: str | None = None

    def __post_init__(self) -> None:
        self.rng = random.Random(f"mesh/{self.seed}")
        self._queue: list[tuple[float, int, str, int, tuple[int, bytes] | None]] = []
        self._counter = 0
        keys = [
            SigningKeyPair(hashlib.sha256(f"key/{self.seed}/{i}".encode()).digest())
            for i in range(self.players + self.spectators)
        ]
        host = TableReplica.open_table(
            keys[0],
            name="p0",
            rules=self.rules,
            spectators=True,
            randomness=seeded_bytes(f"{self.seed}/0"),
            heartbeat_interval=self.heartbeat,
            private=self.passphrase is not None,
        )
        table_key = (
            admission.table_key(self.passphrase, host.sync.table)
            if self.passphrase is not None
            else None
        )
        if table_key is not None:
            host.use_table_key(table_key)
        self.replicas: list[TableReplica] = [host]
        for i in range(1, self.players + self.spectators):
            role = PLAYER if i < self.players else SPECTATOR
            replica = TableReplica.joining(
                keys[i],
                host.sync.table,
                name=f"p{i}",
                role=role,
                randomness=seeded_bytes(f"{self.seed}/{i}"),
                heartbeat_interval=self.heartbeat,
            )
            replica.request_table(host.me, 0, 0.0)
            if table_key is not None:
                replica.use_table_key(table_key)
            self.replicas.append(replica)
        levels = self.levels or (CASUAL,) * self.players
        self.bots = [
            BotPlayer(levels[i], -1, random.Random(f"bot/{self.seed}/{i}"))
            for i in range(self.players)
        ]
        self.events: list[list[GameEvent]] = [[] for _ in self.replicas]
        self.finals: list[dict[int, RoundFinal]] = [{} for _ in self.replicas]
        for i in range(len(self.replicas)):
            self._schedule(self.rng.random() * self.heartbeat, "tick", i, None)
            if i < self.players:
                self._schedule(1.0 + self.rng.random(), "bot", i, None)
        self._progress: list[tuple[int, float]] = [(0, 0.0) for _ in self.replicas]
        self._flush_all()

    # --- the event loop ----------------------------------------------------------------

    def _schedule(self, at: float, kind: str, peer: int, payload: tuple[int, bytes] | None) -> None:
        self._counter += 1
        heapq.heappush(self._queue, (at, self._counter, kind, peer, payload))

    def _send(self, sender: int, destination: Hashable, datagram: bytes) -> None:
        targets = (
            [i for i in range(len(self.replicas)) if i != sender]
            if destination == BROADCAST
            else [destination]
        )
        for target in targets:
            assert isinstance(target, int)
            self.stats.sent += 1
            self.stats.bytes_sent += len(datagram)
            if self.faults.partitioned(sender, target, self.now):
                self.stats.dropped += 1
                continue
            if self.rng.random() < self.faults.drop:
                self.stats.dropped += 1
                continue
            copies = 2 if self.rng.random() < self.faults.duplicate else 1
            self.stats.duplicated += copies - 1
            for _ in range(copies):
                low, high = self.faults.delay
                self._schedule(
                    self.now + low + self.rng.random() * (high - low),
                    "deliver",
                    target,
                    (sender, datagram),
                )

    def _flush(self, peer: int) -> None:
        replica = self.replicas[peer]
        for destination, datagram in replica.outgoing():
            self._send(peer, destination, datagram)
        for event in replica.events():
            self.events[peer].append(event)
            if isinstance(event, RoundFinal):
                self.finals[peer][event.round] = event
            elif isinstance(event, RaceLost):
                self.stats.races_lost += 1

    def _flush_all(self) -> None:
        for i in range(len(self.replicas)):
            self._flush(i)

    def step(self) -> bool:
        if not self._queue:
            return False
        at, _, kind, peer, payload = heapq.heappop(self._queue)
        self.now = max(self.now, at)
        if peer in self.vanished:
            if kind != "deliver":
                self._schedule(self.now + self.heartbeat, kind, peer, None)
            self._progress[peer] = (-1, self.now)  # gone is not stalled
            return True
        wake = self.faults.paused_until(peer, self.now)
        if wake is not None:
            # Frozen: whatever was due happens when it wakes, all at once.
            self._schedule(wake, kind, peer, payload)
            return True
        replica = self.replicas[peer]
        if kind == "deliver" and payload is not None:
            sender, datagram = payload
            replica.receive(datagram, sender, self.now)
        elif kind == "tick":
            replica.tick(self.now)
            self._schedule(self.now + self.heartbeat, "tick", peer, None)
        elif kind == "bot":
            self._bot_turn(peer)
        self._lobby(peer)
        self._flush(peer)
        self._check_stall(peer)
        return True

    def _check_stall(self, peer: int) -> None:
        if self.stall_limit is None:
            return
        sync = self.replicas[peer].sync
        delivered = sum(len(log) for log in sync.logs.values())
        last, since = self._progress[peer]
        if delivered != last or not sync.pending or self.faults.disturbed(peer, self.now):
            self._progress[peer] = (delivered, self.now)
            return
        if self.now - since >= self.stall_limit:
            ours = {a.hex()[:8]: n for a, n in sync.vector()}
            parked = {a.hex()[:8]: sorted(q)[:8] for a, q in sync.pending.items()}
            others = [
                {a.hex()[:8]: n for a, n in r.sync.vector()}
                for i, r in enumerate(self.replicas)
                if i != peer
            ]
            raise MeshStalledError(
                f"peer {peer} delivered nothing for {self.now - since:.1f} s at t={self.now:.1f} "
                f"while holding ops it cannot deliver: vector {ours}, parked {parked}, "
                f"the others' vectors {others}"
            )

    def _bot_turn(self, peer: int) -> None:
        replica, bot = self.replicas[peer], self.bots[peer]
        rnd, seat = replica.current_round, replica.seat
        delay = 0.5
        if (
            not self.bots_paused
            and rnd is not None
            and seat is not None
            and rnd.final is None
            and rnd.state.ended_by is None
        ):
            if bot.seat != seat:
                # A player sits at its seat of this round: a bot made for it (it prepares its
                # stock moves for its seat when it is made).
                bot = self.bots[peer] = BotPlayer(bot.level, seat, bot.rng)
            move = bot.act(rnd.state)
            delay = bot.delay(move) * self.pace
            if move is not None:
                result = replica.play(move)
                if isinstance(result, Rejection):
                    self.stats.rejected_intents += 1
        self._schedule(self.now + delay, "bot", peer, None)

    def _lobby(self, peer: int) -> None:
        """What each person does between rounds: join, say ready, and (the host) start."""
        replica = self.replicas[peer]
        if not replica.can_author:
            return  # a restarted peer waits to be shown its own ops
        if not replica.is_member and replica.sync.open_op is not None:
            replica.join()
        if not replica.is_member or replica.role != PLAYER:
            return
        upcoming = replica.upcoming_round()
        if upcoming is None:
            return
        if upcoming not in replica.my_secrets and upcoming <= self.max_rounds:
            replica.ready()
        present = self.players - len(self.vanished & set(range(self.players)))
        if replica.may_start(upcoming, present):
            replica.start()

    max_rounds: int = 1

    def run(self, *, until: float, rounds: int = 1) -> None:
        """Run until `rounds` rounds are final on every peer, or simulated time `until`."""
        self.max_rounds = rounds
        idle = (-1, self.now)  # (ops delivered at every peer, since when)
        next_look = self.now
        while self.now < until and self.step():
            present = [f for i, f in enumerate(self.finals) if i not in self.vanished]
            if all(len(f) >= rounds for f in present) or self._match_over():
                break
            if self.idle_limit is not None and self.now >= next_look:
                next_look = self.now + 1.0  # once a simulated second: counting is not free
                idle = self._check_idle(idle)
        # Let the heartbeats settle so every peer has every op.
        settle = self.now + 10 * self.heartbeat
        while self.now < settle and self.step():
            pass

    def _check_idle(self, idle: tuple[int, float]) -> tuple[int, float]:
        """`idle` (ops delivered at every peer, since when) brought up to now; raises
        `MeshIdleError` past `idle_limit`."""
        held = sum(len(log) for r in self.replicas for log in r.sync.logs.values())
        disturbed = any(self.faults.disturbed(i, self.now) for i in range(len(self.replicas)))
        # A peer that finished: the others may be out of the round for good (an expelled
        # liar never sees it final), and a test may mean to look at that after `until`.
        finished = any(len(f) >= self.max_rounds for f in self.finals)
        if held != idle[0] or disturbed or self.bots_paused or finished:
            return held, self.now
        assert self.idle_limit is not None
        if self.now - idle[1] >= self.idle_limit:
            rounds = [sorted(f) for f in self.finals]
            raise MeshIdleError(
                f"no peer delivered a new op for {self.now - idle[1]:.1f} s at "
                f"t={self.now:.1f} (rounds final at each peer: {rounds}; asked for "
                f"{self.max_rounds}): the table is stuck"
            )
        return idle

    def _match_over(self) -> bool:
        return all(
            f and max(f.values(), key=lambda e: e.round).match_winner is not None
            for i, f in enumerate(self.finals)
            if i not in self.vanished
        )

    def add_spectator(self, name: str = "late") -> TableReplica:
        """A spectator who arrives now: it asks the host for the table and catches up."""
        index = len(self.replicas)
        key = SigningKeyPair(hashlib.sha256(f"key/{self.seed}/{name}".encode()).digest())
        host = self.replicas[0]
        replica = TableReplica.joining(
            key,
            host.sync.table,
            name=name,
            role=SPECTATOR,
            randomness=seeded_bytes(f"{self.seed}/{name}"),
            heartbeat_interval=self.heartbeat,
        )
        replica.request_table(host.me, 0, self.now)
        self.replicas.append(replica)
        self.events.append([])
        self.finals.append({})
        self._progress.append((0, self.now))
        self._schedule(self.now, "tick", index, None)
        self._flush(index)
        return replica

    def vanish(self, peer: int) -> None:
        """The peer goes silent for good (no LEAVE): nothing in, nothing out."""
        self.vanished.add(peer)

    def restart(
        self, peer: int, *, stored: bool = False, held: bool = False, lost: int = 0
    ) -> TableReplica:
        """The peer's process dies and starts again with the same key: without its log
        (`stored=False`, it must wait to be shown its own ops), or rebuilt from what its
        store kept: the ops it authored and its clock, as the node's store keeps them
        (DESIGN.md 4), and with `held` every op it held too. `lost`: its last ops of its
        own that the store lost with the machine (written but not fsynced; the clock lease
        is fsynced and survives). What was on its way to it dies with its socket. Its bot
        keeps playing the same seat."""
        old = self.replicas[peer]
        key = old.sync.key
        randomness = seeded_bytes(f"{self.seed}/{peer}/restart")
        self._queue = [e for e in self._queue if not (e[2] == "deliver" and e[3] == peer)]
        heapq.heapify(self._queue)
        if stored:
            own = old.sync.logs.get(old.me, [])
            logs = old.sync.logs.values() if held else [own]
            gone = {op.hash for op in own[len(own) - lost :]} if lost else set()
            kept = [op.datagram() for log in logs for op in log if op.hash not in gone]
            replica = TableReplica.restore(
                key,
                old.sync.table,
                kept,
                name=old.name,
                role=old.role,
                randomness=randomness,
                heartbeat_interval=self.heartbeat,
                clock=old.sync.clock.value,  # the store keeps the clock (DESIGN.md 4)
            )
        else:
            replica = TableReplica.joining(
                key,
                old.sync.table,
                name=old.name,
                role=old.role,
                randomness=randomness,
                heartbeat_interval=self.heartbeat,
                restarting=True,
            )
            ask = next(i for i in range(len(self.replicas)) if i != peer and i not in self.vanished)
            replica.request_table(self.replicas[0].me, ask, self.now)
        self.replicas[peer] = replica
        self.vanished.discard(peer)
        self._progress[peer] = (-1, self.now)
        self._flush(peer)
        return replica

    def run_for(self, seconds: float) -> None:
        end = self.now + seconds
        while self.now < end and self.step():
            pass

    # --- what tests look at --------------------------------------------------------------

    def state_hashes(self) -> list[str]:
        out = []
        for replica in self.replicas:
            rnd = replica.current_round
            out.append(state_hash(rnd.state) if rnd else "")
        return out

    def stable_hashes(self) -> list[str]:
        out = []
        for replica in self.replicas:
            rnd = replica.current_round
            out.append(state_hash(rnd.stable_state) if rnd else "")
        return out

    def divergences(self) -> int:
        return sum(isinstance(e, Divergence) for events in self.events for e in events)
