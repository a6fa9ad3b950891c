"""A MOVE's receive with the caches warm and cold, in one process: how much of the player
processes' receive time (`bench net`'s "receive that folds a move") is the code, and how
much is memory the process has to fetch again after sleeping while others ran.

    .venv/bin/python -m tools.bench_receive_cold [--repeats N] [--json]

A spectator that sits down before the round (so it gets every op live, one per datagram, as
a player does) is recorded in a `PeerMesh` round of four expert bots; what reached it is
replayed into a fresh spectator with the same key, timing each receive that folds a MOVE.
"Cold": before each such receive the process writes through a buffer larger than the last
level cache, as the other players, the kernel and the host's other guests do to a player
process between two moves. The Ed25519 check and the decoding are timed alone the same
way, on the round's moves. Each figure is the median over the round's moves; over
`--repeats` replays, its median and spread. A measurement, not a test; nothing here opens
a socket.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

from nerts_p2p.game.bots import EXPERT
from nerts_p2p.game.rules import Rules
from protocol.errors import RemoteProtocolError
from protocol.messages import Kind, Op, decode
from protocol.signing import verify
from tools.bench_engine import summary
from tools.bench_sync import Trace, recording, remade_spectator
from tools.mesh import PeerMesh

#: Larger than this machine's last level cache (32 MiB of L3 on the hosts of 12-06).
EVICT_BYTES = 48 * 1024 * 1024
#: The spectator's name (its key and randomness follow from it).
SEATED_EARLY = "early"


def record(seed: int) -> tuple[PeerMesh, Trace]:
    mesh = PeerMesh(players=4, rules=Rules(seats=4, nerts_size=13), seed=seed, levels=(EXPERT,) * 4)
    trace = recording(mesh.add_spectator(SEATED_EARLY))
    mesh.run(until=1200, rounds=1)
    return mesh, trace


def _brings_a_move(datagram: bytes, table: bytes) -> bool:
    try:
        message = decode(datagram, table=table)
    except RemoteProtocolError:
        return False
    return isinstance(message, Op) and message.kind == Kind.MOVE


class Evictor:
    def __init__(self) -> None:
        self._buffer = bytearray(EVICT_BYTES)
        self._zeros = bytes(EVICT_BYTES // 64)

    def __call__(self) -> None:
        self._buffer[::64] = self._zeros  # one write per cache line


def replay(
    mesh: PeerMesh, trace: Trace, moves: list[bool], before_move: Callable[[], None] | None
) -> float:
    """Median microseconds of a receive that brings a MOVE (`moves`: which of the trace's
    steps do), in a fresh spectator."""
    spectator = remade_spectator(mesh, SEATED_EARLY)
    spectator.request_table(mesh.replicas[0].me, 0, trace[0][0])
    times: list[float] = []
    for (now, got), move in zip(trace, moves, strict=True):
        if got is None:
            spectator.tick(now)
        else:
            datagram, source = got
            if move and before_move is not None:
                before_move()
            start = time.perf_counter()
            spectator.receive(datagram, source, now)
            if move:
                times.append(time.perf_counter() - start)
        if not spectator.is_member and spectator.sync.open_op is not None:
            spectator.join()
        spectator.outgoing()
        spectator.events()
    assert spectator.sync.vector() == mesh.replicas[0].sync.vector(), "the replay diverged"
    return statistics.median(times) * 1e6


def alone(moves: list[Op], work: Callable[[Op], object], evict: Evictor | None) -> float:
    times = []
    for op in moves:
        if evict is not None:
            evict()
        start = time.perf_counter()
        work(op)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def receive_benchmarks(repeats: int, seed: int = 0) -> dict[str, dict[str, float]]:
    mesh, trace = record(seed)
    host = mesh.replicas[0]
    table, keys = host.sync.table, host.sync.keys
    moves = [op for log in host.sync.logs.values() for op in log if op.kind == Kind.MOVE]
    datagrams = {op.hash: op.datagram() for op in moves}
    brings = [got is not None and _brings_a_move(got[0], table) for _, got in trace]
    evict = Evictor()
    figures: dict[str, list[float]] = {}

    def note(name: str, value: float) -> None:
        figures.setdefault(name, []).append(value)

    for _ in range(repeats):
        note("receive that folds a move, warm (us)", replay(mesh, trace, brings, None))
        note("receive that folds a move, cold (us)", replay(mesh, trace, brings, evict))
        for caches, evictor in (("warm", None), ("cold", evict)):
            decode_one = lambda op: decode(datagrams[op.hash], table=table)  # noqa: E731
            verify_one = lambda op: verify(keys[op.author], op.body, op.signature)  # noqa: E731
            note(f"decode alone, {caches} (us)", alone(moves, decode_one, evictor))
            note(f"Ed25519 check alone, {caches} (us)", alone(moves, verify_one, evictor))
    out = {name: summary(values) for name, values in figures.items()}
    out["moves timed"] = summary([float(len(moves))])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = receive_benchmarks(args.repeats, args.seed)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for name, figure in results.items():
        print(f"{name}: {figure['median']:.1f} ({figure['min']:.1f}-{figure['max']:.1f})")


if __name__ == "__main__":
    main()
