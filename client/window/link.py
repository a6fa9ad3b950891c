"""An in-memory link between the replicas of one process (the practice table).

Every datagram arrives after a small random latency, like a quiet LAN, so two seats that
play to one foundation within a few milliseconds really race: the replicas order the ops,
and the loser sees its card go back. Nothing here touches a socket.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Hashable
from dataclasses import dataclass, field

from protocol.sync import BROADCAST


@dataclass
class InMemoryLink:
    peers: int
    rng: random.Random
    #: Seconds, drawn per datagram: a busy home Wi-Fi rather than a quiet wire, which also
    #: spreads the work of one move over the frames in which each peer receives it.
    latency: tuple[float, float] = (0.004, 0.060)
    _queue: list[tuple[float, int, int, int, bytes]] = field(default_factory=list)
    _counter: int = 0
    sent: int = 0

    def send(self, sender: int, destination: Hashable, datagram: bytes, now: float) -> None:
        if destination == BROADCAST:
            targets = [i for i in range(self.peers) if i != sender]
        elif isinstance(destination, int) and 0 <= destination < self.peers:
            targets = [destination]
        else:
            return  # an address that is not on this link: nobody there
        low, high = self.latency
        for target in targets:
            self._counter += 1
            self.sent += 1
            at = now + low + self.rng.random() * (high - low)
            heapq.heappush(self._queue, (at, self._counter, target, sender, datagram))

    def next_due(self, now: float) -> tuple[int, int, bytes] | None:
        """(target, sender, datagram) of the first datagram that has arrived by `now`."""
        if not self._queue or self._queue[0][0] > now:
            return None
        _, _, target, sender, datagram = heapq.heappop(self._queue)
        return target, sender, datagram

    def first_arrival(self) -> float | None:
        """When the first datagram in the queue arrives (None: nothing is on its way)."""
        return self._queue[0][0] if self._queue else None

    def waiting(self) -> int:
        return len(self._queue)

    def add_peer(self) -> int:
        self.peers += 1
        return self.peers - 1
