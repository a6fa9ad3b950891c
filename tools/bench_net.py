"""Network benchmarks (`nerts-p2p bench net`). Measurements, not tests: medians of repeated
runs with their spread, compared as ratios within one run. Everything binds to 127.0.0.1.

- move latency: four player processes (`tools.bench_net_peer`), each a node on its own UDP
  socket on loopback with an expert bot at its seat at 20 times human pace; for every MOVE,
  the time from its authoring at one process (its signing begins) to its folding at each
  other process; p50 and p99 per round, and the p50 at the first, second and third of a
  move's receivers to fold it (three receivers and the author share two cores here, so
  the later ones wait for a core). Beside it the floor measured in the same run: one
  op-sized datagram signed in one process, sent over loopback UDP to another that sleeps
  until it arrives, and verified there (and, as measured before, the same in one busy loop
  of one process, which wakes nobody). `tools.bench_net_trace` shows where a move's time goes.
- announce to browse: a browser is listening; the time from registering a table's mDNS
  announcement to the browser resolving it; and the time from a browser's start to its
  seeing a table announced before, with another mDNS stack on port 5353 of the machine.
- spectator catch-up: a late spectator joins a table served over loopback UDP (a whole
  4-seat round) and catches up, against decoding and verifying those ops alone; its CPU
  and its wall time. (The same catch-up in one process, replayed from a recorded exchange,
  is `bench sync`'s.)
"""

from __future__ import annotations

import contextlib
import json
import random
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import trio

from nerts_p2p.game.rules import Rules
from nerts_p2p.net.autopilot import Autopilot
from nerts_p2p.net.discovery import TableAd, TableAnnouncer, TableBrowser, _open_zeroconf
from nerts_p2p.net.node import TableNode
from nerts_p2p.net.transport import open_udp_transport
from nerts_p2p.table.replica import TableReplica
from protocol.admission import MAX_SPECTATORS
from protocol.codec import pack
from protocol.envelope import PROTOCOL_VERSION
from protocol.messages import SPECTATOR
from protocol.signing import SigningKeyPair, sign, verify
from tools.bench_engine import summary
from tools.bench_sync import verify_alone
from tools.mesh import PeerMesh, seeded_bytes
from tools.progress import SILENT, ProgressLine

LOOPBACK = "127.0.0.1"
#: A move's three receivers, by the order they fold it.
RANKS = ("first", "second", "third")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# --- move latency -------------------------------------------------------------------------


def _latency_round(seed: int, players: int = 4) -> list[tuple[float, float, float, int]]:
    """Seconds from authoring (the author begins to sign the op) to folding, for every MOVE
    at every other player; each with the seconds from the author's play returning (the op
    signed, folded there and about to be sent: where this latency started before), the
    seconds the receiving process spent in the receive that folded it, and the receiver's
    rank (0: the first of the move's receivers to fold it). Each player is a process of its
    own (`tools.bench_net_peer`), as on a real LAN; the times are on the machine's
    monotonic clock, which every process shares."""
    return _timed_folds(_run_players(seed, players))


def _timed_folds(results: list[Any]) -> list[tuple[float, float, float, int]]:
    """`_latency_round`'s figures from its player processes' results."""
    authored = {
        (a, q): (signing, played) for r in results for a, q, signing, played in r["authored"]
    }
    folds = sorted(
        (t, a, q, spent) for r in results for a, q, t, spent in r["folded"] if (a, q) in authored
    )
    ranks: dict[tuple[str, int], int] = {}
    timed = []
    for t, a, q, spent in folds:
        rank = ranks.get((a, q), 0)
        ranks[(a, q)] = rank + 1
        timed.append((t - authored[(a, q)][0], t - authored[(a, q)][1], spent, rank))
    return timed


