"""One player process of `nerts-p2p bench net`'s move latency: a node on 127.0.0.1 with a bot
at its seat, for one round. Run by `tools.bench_net`, not by hand:

    python -m tools.bench_net_peer --seed 0 --index 0                      # the host
    python -m tools.bench_net_peer --seed 0 --index 1 --bootstrap PORT --table HEX --host-key HEX

    python -m tools.bench_net_peer --seed 1 --serve    # a finished round, for catch-up

The host prints one JSON line with its port, table id and key id as soon as it listens. At the
end every process prints one JSON line: when each of its MOVEs was authored (when its signing
began, and when the play returned, folded here), and when each other player's MOVE was folded
here, on the machine's monotonic clock (CLOCK_MONOTONIC is one
clock for every process, so the parent subtracts times taken in different processes).

Each player keeps its store as a real player does (`nerts_p2p.net.store`, in a temporary data
directory): every op it authors is written to the store before it is sent (fsynced for the
records the store says, not for own ops), and that is part of the latency a player sees
(`--no-store` leaves it out, to see what it costs).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import random
import socket
import struct
import sys
import tempfile
import time
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

import msgpack
import trio

from nerts_p2p.game.bots import EXPERT, BotPlayer
from nerts_p2p.game.rules import Rules
from nerts_p2p.net.autopilot import Autopilot
from nerts_p2p.net.node import TableNode
from nerts_p2p.net.store import TableStore
from nerts_p2p.net.transport import RECEIVE_BUFFER, Address, UdpTransport, open_udp_transport
from nerts_p2p.table.replica import TableReplica
from protocol.messages import PLAYER, Kind, Op
from protocol.signing import SigningKeyPair, verify
from tools.mesh import PeerMesh, seeded_bytes

LOOPBACK = "127.0.0.1"
#: After our round is final here, stay this long: the others may still need our heartbeats
#: for their own finality (a peer that vanishes is voted out only after seconds of silence).
LINGER = 3.0


def monotonic() -> float:
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def _key(seed: int, index: int) -> SigningKeyPair:
    return SigningKeyPair(bytes([index + 1]) * 16 + seed.to_bytes(16, "big"))


async def run_peer(args: argparse.Namespace) -> dict[str, list[list[object]]]:
    seed, index = args.seed, args.index
    randomness = seeded_bytes(f"bench-net/{seed}/{index}")
    if args.bootstrap is None:
        replica = TableReplica.open_table(
            _key(seed, index),
            name="bench",
            rules=Rules(seats=args.players, nerts_size=13),
            spectators=True,
            randomness=randomness,
        )
    else:
        replica = TableReplica.joining(
            _key(seed, index),
            bytes.fromhex(args.table),
            name=f"p{index}",
            role=PLAYER,
            randomness=randomness,
        )
    started = monotonic()
    authored: list[list[object]] = []
    folded: list[list[object]] = []
    transport = await open_udp_transport(LOOPBACK)
    tracer = Tracer(transport) if args.trace else None
    profile = cProfile.Profile() if args.profile else None
    if tracer is not None and args.stages:
        tracer.wrap_stages(replica)  # first: `_time_moves` wraps what this wraps
    _time_moves(replica, authored, folded, tracer, profile)
    data_dir = None if args.no_store else tempfile.TemporaryDirectory(prefix="bench-net-")
    store = None if data_dir is None else TableStore.open(Path(data_dir.name), replica.sync.table)
    node = TableNode(
        replica,
        transport,
        bootstrap=None if args.bootstrap is None else (LOOPBACK, args.bootstrap),
        table_host=None if args.host_key is None else bytes.fromhex(args.host_key),
        store=store,
    )
    if args.bootstrap is None:
        hello = {"port": transport.address[1], "table": replica.sync.table.hex()}
        print(json.dumps({**hello, "host_key": replica.me.hex()}), flush=True)
    pilot = Autopilot(
        node, BotPlayer(EXPERT, -1, random.Random(f"{seed}/{index}")), max_rounds=1, pace=args.pace
    )
    if tracer is not None:
        tracer.wrap_work(node, pilot)
        trio.lowlevel.add_instrument(tracer)
    async with trio.open_nursery() as nursery:
        await nursery.start(node.run)
        node.events.close()
        with trio.move_on_after(args.timeout):
            await pilot.run()
        await trio.sleep(LINGER)
        nursery.cancel_scope.cancel()
    transport.close()
    if data_dir is not None:
        data_dir.cleanup()
    if profile is not None:
        profile.dump_stats(f"{args.profile}.{index}")
    result: dict[str, Any] = {
        "authored": authored,
        "folded": folded,
        "cpu_s": [[time.process_time(), monotonic() - started]],
        "datagrams": [[node.stats.datagrams_in, node.stats.datagrams_out]],
        # what this player authored, and what its store holds of it (None: no store)
        "own_ops": len(replica.sync.logs.get(replica.me, [])),
        "stored_ops": None if store is None else len(store.own_ops),
    }
    if tracer is not None:
        trio.lowlevel.remove_instrument(tracer)
        result["trace"] = tracer.report()
    return result


#: SO_TIMESTAMPNS on Linux (the socket module does not name it): the kernel's receive time
#: of each datagram, on CLOCK_REALTIME, as ancillary data of `recvmsg`.
SO_TIMESTAMPNS = 35


class Tracer(trio.abc.Instrument):
    """`tools.bench_net_trace`'s notes in one player process: when each datagram reached the
    socket (the kernel's timestamp) and when the node read it, when trio slept in
    `epoll_wait`, and the spans of the process's own work (datagrams, ticks, intents, its
    bot, garbage collection). Installed on the transport before the node is made (the node
    takes the transport's `receive_now` when it is made)."""

    def __init__(self, transport: UdpTransport) -> None:
        raw = transport._raw
        assert raw is not None
        raw.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.raw = raw
        # CLOCK_REALTIME - CLOCK_MONOTONIC, the smallest of a few readings (the tightest).
        self.offset = min(time.time() - monotonic() for _ in range(50))
        #: (kernel arrival, read) of the datagram the node is taking now
        self.last: tuple[float, float] = (0.0, 0.0)
        self.io_waits: list[list[float]] = []
        #: per MOVE folded here: author, seq, folded, receive's time, arrival, read, receive
        #: start, and whether it came in its own datagram (not in a relay or parked)
        self.moves: list[list[object]] = []
        #: stage -> seconds, within the receive being timed now (`stage`)
        self.stages: dict[str, float] = {}
        #: per MOVE folded here in its own datagram: its receive's stages, and its CPU time
        self.move_stages: list[dict[str, float]] = []
        #: per MOVE of ours: the parts of its play (`stage`), until the play returned
        self.author_stages: list[dict[str, float]] = []
        self.spans: list[list[object]] = []
        self._wait_start = 0.0
        self._gc_start = 0.0
        transport.receive = self.receive  # type: ignore[method-assign]
        transport.receive_now = self.receive_now  # type: ignore[method-assign]

    def _read(self) -> tuple[bytes, Address]:
        data, ancillary, _, source = self.raw.recvmsg(RECEIVE_BUFFER, 64)
        read = monotonic()
        arrival = read
        for level, kind, value in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                seconds, nanoseconds = struct.unpack("qq", value[:16])
                arrival = seconds + nanoseconds * 1e-9 - self.offset
        self.last = (arrival, read)
        return data, (str(source[0]), int(source[1]))

    async def receive(self) -> tuple[bytes, Address]:
        while True:
            try:
                return self._read()
            except BlockingIOError:
                await trio.lowlevel.wait_readable(self.raw)
            except ConnectionError:
                continue

    def receive_now(self) -> tuple[bytes, Address] | None:
        while True:
            try:
                return self._read()
            except BlockingIOError:
                return None
            except ConnectionError:
                continue

    def before_io_wait(self, timeout: float) -> None:
        self._wait_start = monotonic()

    def after_io_wait(self, timeout: float) -> None:
        self.io_waits.append([self._wait_start, monotonic()])

    def span(self, kind: str, work: Callable[..., Any]) -> Callable[..., Any]:
        spans = self.spans

        def timed(*args: Any) -> Any:
            start = monotonic()
            try:
                return work(*args)
            finally:
                spans.append([kind, start, monotonic()])

        return timed

    def stage(self, name: str, work: Callable[..., Any]) -> Callable[..., Any]:
        """`work`, its time added to this receive's stage `name`."""

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return work(*args, **kwargs)
            finally:
                stages = self.stages
                stages[name] = stages.get(name, 0.0) + time.perf_counter() - start

        return timed

    def wrap_stages(self, replica: TableReplica) -> None:
        """Time the parts of a receive (module functions patched in this process only)."""
        import nerts_p2p.table.round_finish as round_finish
        import nerts_p2p.table.stability as stability
        import protocol.sync as sync_module
        import protocol.sync_checks as sync_checks
        import protocol.sync_delivery as sync_delivery
        import protocol.sync_heartbeats as sync_heartbeats
        import protocol.sync_vouchers as sync_vouchers

        sync_module.decode = self.stage("decode", sync_module.decode)  # type: ignore[attr-defined]
        sync_vouchers.verify = self.stage("verify", sync_vouchers.verify)  # type: ignore[attr-defined]
        sync_module.verify = self.stage("verify", sync_module.verify)  # type: ignore[attr-defined]
        sync_delivery.deliver_ready = self.stage("deliver", sync_delivery.deliver_ready)
        sync_heartbeats.on_heartbeat = self.stage("heartbeat", sync_heartbeats.on_heartbeat)
        # our own moves' parts (`author_stages`)
        sync_module.seal_op = self.stage("sign", sync_module.seal_op)  # type: ignore[attr-defined]
        sync_checks.problem = self.stage("checks", sync_checks.problem)
        sync_delivery.deliver = self.stage("deliver one", sync_delivery.deliver)
        replica.sync.receive = self.stage("sync.receive", replica.sync.receive)  # type: ignore[method-assign]
        replica._after_sync = self.stage("after_sync", replica._after_sync)  # type: ignore[method-assign]
        replica._on_delivered = self.stage("fold", replica._on_delivered)  # type: ignore[method-assign]
        replica._refold = self.stage("refold", replica._refold)  # type: ignore[method-assign]
        stability.note_stability = self.stage("stability", stability.note_stability)
        round_finish.progress = self.stage("progress", round_finish.progress)
        replica.sync.set_state_hash = self.stage("set_state_hash", replica.sync.set_state_hash)  # type: ignore[method-assign]

    def wrap_work(self, node: TableNode, pilot: Autopilot) -> None:
        if node.replica.on_signed is not None:
            node.replica.on_signed = self.stage("send", node.replica.on_signed)
        node._take = self.span("datagram", node._take)  # type: ignore[method-assign]
        node.apply_intent = self.span("own op", node.apply_intent)  # type: ignore[method-assign]
        node.replica.tick = self.span("tick", node.replica.tick)  # type: ignore[method-assign]
        pilot.step = self.span("bot", pilot.step)  # type: ignore[method-assign]
        gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_start = monotonic()
        else:
            self.spans.append([f"gc{info['generation']}", self._gc_start, monotonic()])

    def report(self) -> dict[str, Any]:
        gc.callbacks.remove(self._on_gc)
        return {
            "io_waits": self.io_waits,
            "spans": self.spans,
            "moves": self.moves,
            "stages": self.move_stages,
            "author stages": self.author_stages,
        }


def _time_moves(
    replica: TableReplica,
    authored: list[list[object]],
    folded: list[list[object]],
    tracer: Tracer | None = None,
    profile: cProfile.Profile | None = None,
) -> None:
    """Wrap this replica's play and receive (on the instance, for the benchmark only) to note
    when each MOVE is authored here, and when each other author's MOVE is folded here (and,
    traced, when the datagram that brought it reached the socket and was read)."""
    sync = replica.sync
    receive, play, author = replica.receive, replica.play, sync.author
    signing: list[float] = []

    def timed_author(kind: Kind, epoch: int, payload: object) -> Op:
        signing.append(monotonic())  # authoring starts: the op is made and signed
        return author(kind, epoch, payload)

    def timed_play(move: object) -> object:
        signing.clear()
        if tracer is not None:
            tracer.stages = {}
        result = play(move)  # type: ignore[arg-type]
        if tracer is not None and isinstance(result, Op):
            tracer.stages["play"] = monotonic() - signing[0]
            tracer.author_stages.append(tracer.stages)
        if isinstance(result, Op) and signing:
            # when signing began, and when the play returned (signed and folded here, the
            # start of the latency as measured before)
            authored.append([result.author.hex(), result.seq, signing[0], monotonic()])
        return result

    def timed_receive(datagram: bytes, source: Hashable, now: float) -> None:
        before = {author: len(log) for author, log in sync.logs.items()}
        if tracer is not None:
            tracer.stages = {}
            cpu = time.thread_time()
        start = monotonic()
        if profile is not None:
            profile.enable()
            receive(datagram, source, now)
            profile.disable()
        else:
            receive(datagram, source, now)
        done = monotonic()
        for author, log in sync.logs.items():
            if author == sync.me:
                continue
            for op in log[before.get(author, 0) :]:
                if op.kind == Kind.MOVE:
                    # the last field: how long this receive took here (gate, delivery, fold)
                    folded.append([author.hex(), op.seq, done, done - start])
                    if tracer is not None:
                        arrival, read = tracer.last
                        own = datagram[-64:] == op.signature  # its own datagram, not a relay
                        if own:
                            tracer.stages["cpu"] = time.thread_time() - cpu
                            tracer.stages["wall"] = done - start
                            tracer.move_stages.append(tracer.stages)
                        tracer.moves.append(
                            [author.hex(), op.seq, done, done - start, arrival, read, start, own]
                        )

    replica.play = timed_play  # type: ignore[method-assign,assignment]
    sync.author = timed_author  # type: ignore[method-assign]
    replica.receive = timed_receive  # type: ignore[method-assign]


async def serve_round(seed: int) -> None:
    """Serve a whole recorded 4-seat round (`PeerMesh`, seed `seed`): its four players, each
    a node on a UDP socket of its own, for a late spectator to catch up from; until killed."""
    mesh = PeerMesh(players=4, rules=Rules(seats=4), seed=seed)
    mesh.run(until=1200, rounds=1)
    nodes = [TableNode(r, await open_udp_transport(LOOPBACK)) for r in mesh.replicas]
    for node in nodes:
        # They met in the mesh, not on these sockets: tell each where the others are.
        for other in nodes:
            if other is not node:
                node.gossiped[other.replica.me] = other.address
    host = mesh.replicas[0]
    ops = sum(len(log) for log in host.sync.logs.values())
    print(
        json.dumps(
            {
                "port": nodes[0].address[1],
                "table": host.sync.table.hex(),
                "host_key": host.me.hex(),
                "vector": [[a.hex(), n] for a, n in host.sync.vector()],
                "ops": ops,
            }
        ),
        flush=True,
    )
    async with trio.open_nursery() as nursery:
        for node in nodes:
            await nursery.start(node.run)
            node.events.close()


def floor_receiver(samples: int) -> None:
    """The receiving half of `tools.bench_net`'s floor: the least a receiver does with an op
    (take the datagram when the kernel wakes it, verify its signature), in a process of its
    own, blocked in `recv` between datagrams as a player's process sleeps between moves. Prints
    its port, then, after `samples` datagrams, when each was verified (monotonic clock)."""
    key = SigningKeyPair(bytes(range(32)))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as rx:
        rx.bind((LOOPBACK, 0))
        print(json.dumps({"port": rx.getsockname()[1]}), flush=True)
        done: dict[int, float] = {}
        while len(done) < samples:
            data = rx.recv(2048)
            _, body, signature = msgpack.unpackb(data)
            verify(key.public_key, body, signature)
            done[msgpack.unpackb(body)[3]] = monotonic()  # the sample's number, as an op's seq
    print(json.dumps(sorted(done.items())), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--index", type=int, default=0)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--bootstrap", type=int, help="the host's UDP port on 127.0.0.1")
    parser.add_argument("--table", help="the table id (hex)")
    parser.add_argument("--host-key", help="the host's key id (hex)")
    parser.add_argument("--pace", type=float, default=0.05)
    parser.add_argument("--timeout", type=float, default=240.0)
    parser.add_argument("--serve", action="store_true", help="serve a recorded round")
    parser.add_argument(
        "--no-store", action="store_true", help="keep no store (no write before each send)"
    )
    parser.add_argument("--floor", type=int, help="the floor's receiver, for N datagrams")
    parser.add_argument("--trace", action="store_true", help="note stages (bench_net_trace)")
    parser.add_argument("--stages", action="store_true", help="traced: time a receive's parts")
    parser.add_argument("--profile", help="profile each receive into FILE.<index> (cProfile)")
    parser.add_argument(
        "--realtime",
        action="store_true",
        help="run at real-time priority (SCHED_FIFO 5, as root): a quiet host's scheduling on "
        "a busy one, for bench_net_trace",
    )
    args = parser.parse_args()
    if args.realtime:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(5))
    if args.serve:
        trio.run(serve_round, args.seed)
        return
    if args.floor:
        floor_receiver(args.floor)
        return
    result = trio.run(run_peer, args)
    print(json.dumps(result), flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
