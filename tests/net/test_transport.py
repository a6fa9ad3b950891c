"""The UDP transport on loopback: what the kernel already holds is taken without waiting."""

from __future__ import annotations

import socket

import trio

from nerts_p2p.game.rules import Rules
from nerts_p2p.net.node import RECEIVE_BURST, TableNode
from nerts_p2p.net.transport import open_udp_transport
from nerts_p2p.table.replica import TableReplica
from tools.mesh import seeded_bytes

from .helpers import key_for


async def test_receive_now_takes_what_is_queued_in_order_and_none_when_empty() -> None:
    transport = await open_udp_transport("127.0.0.1")
    try:
        assert transport.receive_now() is None
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
            sender.bind(("127.0.0.1", 0))
            for n in range(3):
                sender.sendto(bytes([n]) * 5, transport.address)
            first = await transport.receive()
            assert first == (b"\x00" * 5, sender.getsockname())
            await trio.sleep(0.05)  # loopback delivers at once; leave the kernel a moment
            assert transport.receive_now() == (b"\x01" * 5, sender.getsockname())
            assert transport.receive_now() == (b"\x02" * 5, sender.getsockname())
            assert transport.receive_now() is None
    finally:
        transport.close()


async def test_a_burst_of_junk_is_all_taken_and_the_node_keeps_its_table() -> None:
    # More datagrams than one turn of the receive loop takes: every one is read and counted
    # (none waits for a later wake-up that may never come), and junk changes nothing.
    replica = TableReplica.open_table(
        key_for("burst"),
        name="burst",
        rules=Rules(seats=2),
        spectators=True,
        randomness=seeded_bytes("burst"),
    )
    transport = await open_udp_transport("127.0.0.1")
    node = TableNode(replica, transport)
    vector = replica.sync.vector()
    count = RECEIVE_BURST * 2 + 5
    async with trio.open_nursery() as nursery:
        await nursery.start(node.run)
        node.events.close()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
            sender.bind(("127.0.0.1", 0))
            for n in range(count):
                sender.sendto(b"junk %d" % n, transport.address)
            with trio.fail_after(10):
                while node.stats.datagrams_in < count:
                    await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    transport.close()
    assert node.stats.datagrams_in == count
    assert replica.sync.vector() == vector
    assert replica.sync.counters.total >= count


async def test_a_cancelled_receive_stops_even_when_datagrams_are_waiting() -> None:
    # A node asked to stop (Ctrl-C, the match over) stops under a flood too: a receive that
    # finds datagrams already queued is still a cancellation point, and takes none of them.
    transport = await open_udp_transport("127.0.0.1")
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
            sender.bind(("127.0.0.1", 0))
            sender.sendto(b"first", transport.address)
            sender.sendto(b"second", transport.address)
            await trio.sleep(0.05)
            with trio.CancelScope() as scope:
                scope.cancel()
                await transport.receive()
            assert scope.cancelled_caught
            assert await transport.receive() == (b"first", sender.getsockname())
            assert transport.receive_now() == (b"second", sender.getsockname())
    finally:
        transport.close()