def _run_players(seed: int, players: int, extra: list[str] | None = None) -> list[Any]:
    """Play one round with `players` player processes; each process's JSON result."""
    command = [sys.executable, "-m", "tools.bench_net_peer", "--seed", str(seed)]
    command += ["--players", str(players), *(extra or [])]
    root = Path(__file__).resolve().parent.parent
    # Each player in a session of its own, as if started from its own terminal (on Linux
    # each session is a CPU-scheduling group of its own: four players in one session would
    # share one player's CPU share on a busy machine).
    host = subprocess.Popen(
        [*command, "--index", "0"],
        stdout=subprocess.PIPE,
        cwd=root,
        text=True,
        start_new_session=True,
    )
    assert host.stdout is not None
    hello = json.loads(host.stdout.readline())
    joiners = [
        subprocess.Popen(
            [
                *command,
                "--index",
                str(i),
                "--bootstrap",
                str(hello["port"]),
                "--table",
                hello["table"],
                "--host-key",
                hello["host_key"],
            ],
            stdout=subprocess.PIPE,
            cwd=root,
            text=True,
            start_new_session=True,
        )
        for i in range(1, players)
    ]
    results = []
    for process in [host, *joiners]:
        out, _ = process.communicate(timeout=600)
        if process.returncode != 0:
            raise RuntimeError(f"a bench player exited with code {process.returncode}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def _floor_body(key: SigningKeyPair, number: int) -> bytes:
    """An op-sized body (a MOVE's fields), numbered in its seq field."""
    return pack([1, bytes(8), key.key_id, number, bytes(16), 123, 1, [5, 5, 5, 5], "0 5H n-w2 +7C"])


def _floor(samples: int = 2000) -> list[float]:
    """One op-sized datagram: signed, sent over loopback UDP, received and verified, all in
    one process: the receive finds the datagram already there (no receiver is woken)."""
    key = SigningKeyPair(bytes(range(32)))
    body = _floor_body(key, 7)
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


def _woken_floor(samples: int = 500, realtime: bool = False) -> list[float]:
    """The floor as the players meet it: an op-sized datagram signed here, sent over loopback
    UDP to another process that sleeps in `recv` until the kernel wakes it, and verified
    there; seconds from before the signature to after the verification. A player's process
    sleeps between datagrams too: the wake-up is part of any one-way datagram between two
    processes, which the one-process floor (`_floor`) leaves out. Sent 3-8 ms apart (a
    player's process takes a datagram every 5-6 ms in the latency round: 4 bots' moves and
    heartbeats), so every datagram finds the receiver asleep, as a player's does."""
    key = SigningKeyPair(bytes(range(32)))
    command = [sys.executable, "-m", "tools.bench_net_peer", "--floor", str(samples)]
    receiver = subprocess.Popen(
        [*command, *(["--realtime"] if realtime else [])],
        stdout=subprocess.PIPE,
        cwd=Path(__file__).resolve().parent.parent,
        text=True,
        start_new_session=True,
    )
    try:
        assert receiver.stdout is not None
        address = (LOOPBACK, json.loads(receiver.stdout.readline())["port"])
        jitter = random.Random(0)
        sent: dict[int, float] = {}
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as tx:
            for number in range(samples):
                time.sleep(0.003 + 0.005 * jitter.random())
                start = time.clock_gettime(time.CLOCK_MONOTONIC)
                body = _floor_body(key, number)
                tx.sendto(pack([PROTOCOL_VERSION, body, sign(key, body)]), address)
                sent[number] = start
        out, _ = receiver.communicate(timeout=60)
    finally:
        receiver.kill()
        receiver.wait()
    done = json.loads(out.strip().splitlines()[-1])
    return [at - sent[number] for number, at in done]


def latency_benchmarks(
    repeats: int, progress: ProgressLine = SILENT
) -> dict[str, dict[str, float]]:
    p50s, p99s, floors, hot_floors, moves, receives = [], [], [], [], [], []
    played_p50s: list[float] = []
    by_rank: list[list[float]] = [[] for _ in RANKS]
    for seed in range(repeats):
        timed = _latency_round(seed)
        latencies = [latency for latency, _, _, _ in timed]
        p50s.append(_percentile(latencies, 0.5) * 1000)
        p99s.append(_percentile(latencies, 0.99) * 1000)
        played_p50s.append(_percentile([played for _, played, _, _ in timed], 0.5) * 1000)
        for rank, p50s_of_rank in enumerate(by_rank):
            of_rank = [latency for latency, _, _, r in timed if r == rank]
            p50s_of_rank.append(_percentile(of_rank, 0.5) * 1000)
        floors.append(statistics.median(_woken_floor()) * 1000)
        hot_floors.append(statistics.median(_floor()) * 1000)
        moves.append(float(len(latencies)))
        receives.append(statistics.median(spent for _, _, spent, _ in timed) * 1000)
        progress.step(f"move latency: round {seed + 1} of {repeats}")
    ratio = [p / f for p, f in zip(p50s, floors, strict=True)]
    hot_ratio = [p / f for p, f in zip(p50s, hot_floors, strict=True)]
    return {
        "move latency p50 (ms)": summary(p50s),
        "move latency p99 (ms)": summary(p99s),
        "floor: sign, UDP to a sleeping process, verify (ms)": summary(floors),
        "p50 / floor (x)": summary(ratio),
        # The floor as measured before: sign, send, receive and verify in one busy loop of
        # one process (no receiver to wake, caches hot): kept to compare with older figures.
        "one-process floor: sign+UDP+verify in a loop (ms)": summary(hot_floors),
        "p50 / one-process floor (x)": summary(hot_ratio),
        # From the author's play returning (signed, folded there), as measured before.
        "move latency from the author's play returning, p50 (ms)": summary(played_p50s),
        # where the time goes: the receiving process's own work for a move, p50 (wall)
        "receive that folds a move, p50 (ms)": summary(receives),
        # The p50 above is over every receiver of every move. Three receivers and the author
        # share two cores here: the first receiver to fold a move gets a core at once, the
        # others wait for one, so the p50 is mostly the second's.
        **{
            f"move latency p50 at the {RANKS[rank]} receiver to fold it (ms)": summary(values)
            for rank, values in enumerate(by_rank)
        },
        "moves timed per round": summary(moves),
    }


# --- announce to browse -------------------------------------------------------------------


def _bench_ad(index: int) -> TableAd:
    return TableAd(
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


async def _announce_to_browse(index: int) -> float:
    ad = _bench_ad(index)
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


async def _browse_announced(index: int) -> float:
    """Seconds from a browser's start to its seeing a table announced before it started
    (`list`, `join`, the window's table list), with one more mDNS stack on 5353 of this
    machine (another peer, an mDNS daemon), as on most machines that play."""
    ad = _bench_ad(index)
    other = _open_zeroconf(LOOPBACK)  # on loopback only, as every zeroconf here
    announcer = TableAnnouncer(LOOPBACK, ad)
    try:
        await announcer.open()
        start = trio.current_time()
        async with TableBrowser(LOOPBACK) as browser:
            found = await browser.wait_for(ad.name, 30)
        seen = trio.current_time() - start
    finally:
        await announcer.aclose()
        other.close()
    assert found is not None, "the browser never saw the table"
    return seen


def announce_benchmarks(
    repeats: int, progress: ProgressLine = SILENT
) -> dict[str, dict[str, float]]:
    def timed(measure: Callable[[int], Awaitable[float]], what: str) -> list[float]:
        out = []
        for i in range(repeats):
            out.append(trio.run(measure, i))
            progress.step(f"{what} {i + 1} of {repeats}")
        return out

    return {
        "announce to browse (s)": summary(timed(_announce_to_browse, "announce to browse")),
        "browse of a table announced before, another mDNS stack beside (s)": summary(
            timed(_browse_announced, "browse of an announced table")
        ),
    }


# --- spectator catch-up -------------------------------------------------------------------


async def _udp_catch_up(hello: dict[str, Any], index: int) -> tuple[float, float, float]:
    """A late spectator joins the served table over loopback UDP and catches up: seconds
    from its first datagram to holding (and having folded) every op, the CPU seconds this
    process spent until then, and the seconds until the round is final here too (that waits
    for fresh heartbeats of every player: their horizons)."""
    replica = TableReplica.joining(
        SigningKeyPair(seeded_bytes(f"late-key/{index}")(32)),  # one per repeat, any count
        bytes.fromhex(hello["table"]),
        name="late",
        role=SPECTATOR,
        randomness=seeded_bytes(f"late/{index}"),
    )
    wanted = {bytes.fromhex(a): n for a, n in hello["vector"]}
    transport = await open_udp_transport(LOOPBACK)
    node = TableNode(
        replica,
        transport,
        bootstrap=(LOOPBACK, hello["port"]),
        table_host=bytes.fromhex(hello["host_key"]),
    )
    pilot = Autopilot(node, None)
    cpu = time.process_time()
    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        await nursery.start(node.run)
        node.events.close()
        nursery.start_soon(pilot.run)
        with trio.fail_after(60):
            while not all(replica.sync.delivered(a) >= n for a, n in wanted.items()):
                refused = replica.admission_refused
                if refused is not None:
                    raise RuntimeError(f"the late spectator was refused: {refused}")
                await trio.sleep(0.0005)
            took = time.perf_counter() - start
            used = time.process_time() - cpu
            while 1 not in replica.rounds or replica.rounds[1].final is None:
                await trio.sleep(0.0005)
            final = time.perf_counter() - start
        nursery.cancel_scope.cancel()
    transport.close()
    return took, used, final


@contextlib.contextmanager
def _served_round(seed: int) -> Iterator[dict[str, Any]]:
    """A whole 4-seat round served over loopback UDP by a process of its own
    (`tools.bench_net_peer --serve`): its hello (port, table, host key, vector), until the
    block ends."""
    server = subprocess.Popen(
        [sys.executable, "-m", "tools.bench_net_peer", "--seed", str(seed), "--serve"],
        stdout=subprocess.PIPE,
        cwd=Path(__file__).resolve().parent.parent,
        text=True,
        start_new_session=True,
    )
    assert server.stdout is not None
    with server.stdout:
        try:
            yield json.loads(server.stdout.readline())
        finally:
            server.kill()
            server.wait()


def udp_catch_up_benchmarks(
    repeats: int, seed: int = 2, progress: ProgressLine = SILENT
) -> dict[str, dict[str, float]]:
    """The catch-up again, over real UDP from a table host in another process: requests,
    answers and round trips included, against decoding and verifying the same ops alone.
    A table lets at most `MAX_SPECTATORS` watch at once, and a spectator says no goodbye
    (its place is free again only after `SPECTATOR_GONE` of silence), so each served round
    takes that many late spectators and the next ones find a new one."""
    mesh = PeerMesh(players=4, rules=Rules(seats=4), seed=seed)
    mesh.run(until=1200, rounds=1)
    host = mesh.replicas[0].sync
    ops = [op for log in host.logs.values() for op in log]
    walls: list[float] = []
    cpus: list[float] = []
    verifies: list[float] = []
    finals: list[float] = []
    for first in range(0, repeats, MAX_SPECTATORS):
        with _served_round(seed) as hello:
            for i in range(first, min(first + MAX_SPECTATORS, repeats)):
                wall, cpu, final = trio.run(_udp_catch_up, hello, i)
                decoded, _ = verify_alone(ops, host.keys, host.table)
                walls.append(wall)
                cpus.append(cpu)
                finals.append(final)
                verifies.append(decoded)
                progress.step(f"spectator catch-up {i + 1} of {repeats}")
    return {
        f"UDP catch-up of a 4-seat round, {len(ops)} ops, wall (ms)": summary(
            [w * 1000 for w in walls]
        ),
        "UDP catch-up, this process's CPU (ms)": summary([c * 1000 for c in cpus]),
        "UDP catch-up until the round is final here (ms)": summary([f * 1000 for f in finals]),
        "decoding and verifying those ops alone (ms)": summary([v * 1000 for v in verifies]),
        "UDP catch-up wall / decode+verify (x)": summary(
            [w / v for w, v in zip(walls, verifies, strict=True)]
        ),
        "UDP catch-up CPU / decode+verify (x)": summary(
            [c / v for c, v in zip(cpus, verifies, strict=True)]
        ),
    }


def net_benchmarks(
    repeats: int = 3, progress: ProgressLine = SILENT
) -> dict[str, dict[str, float]]:
    catch_ups = max(repeats, 5)
    progress.expect(repeats + 2 * repeats + catch_ups)
    return {
        **latency_benchmarks(repeats, progress),
        **announce_benchmarks(repeats, progress),
        **udp_catch_up_benchmarks(catch_ups, progress=progress),
    }
