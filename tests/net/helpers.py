"""Tables of in-memory nodes with bots, for the node's trio tests."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field

from nerts_p2p.game.bots import CASUAL, BotPlayer
from nerts_p2p.game.rules import Rules
from nerts_p2p.net.autopilot import Autopilot
from nerts_p2p.net.node import NodeEvent, TableNode
from nerts_p2p.net.transport import MemoryNetwork
from nerts_p2p.table.replica import RoundFinal, TableReplica
from protocol.messages import PLAYER, SPECTATOR
from protocol.signing import SigningKeyPair
from tools.mesh import seeded_bytes


def key_for(label: str) -> SigningKeyPair:
    return SigningKeyPair(hashlib.sha256(f"net-test-key/{label}".encode()).digest())


@dataclass
class MemoryTable:
    """A host and joiners on one `MemoryNetwork`, each run by an autopilot with a bot."""

    network: MemoryNetwork
    rules: Rules
    pace: float = 0.05
    max_rounds: int | None = 1
    nodes: list[TableNode] = field(default_factory=list)
    pilots: list[Autopilot] = field(default_factory=list)
    events: list[list[NodeEvent]] = field(default_factory=list)

    def open(self) -> TableNode:
        host = TableReplica.open_table(
            key_for("host"),
            name="host",
            rules=self.rules,
            spectators=True,
            randomness=seeded_bytes("host"),
        )
        return self._add(TableNode(host, self.network.open()))

    def join(self, name: str, *, role: int = PLAYER) -> TableNode:
        host = self.nodes[0]
        replica = TableReplica.joining(
            key_for(name),
            host.replica.sync.table,
            name=name,
            role=role,
            randomness=seeded_bytes(name),
        )
        node = TableNode(
            replica, self.network.open(), bootstrap=host.address, table_host=host.replica.me
        )
        return self._add(node)

    def _add(self, node: TableNode) -> TableNode:
        index = len(self.nodes)
        bot = None
        if node.replica.role == PLAYER:
            bot = BotPlayer(CASUAL, -1, random.Random(f"bot/{index}"))
        self.nodes.append(node)
        self.pilots.append(Autopilot(node, bot, max_rounds=self.max_rounds, pace=self.pace))
        self.events.append([])
        return node

    async def collect(self, index: int) -> None:
        async for event in self.nodes[index].events:
            self.events[index].append(event)

    def finals(self, index: int) -> list[RoundFinal]:
        return [e for e in self.events[index] if isinstance(e, RoundFinal)]


__all__ = ["SPECTATOR", "MemoryTable", "key_for"]
