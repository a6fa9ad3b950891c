"""A fuzzing target on 127.0.0.1: a table in real time whose peer 1 listens on a UDP socket.

Started by `nerts-p2p fuzz mutate --target local`. It prints `PORT TABLE_ID_HEX`, then runs
the table (bots play; the other peers are in this process) and hands every datagram that
reaches the socket to peer 1, whose answers to outside addresses go back out of the socket.
When its stdin closes it prints peer 1's drop counters by reason as one JSON line and exits.
It binds to 127.0.0.1 only (the network rule) and announces nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import select
import socket
import sys
import time
from collections.abc import Hashable

from tools.fuzz.campaign import p99
from tools.fuzz.schedule import Schedule
from tools.fuzz.table import FuzzTable, TableConfig

TARGET = 1


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
    while True:
        readable, _, _ = select.select([sock, sys.stdin], [], [], 0.002)
        if sys.stdin in readable and not sys.stdin.readline():
            break
        now = time.monotonic() - began
        if sock in readable:
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
    print(
        json.dumps({"received": received, "move_latency_p99": p99(latency), **counters}),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
