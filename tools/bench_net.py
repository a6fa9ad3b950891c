"""Network benchmarks (`nerts-p2p bench net`). Measurements, not tests: medians of repeated
runs with their spread, compared as ratios within one run. Everything binds to 127.0.0.1.

- move latency: four player nodes, each on its own UDP socket on loopback (in one process,
  one trio loop), bots at full speed; for every MOVE, the time from its authoring at one node
  to its folding at each other node; p50 and p99 per round. Beside it the floor measured in
  the same run: one op-sized datagram signed, sent over loopback UDP, received and verified.
- announce to browse: a browser is listening; the time from registering a table's mDNS
  announcement to the browser resolving it.
- spectator catch-up: a fresh spectator's replica takes a whole 4-seat round's log through
  the receive gate and folds it, against verifying those ops' signatures alone.
"""

from __future__ import annotations

import random
import socket
import statistics
import time
from collections.abc import Hashable

import trio

from nerts_p2p.game.bots import EXPERT, BotPlayer
from nerts_p2p.game.rules import Rules
from nerts_p2p.net.autopilot import Autopilot
from nerts_p2p.net.discovery import TableAd, TableAnnouncer, TableBrowser
from nerts_p2p.net.node import TableNode
from nerts_p2p.net.transport import open_udp_transport
from nerts_p2p.table.replica import TableReplica
from protocol.codec import pack
from protocol.envelope import PROTOCOL_VERSION
from protocol.messages import PLAYER, SPECTATOR, Kind, Op
from protocol.signing import SigningKeyPair, generate_signing_key, sign, verify
from tools.bench_engine import summary
from tools.mesh import PeerMesh, seeded_bytes

LOOPBACK = "127.0.0.1"


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# --- move latency -------------------------------------------------------------------------


async def _latency_round(seed: int) -> list[float]:
    """Seconds from authoring to folding, for every MOVE at every other node."""
    rules = Rules(seats=4, nerts_size=13)
    host = TableReplica.open_table(
        generate_signing_key(),
        name="bench",
        rules=rules,
        spectators=True,
        randomness=seeded_bytes(f"bench/{seed}/0"),
    )
    replicas = [host] + [
        TableReplica.joining(
            generate_signing_key(),
            host.sync.table,
            name=f"p{i}",
            role=PLAYER,
            randomness=seeded_bytes(f"bench/{seed}/{i}"),
        )
        for i in range(1, 4)
    ]
    authored: dict[tuple[bytes, int], float] = {}
    latencies: list[float] = []
    for replica in replicas:
        _time_folding(replica, authored, latencies)
    host_transport = await open_udp_transport(LOOPBACK)
    nodes = [TableNode(host, host_transport)]
    for replica in replicas[1:]:
        nodes.append(
            TableNode(
                replica,
                await open_udp_transport(LOOPBACK),
                bootstrap=host_transport.address,
                table_host=host.me,
            )
        )
    pilots = [
        Autopilot(
            node,
            BotPlayer(EXPERT, -1, random.Random(f"{seed}/{i}")),
            max_rounds=1,
            pace=0.05,
        )
        for i, node in enumerate(nodes)
    ]
    async with trio.open_nursery() as nursery:
        for node in nodes:
            await nursery.start(node.run)
            node.events.close()
        with trio.move_on_after(300):
            async with trio.open_nursery() as playing:
                for pilot in pilots:
                    playing.start_soon(pilot.run)
        nursery.cancel_scope.cancel()
    for node in nodes:
        node.transport.close()
    return latencies


def _time_folding(
    replica: TableReplica, authored: dict[tuple[bytes, int], float], latencies: list[float]
) -> None:
    """Wrap this replica's receive and play (on the instance, for the benchmark only) to
    timestamp each MOVE when authored and when folded."""
    sync = replica.sync
    receive, play = replica.receive, replica.play

    def timed_play(move: object) -> object:
        result = play(move)  # type: ignore[arg-type]
        if isinstance(result, Op):
            authored[(result.author, result.seq)] = time.perf_counter()
        return result

    def timed_receive(datagram: bytes, source: Hashable, now: float) -> None:
        before = {author: len(log) for author, log in sync.logs.items()}
        receive(datagram, source, now)
        folded = time.perf_counter()
        for author, log in sync.logs.items():
            for op in log[before.get(author, 0) :]:
                start = authored.get((author, op.seq))
                if op.kind == Kind.MOVE and start is not None and author != sync.me:
                    latencies.append(folded - start)

    replica.play = timed_play  # type: ignore[method-assign,assignment]
    replica.receive = timed_receive  # type: ignore[method-assign]


