"""A fuzzing target on 127.0.0.1: a table in real time whose peer 1 listens on a UDP socket.

Started by `nerts-p2p fuzz mutate --target local` (twice: the second one is left alone, for
the honest latency without the campaign). It prints `PORT TABLE_ID_HEX`, then runs the table
(bots play; the other peers are in this process) and hands every datagram that reaches the
socket to peer 1, whose answers to outside addresses go back out of the socket. When its
stdin closes it prints one JSON line and exits: peer 1's drop counters by reason, the honest
move latency, how late the table's events ran and the CPU it took, the problems its own
watching saw (an honest peer expelled, a divergence, ...), and what it watched of itself once
a second (`watch`): the process's resident memory when the first datagram arrived and at
most, and the target peer's queues at most.

The other peers are machines of their own, so their events are not held up by peer 1's
socket: the loop runs every table event that is due first, and what members sent to peer 1
with them, and gives strangers' datagrams the time left before the next event (a few at
least). It reads at most `BACKLOG` datagrams ahead; the rest wait in the kernel's buffer,
which drops what does not fit, as a real socket does.
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
from collections import deque
from collections.abc import Hashable

from tools.fuzz.campaign import p99
from tools.fuzz.schedule import Schedule
from tools.fuzz.table import FuzzTable, TableConfig

TARGET = 1
WATCH_EVERY = 1.0  # seconds between looks at memory and queues
BACKLOG = 256  # datagrams read from the socket ahead of handling them
STRANGERS_AT_LEAST = 4  # strangers' datagrams handled per turn of the loop, however busy


def _run_due(table: FuzzTable, began: float, late: list[float]) -> None:
    """Every event of the table that is due by the wall clock; how late each ran goes to
    `late` (the target's own datagrams excepted)."""
    while table._queue and table._queue[0][0] <= time.monotonic() - began:
        at, _, kind, _, _ = table._queue[0]
        table.now = max(table.now, time.monotonic() - began)
        if kind != "inject":
            late.append(table.now - at)
        table.step()


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
    received = handled = 0
    late: list[float] = []  # how late each event of the table ran, wall seconds
    rss_start: float | None = None
    rss_max = resident_mb()
    queues_max: dict[str, int] = {}
    next_watch = 0.0
    # Datagrams read from the socket and not yet handled: from members' addresses first,
    # then from anyone else. The rest wait in the kernel's buffer (and are lost when it is
    # full, as on a LAN): a flood costs the target what it reads, not all that is sent.
    members: deque[tuple[bytes, Hashable]] = deque()
    strangers: deque[tuple[bytes, Hashable]] = deque()
    while True:
        due = table._queue[0][0] - (time.monotonic() - began) if table._queue else 0.002
        wait = 0.0 if members or strangers else min(0.002, max(0.0, due))
        readable, _, _ = select.select([sock, sys.stdin], [], [], wait)
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
            known = set(table.peers[TARGET].replica.sync.peers.values())
            while len(members) + len(strangers) < BACKLOG:
                try:
                    datagram, source = sock.recvfrom(2048)
                except BlockingIOError:
                    break
                received += 1
                (members if source in known else strangers).append((datagram, source))
        # The table's own traffic (the other peers are machines of their own) and what
        # members sent the target come first; strangers get the time left before the next
        # event is due, and a few datagrams at least (the watchdog is a stranger too).
        # The table's time is the wall clock: a step that runs late happens late, so honest
        # peers' move latency is real latency.
        while members:
            table.inject(time.monotonic() - began, TARGET, *members.popleft())
            _run_due(table, began, late)
            handled += 1
        _run_due(table, began, late)
        slice_end = table._queue[0][0] if table._queue else now + 0.002
        for turn in range(len(strangers)):
            if turn >= STRANGERS_AT_LEAST and time.monotonic() - began >= slice_end:
                break
            table.inject(time.monotonic() - began, TARGET, *strangers.popleft())
            _run_due(table, began, late)
            handled += 1
    peer = table.peers[TARGET]
    counters = peer.replica.sync.counters.as_dict() if peer.alive else {"crashed": 1}
    latency = [x for p in table.peers if p.honest for x in p.move_latency]
    watch = {
        "rss_start_mb": round(rss_start if rss_start is not None else rss_max, 1),
        "rss_max_mb": round(max(rss_max, resident_mb()), 1),
        "queues_max": queues_max,
    }
    report = {
        "cpu_seconds": round(time.process_time(), 2),
        "wall_seconds": round(time.monotonic() - began, 2),
        "events_late_p99": p99(late),
        # What the table's own watching saw (an honest peer expelled, a divergence, ...).
        "problems": [p.to_json() for p in table.problems[:20]],
        "received": received,
        "handled": handled,
        "move_latency_p99": p99(latency),
        "watch": watch,
    }
    print(json.dumps({**report, **counters}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
