"""A fuzzing target on 127.0.0.1: a table in real time whose peer 1 listens on a UDP socket.

Started by `nerts-p2p fuzz mutate --target local`. It prints `PORT TABLE_ID_HEX`, then runs
the table (bots play; the other peers are in this process) and hands every datagram that
reaches the socket to peer 1, whose answers to outside addresses go back out of the socket.
When its stdin closes it prints peer 1's drop counters by reason as one JSON line and exits,
with what it watched of itself once a second (`watch`): the process's resident memory when
the first datagram arrived and at most, and the target peer's queues at most.
It binds to 127.0.0.1 only (the network rule) and announces nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import socket
import sys
import time
from collections.abc import Hashable

from tools.fuzz.campaign import p99
from tools.fuzz.schedule import Schedule
from tools.fuzz.table import FuzzTable, TableConfig

TARGET = 1
WATCH_EVERY = 1.0  # seconds between looks at memory and queues


def resident_mb() -> float:
    """This process's resident memory in MB (Linux /proc; 0 where there is none)."""
    try:
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0.0
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def queue_sizes(table: FuzzTable) -> dict[str, int]:
    """The target peer's queues that a stranger's datagrams can fill."""
    sync = table.peers[TARGET].replica.sync
    return {
        "pending": sum(len(p) for p in sync.pending.values()),
        "awaiting_key": sum(len(p) for p in sync.awaiting_key.values()),
        "requests_in_flight": len(sync._requested),
        "rate_limit_sources": len(sync.limiter._buckets),
        "outbox": len(sync._outbox),
    }


def main() -> int:
    parser = argparse.ArgumentParser(prog="udp_peer")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    table = FuzzTable(TableConfig(players=3, seed=args.seed, rounds=args.rounds), Schedule(0))
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.setblocking(False)

    def out(destination: Hashable, datagram: bytes) -> None:
        if isinstance(destination, tuple):
            with contextlib.suppress(OSError):
                sock.sendto(datagram, destination)

    table.external = out
    print(sock.getsockname()[1], table.table_id.hex(), flush=True)
    began = time.monotonic()
    received = 0
    rss_start: float | None = None
    rss_max = resident_mb()
    queues_max: dict[str, int] = {}
    next_watch = 0.0
    while True:
        readable, _, _ = select.select([sock, sys.stdin], [], [], 0.002)
        if sys.stdin in readable and not sys.stdin.readline():
            break
        now = time.monotonic() - began
        if now >= next_watch and table.peers[TARGET].alive:
            next_watch = now + WATCH_EVERY
            rss_max = max(rss_max, resident_mb())
            for name, size in queue_sizes(table).items():
                queues_max[name] = max(queues_max.get(name, 0), size)
        if sock in readable:
            if rss_start is None:
                rss_start = resident_mb()
            for _ in range(256):
                try:
                    datagram, source = sock.recvfrom(2048)
                except BlockingIOError:
                    break
                received += 1
                table.inject(now, TARGET, datagram, source)
        # The table's time is the wall clock: a step that runs late (the peer is busy with
        # the campaign) happens late, so honest peers' move latency is real latency.
        while table._queue and table._queue[0][0] <= now:
            table.now = max(table.now, time.monotonic() - began)
            table.step()
    peer = table.peers[TARGET]
    counters = peer.replica.sync.counters.as_dict() if peer.alive else {"crashed": 1}
    latency = [x for p in table.peers if p.honest for x in p.move_latency]
    watch = {
        "rss_start_mb": round(rss_start if rss_start is not None else rss_max, 1),
        "rss_max_mb": round(max(rss_max, resident_mb()), 1),
        "queues_max": queues_max,
    }
    report = {"received": received, "move_latency_p99": p99(latency), "watch": watch}
    print(json.dumps({**report, **counters}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