def _floor(samples: int = 2000) -> list[float]:
    """One op-sized datagram: signed, through loopback UDP, received, verified."""
    key = SigningKeyPair(bytes(range(32)))
    body = pack([1, bytes(8), key.key_id, 7, bytes(16), 123, 1, [5, 5, 5, 5], "0 5H n-w2 +7C"])
    out: list[float] = []
    with (
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as rx,
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as tx,
    ):
        rx.bind((LOOPBACK, 0))
        address = rx.getsockname()
        for _ in range(samples):
            start = time.perf_counter()
            tx.sendto(pack([PROTOCOL_VERSION, body, sign(key, body)]), address)
            data = rx.recv(2048)
            verify(key.public_key, body, data[-64:])
            out.append(time.perf_counter() - start)
    return out


def latency_benchmarks(repeats: int) -> dict[str, dict[str, float]]:
    p50s, p99s, floors, moves = [], [], [], []
    for seed in range(repeats):
        latencies = trio.run(_latency_round, seed)
        floor = _floor()
        p50s.append(_percentile(latencies, 0.5) * 1000)
        p99s.append(_percentile(latencies, 0.99) * 1000)
        floors.append(statistics.median(floor) * 1000)
        moves.append(float(len(latencies)))
    ratio = [p / f for p, f in zip(p50s, floors, strict=True)]
    return {
        "move latency p50 (ms)": summary(p50s),
        "move latency p99 (ms)": summary(p99s),
        "floor: UDP+sign+verify (ms)": summary(floors),
        "p50 / floor (x)": summary(ratio),
        "moves timed per round": summary(moves),
    }


# --- announce to browse -------------------------------------------------------------------


async def _announce_to_browse(index: int) -> float:
    ad = TableAd(
        f"bench{index}-{random.randrange(10**6)}",
        (LOOPBACK, 40000 + index),
        PROTOCOL_VERSION,
        random.randbytes(8),
        bytes(8),
        1,
        4,
        "lobby",
        False,
        True,
    )
    async with TableBrowser(LOOPBACK) as browser:
        announcer = TableAnnouncer(LOOPBACK, ad)
        start = trio.current_time()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(announcer.open)
            found = await browser.wait_for(ad.name, 30)
        seen = trio.current_time() - start
        await announcer.aclose()
    assert found is not None, "the browser never saw the table"
    return seen


def announce_benchmarks(repeats: int) -> dict[str, dict[str, float]]:
    return {
        "announce to browse (s)": summary(
            [trio.run(_announce_to_browse, i) for i in range(repeats)]
        )
    }


# --- spectator catch-up -------------------------------------------------------------------


def catch_up_benchmarks(repeats: int) -> dict[str, dict[str, float]]:
    # The longest of a few recorded rounds: catch-up matters most for long logs.
    meshes = []
    for seed in range(1, 6):
        mesh = PeerMesh(players=4, rules=Rules(seats=4), seed=seed)
        mesh.run(until=1200, rounds=1)
        meshes.append(mesh)
    host = max(meshes, key=lambda m: sum(map(len, m.replicas[0].sync.logs.values()))).replicas[0]
    ops = sorted(
        (op for log in host.sync.logs.values() for op in log),
        key=lambda op: (op.lamport, op.author),
    )
    datagrams = [op.datagram() for op in ops]
    keys = host.sync.keys
    catch_up, verify_only = [], []
    for i in range(repeats):
        start = time.perf_counter()
        for op in ops:
            verify(keys[op.author], op.body, op.signature)
        verify_only.append(time.perf_counter() - start)
        watcher = TableReplica.joining(
            SigningKeyPair(bytes([i + 1]) * 32),
            host.sync.table,
            name="late",
            role=SPECTATOR,
            randomness=seeded_bytes("late"),
        )
        start = time.perf_counter()
        for n, datagram in enumerate(datagrams):
            watcher.receive(datagram, ("bench", 0), n * 0.001)
        catch_up.append(time.perf_counter() - start)
        assert watcher.sync.vector() == host.sync.vector(), "the spectator did not catch up"
    ratios = [c / v for c, v in zip(catch_up, verify_only, strict=True)]
    return {
        f"catch-up of a 4-seat round, {len(ops)} ops (ms)": summary([c * 1000 for c in catch_up]),
        "verifying those ops alone (ms)": summary([v * 1000 for v in verify_only]),
        "catch-up / verify (x)": summary(ratios),
    }


def net_benchmarks(repeats: int = 3) -> dict[str, dict[str, float]]:
    return {
        **latency_benchmarks(repeats),
        **announce_benchmarks(repeats),
        **catch_up_benchmarks(max(repeats, 5)),
    }
