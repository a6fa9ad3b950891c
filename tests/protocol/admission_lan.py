"""A room of replicas for the admission tests (PROTOCOL.md 17), sans-I/O.

`Lan` moves datagrams the way the node does: a BROADCAST goes to the peers a replica
serves (`SyncPeer.peers`) and to the host's address it was given, never to everyone in
the room, so a peer the table did not admit hears only what is sent to it. Replica i is
at address i unless the test gives it one (an `(ip, port)` pair, as the node's sources
are, so that the host's per-address bounds see which replicas share a machine).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable

from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import TableReplica
from protocol.admission import table_key
from protocol.messages import PLAYER
from protocol.signing import SigningKeyPair
from protocol.sync import BROADCAST

PASSPHRASE = "plum tree at midnight"
RULES = Rules(seats=3)  # the host, Alice, and a seat for whoever comes next


def keypair(label: str) -> SigningKeyPair:
    return SigningKeyPair(hashlib.sha256(f"admission/{label}".encode()).digest())


def draws(label: str) -> Callable[[int], bytes]:
    counter = 0

    def draw(n: int) -> bytes:
        nonlocal counter
        counter += 1
        return hashlib.sha256(f"{label}/{counter}".encode()).digest()[:n]

    return draw


class Lan:
    """Replica 0 hosts; the others join through the host's address."""

    def __init__(
        self, *, private: bool, spectators: bool = True, host_address: Hashable = 0
    ) -> None:
        self.now = 0.0
        self.host = TableReplica.open_table(
            keypair("host"),
            name="host",
            rules=RULES,
            spectators=spectators,
            randomness=draws("host"),
            private=private,
        )
        if private:
            self.host.use_table_key(table_key(PASSPHRASE, self.host.sync.table))
        self.replicas: list[TableReplica] = [self.host]
        self.addresses: list[Hashable] = [host_address]
        self.wire: list[tuple[int, int, bytes]] = []  # (from, to, datagram) as sent

    @property
    def table(self) -> bytes:
        return self.host.sync.table

    def add(
        self,
        label: str,
        *,
        role: int = PLAYER,
        passphrase: str | None = None,
        address: Hashable | None = None,
    ) -> int:
        replica = TableReplica.joining(
            keypair(label), self.table, name=label, role=role, randomness=draws(label)
        )
        if passphrase is not None:
            replica.use_table_key(table_key(passphrase, self.table))
        self.replicas.append(replica)
        index = len(self.replicas) - 1
        self.addresses.append(index if address is None else address)
        replica.request_table(self.host.me, self.addresses[0], self.now)
        return index

    def deliver(self, rounds: int = 60) -> None:
        """Send what everyone has to say, and tick, until quiet (`rounds` heartbeats)."""
        for _ in range(rounds):
            self.now += 0.05
            for replica in self.replicas:
                replica.tick(self.now)
                if (
                    replica.sync.open_op is not None
                    and not replica.is_member
                    and replica.admission_refused is None
                    and replica.sync.admission.wanted
                ):
                    replica.join()  # what the node's autopilot does, every second
            self.flush()

    def flush(self) -> None:
        for _ in range(20):
            moved = False
            for index, replica in enumerate(self.replicas):
                for destination, datagram in replica.outgoing():
                    moved = True
                    for target in self._targets(index, destination):
                        self.wire.append((index, target, datagram))
                        self.replicas[target].receive(datagram, self.addresses[index], self.now)
            if not moved:
                return

    def _targets(self, sender: int, destination: Hashable) -> list[int]:
        # Addresses of no replica here (a flooder's) are sent into the void.
        if destination != BROADCAST:
            return [i for i, a in enumerate(self.addresses) if a == destination]
        sync = self.replicas[sender].sync
        served = set(sync.peers.values())
        if sender != 0:
            served.add(self.addresses[0])  # the host's address, from discovery
        return [i for i, a in enumerate(self.addresses) if a in served and i != sender]

    def join(self, index: int) -> None:
        self.deliver(2)
        self.replicas[index].join()
        self.deliver()


def play_a_round(lan: Lan, players: list[int]) -> None:
    for index in players:
        lan.replicas[index].ready()
    lan.deliver()
    lan.host.start()
    lan.deliver()
