"""Garbage, oversize and forged datagrams at a live node's port do not stop the game."""

from __future__ import annotations

import random
import socket
import threading
import time

import trio
import trio.testing

from nerts_p2p.game.rules import Rules
from nerts_p2p.net.contacts import encode_contacts
from nerts_p2p.net.transport import MemoryNetwork
from protocol.codec import pack
from protocol.envelope import PROTOCOL_VERSION
from protocol.messages import Kind, op_body
from protocol.signing import SigningKeyPair, sign

from .helpers import MemoryTable
from .procs import FAST, finish, nerts, table_name


def hostile_datagrams(table: bytes, victim: bytes, rng: random.Random) -> list[bytes]:
    """One of each kind of rubbish: random bytes, an oversize datagram, msgpack of the wrong
    shape, an op of the table signed by a stranger, the same op claiming the host as author
    (a forged signature), and contacts signed by a stranger."""
    stranger = SigningKeyPair(rng.randbytes(32))
    body = op_body(Kind.MOVE, table, victim, 5, b"\0" * 16, 999, 1, [1, 1], "n-f")
    signed_body = pack(body)
    forged = pack([PROTOCOL_VERSION, signed_body, rng.randbytes(64)])
    return [
        rng.randbytes(rng.randrange(1, 1200)),
        rng.randbytes(5000),
        pack([PROTOCOL_VERSION, [1, 2, 3], b"x"]),
        pack([PROTOCOL_VERSION, signed_body, sign(stranger, signed_body)]),
        forged,
        *encode_contacts(stranger, table, [(victim, ("10.1.2.3", 9))]),
    ]


async def test_a_flood_of_rubbish_at_the_host_does_not_stop_the_round(
    autojump_clock: trio.testing.MockClock,
) -> None:
    table = MemoryTable(MemoryNetwork(), Rules(seats=3, nerts_size=6))
    host = table.open()
    table.join("ann")
    table.join("bob")
    attacker = table.network.open("10.6.6.6")
    rng = random.Random(7)
    sent = 0
    sent_by_the_deal = -1

    async def flood() -> None:
        nonlocal sent, sent_by_the_deal
        while True:
            for datagram in hostile_datagrams(host.replica.sync.table, host.replica.me, rng):
                await attacker.send(datagram, host.address)
                sent += 1
            if sent_by_the_deal < 0 and host.replica.rounds:
                sent_by_the_deal = sent
            await trio.sleep(0.05)

    async with trio.open_nursery() as nursery:
        for i, node in enumerate(table.nodes):
            await nursery.start(node.run)
            nursery.start_soon(table.collect, i)
        nursery.start_soon(flood)
        with trio.move_on_after(600):
            async with trio.open_nursery() as pilots:
                for pilot in table.pilots:
                    pilots.start_soon(pilot.run)
        nursery.cancel_scope.cancel()
    finals = [table.finals(i) for i in range(3)]
    assert len(finals[0]) == 1
    assert finals[1] == finals[0]
    assert finals[2] == finals[0]
    drops = host.replica.sync.counters.as_dict()
    assert 0 < sent_by_the_deal < sent - 50  # rubbish kept coming through the round
    assert drops["oversize"] > 0
    assert drops["bad_signature"] > 0
    assert host.stats.contacts_refused > 0
    assert ("10.1.2.3", 9) not in host.addresses()


def test_rubbish_at_a_real_port_does_not_stop_a_match_on_loopback() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = nerts(
        [
            "host",
            "--name",
            table_name(),
            "--seats",
            "3",
            "--bots",
            "2",
            "--rounds",
            "1",
            "--headless",
            "--json",
            "--port",
            str(port),
            "--interface",
            "127.0.0.1",
            *FAST,
        ]
    )
    stop = threading.Event()

    def flood() -> None:
        rng = random.Random(3)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            while not stop.is_set():
                for datagram in hostile_datagrams(bytes(8), bytes(8), rng):
                    sock.sendto(datagram, ("127.0.0.1", port))
                sock.sendto(rng.randbytes(60000), ("127.0.0.1", port))
                time.sleep(0.002)

    flooder = threading.Thread(target=flood)
    flooder.start()
    try:
        code, out, err = finish(proc)
    finally:
        stop.set()
        flooder.join()
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith('{"round":1')
