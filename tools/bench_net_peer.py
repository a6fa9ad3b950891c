"""One player process of `nerts-p2p bench net`'s move latency: a node on 127.0.0.1 with a bot
at its seat, for one round. Run by `tools.bench_net`, not by hand:

    python -m tools.bench_net_peer --seed 0 --index 0                      # the host
    python -m tools.bench_net_peer --seed 0 --index 1 --bootstrap PORT --table HEX --host-key HEX

    python -m tools.bench_net_peer --seed 1 --serve    # a finished round, for catch-up

The host prints one JSON line with its port, table id and key id as soon as it listens. At the
end every process prints one JSON line: when each of its MOVEs was authored, and when each
other player's MOVE was folded here, on the machine's monotonic clock (CLOCK_MONOTONIC is one
clock for every process, so the parent subtracts times taken in different processes).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Hashable

import trio

from nerts_p2p.game.bots import EXPERT, BotPlayer
from nerts_p2p.game.rules import Rules
from nerts_p2p.net.autopilot import Autopilot
from nerts_p2p.net.node import TableNode
from nerts_p2p.net.transport import open_udp_transport
from nerts_p2p.table.replica import TableReplica
from protocol.messages import PLAYER, Kind, Op
from protocol.signing import SigningKeyPair
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
    _time_moves(replica, authored, folded)
    transport = await open_udp_transport(LOOPBACK)
    node = TableNode(
        replica,
        transport,
        bootstrap=None if args.bootstrap is None else (LOOPBACK, args.bootstrap),
        table_host=None if args.host_key is None else bytes.fromhex(args.host_key),
    )
    if args.bootstrap is None:
        hello = {"port": transport.address[1], "table": replica.sync.table.hex()}
        print(json.dumps({**hello, "host_key": replica.me.hex()}), flush=True)
    pilot = Autopilot(
        node, BotPlayer(EXPERT, -1, random.Random(f"{seed}/{index}")), max_rounds=1, pace=args.pace
    )
    async with trio.open_nursery() as nursery:
        await nursery.start(node.run)
        node.events.close()
        with trio.move_on_after(args.timeout):
            await pilot.run()
        await trio.sleep(LINGER)
        nursery.cancel_scope.cancel()
    transport.close()
    return {
        "authored": authored,
        "folded": folded,
        "cpu_s": [[time.process_time(), monotonic() - started]],
        "datagrams": [[node.stats.datagrams_in, node.stats.datagrams_out]],
    }


def _time_moves(
    replica: TableReplica, authored: list[list[object]], folded: list[list[object]]
) -> None:
    """Wrap this replica's play and receive (on the instance, for the benchmark only) to note
    when each MOVE is authored here, and when each other author's MOVE is folded here."""
    sync = replica.sync
    receive, play = replica.receive, replica.play

    def timed_play(move: object) -> object:
        result = play(move)  # type: ignore[arg-type]
        if isinstance(result, Op):
            authored.append([result.author.hex(), result.seq, monotonic()])
        return result

    def timed_receive(datagram: bytes, source: Hashable, now: float) -> None:
        before = {author: len(log) for author, log in sync.logs.items()}
        start = monotonic()
        receive(datagram, source, now)
        done = monotonic()
        for author, log in sync.logs.items():
            if author == sync.me:
                continue
            for op in log[before.get(author, 0) :]:
                if op.kind == Kind.MOVE:
                    # the last field: how long this receive took here (gate, delivery, fold)
                    folded.append([author.hex(), op.seq, done, done - start])

    replica.play = timed_play  # type: ignore[method-assign,assignment]
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
    args = parser.parse_args()
    if args.serve:
        trio.run(serve_round, args.seed)
        return
    result = trio.run(run_peer, args)
    print(json.dumps(result), flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
