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
    latency: tuple[float, float] = (0.004, 0.030)  # seconds, drawn per datagram
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

    def due(self, now: float) -> list[tuple[int, int, bytes]]:
        """(target, sender, datagram) for everything that has arrived by `now`, in order."""
        out = []
        while self._queue and self._queue[0][0] <= now:
            _, _, target, sender, datagram = heapq.heappop(self._queue)
            out.append((target, sender, datagram))
        return out

    def add_peer(self) -> int:
        self.peers += 1
        return self.peers - 1
