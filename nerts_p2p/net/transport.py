"""Datagram transports for the node: one UDP socket per peer, or an in-memory network.

A transport moves whole datagrams and nothing else. Addresses are `(host, port)` tuples for
both kinds, so the node and the replica never know which one they run on. The in-memory
network is part of the product in the sense of `trio.testing`: the node's own tests and
benchmarks run a whole table over it, in virtual time, with no socket at all.
"""

from __future__ import annotations

import errno
import random
import socket
from dataclasses import dataclass, field
from typing import Protocol

import trio

from nerts_p2p.game.errors import NertsError

Address = tuple[str, int]
#: Receive buffer: larger than any datagram we accept, so an oversize one is read whole
#: (and then dropped by the gate) rather than silently truncated into something else.
RECEIVE_BUFFER = 65536


class AddressInUseError(NertsError):
    """The port asked for is already taken on that interface."""


class Transport(Protocol):
    @property
    def address(self) -> Address: ...

    async def send(self, datagram: bytes, destination: Address) -> None: ...

    async def receive(self) -> tuple[bytes, Address]: ...

    def close(self) -> None: ...


class UdpTransport:
    """One bound UDP socket. Sending never blocks the game: a datagram the kernel will not
    take right now (buffer full, unreachable host) is dropped and counted, as the network
    itself would drop it; anti-entropy repairs it."""

    def __init__(self, sock: trio.socket.SocketType, raw: socket.socket | None = None) -> None:
        self._sock = sock
        #: The same socket, non-blocking, for `send_now` (None: only the async `send`).
        self._raw = raw
        host, port = sock.getsockname()[:2]
        self._address: Address = (str(host), int(port))
        self.send_failures = 0

    @property
    def address(self) -> Address:
        return self._address

    async def send(self, datagram: bytes, destination: Address) -> None:
        try:
            await self._sock.sendto(datagram, destination)
        except OSError:
            self.send_failures += 1

    def send_now(self, datagram: bytes, destination: Address) -> bool:
        """Hand the datagram to the kernel at once, without waiting for the event loop (a
        move goes out the moment it is signed). False if the kernel cannot take it right now
        (its buffer is full): the caller queues it for `send` instead."""
        if self._raw is None:
            return False
        try:
            self._raw.sendto(datagram, destination)
        except BlockingIOError:
            return False
        except OSError:
            self.send_failures += 1  # unreachable and the like: the network dropped it
        return True

    async def receive(self) -> tuple[bytes, Address]:
        if self._raw is None:
            while True:
                try:
                    data, source = await self._sock.recvfrom(RECEIVE_BUFFER)
                except ConnectionError:
                    # Linux reports an earlier ICMP "port unreachable" on the next recv: a
                    # peer that went away. Not our socket's fault; keep reading.
                    continue
                return data, (str(source[0]), int(source[1]))
        # Straight to the kernel, then sleep until the socket is readable: the node has just
        # taken everything the socket held (`receive_now`), so the first try usually finds
        # nothing, and after the wake-up the datagram is read at once (trio's socket
        # `recvfrom` does the same through more layers).
        await trio.lowlevel.checkpoint_if_cancelled()
        while True:
            got = self.receive_now()
            if got is not None:
                await trio.lowlevel.cancel_shielded_checkpoint()
                return got
            await trio.lowlevel.wait_readable(self._raw)
            got = self.receive_now()
            if got is not None:
                return got

    def receive_now(self) -> tuple[bytes, Address] | None:
        """A datagram the kernel already holds, without waiting for the event loop; None if
        there is none. After `receive` wakes for one datagram the node takes the others that
        came with it this way: each trip through the event loop costs more than a datagram's
        whole gate on a busy machine."""
        if self._raw is None:
            return None
        while True:
            try:
                data, source = self._raw.recvfrom(RECEIVE_BUFFER)
            except BlockingIOError:
                return None
            except ConnectionError:
                continue  # an earlier ICMP "port unreachable", as in `receive`
            return data, (str(source[0]), int(source[1]))

    def close(self) -> None:
        self._sock.close()


async def open_udp_transport(interface: str, port: int = 0) -> UdpTransport:
    """A UDP socket bound to `interface` (an IPv4 address; "0.0.0.0" means all of them)."""
    raw = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        raw.bind((interface, port))
    except (OSError, UnicodeError) as exc:
        raw.close()
        if isinstance(exc, UnicodeError):
            raise NertsError(f"{interface!r} is not an IPv4 address") from exc
        if exc.errno == errno.EADDRINUSE:
            raise AddressInUseError(f"port {port} on {interface} is already in use") from exc
        if exc.errno == errno.EADDRNOTAVAIL:
            raise NertsError(f"{interface} is not an address of this machine") from exc
        raise NertsError(f"cannot open a UDP socket on {interface}:{port}: {exc}") from exc
    raw.setblocking(False)
    await trio.lowlevel.checkpoint()
    return UdpTransport(trio.socket.from_stdlib_socket(raw), raw)


# --- in memory -----------------------------------------------------------------------------


@dataclass
class MemoryNetwork:
    """Transports that hand datagrams to each other through bounded queues, with a latency
    and optional loss drawn from one seeded random source. `cut` holds addresses whose link
    is down (both ways). Under trio's `MockClock` a whole table runs in virtual time."""

    latency: float = 0.001
    drop: float = 0.0
    seed: int = 0
    queue_size: int = 1024
    cut: set[Address] = field(default_factory=set)
    delivered: int = 0
    dropped: int = 0

    def __post_init__(self) -> None:
        self.rng = random.Random(f"memory-network/{self.seed}")
        self._inboxes: dict[Address, trio.MemorySendChannel[InFlight]] = {}
        self._next_port = 40000

    def open(self, host: str = "10.0.0.1") -> MemoryTransport:
        self._next_port += 1
        address = (host, self._next_port)
        send, receive = trio.open_memory_channel[InFlight](self.queue_size)
        self._inboxes[address] = send
        return MemoryTransport(self, address, receive)

    def deliver(self, datagram: bytes, source: Address, destination: Address) -> None:
        inbox = self._inboxes.get(destination)
        if (
            inbox is None
            or source in self.cut
            or destination in self.cut
            or self.rng.random() < self.drop
        ):
            self.dropped += 1
            return
        try:
            inbox.send_nowait((trio.current_time() + self.latency, datagram, source))
            self.delivered += 1
        except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
            self.dropped += 1  # a full socket buffer drops, as the kernel's would

    def close(self, address: Address) -> None:
        inbox = self._inboxes.pop(address, None)
        if inbox is not None:
            inbox.close()


#: A datagram on its way: (arrival time, bytes, source).
InFlight = tuple[float, bytes, Address]


class MemoryTransport:
    def __init__(
        self,
        network: MemoryNetwork,
        address: Address,
        inbox: trio.MemoryReceiveChannel[InFlight],
    ) -> None:
        self.network = network
        self._address = address
        self._inbox = inbox

    @property
    def address(self) -> Address:
        return self._address

    async def send(self, datagram: bytes, destination: Address) -> None:
        self.network.deliver(datagram, self._address, destination)

    async def receive(self) -> tuple[bytes, Address]:
        # One queue per receiver and one latency for all: arrival order is send order.
        arrival, datagram, source = await self._inbox.receive()
        await trio.sleep_until(arrival)
        return datagram, source

    def close(self) -> None:
        self.network.close(self._address)
