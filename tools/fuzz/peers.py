"""What a fuzzed table is made of: its configuration, its peers, what they store, and the
problems the fuzzer records."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nerts_p2p.game.bots import BotPlayer
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.state import GameState
from nerts_p2p.table.replica import GameEvent, RoundFinal, TableReplica
from protocol.signing import SigningKeyPair
from tools.mesh import seeded_bytes

if TYPE_CHECKING:
    from tools.fuzz.table import FuzzTable

SOCKET_BUFFER = 512  # datagrams a paused peer's socket holds before the kernel drops more
HISTORY_LIMIT = 50_000  # records kept (the oldest go first)


@dataclass(frozen=True)
class TableConfig:
    """What the table is: who sits at it and which rules it plays. `seed` fixes the keys,
    the deals and the bots' choices; the schedule's seed fixes the link."""

    players: int = 3
    spectators: int = 0
    nerts_size: int = 6
    rounds: int = 1
    level: str = "casual"
    heartbeat: float = 0.075
    seed: int = 0
    #: A deliberately broken peer (tests prove the fuzzer finds each): see `planted.py`.
    planted: str = ""
    planted_peer: int = 1

    def rules(self) -> Rules:
        return Rules(seats=self.players, nerts_size=self.nerts_size)

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TableConfig:
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown table setting(s): {', '.join(sorted(unknown))}")
        return cls(**data)


@dataclass(frozen=True)
class Problem:
    """Something the fuzzer saw that must not happen."""

    kind: str  # crash, invariant, score, divergence, expelled, cheater, seq_reuse, ...
    peer: int | None
    time: float
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "peer": self.peer, "time": self.time, "detail": self.detail}


@dataclass
class Store:
    """What a peer persists before sending (DESIGN.md section 4): its own ops, its deal
    seeds and its Lamport time. A restart from the store loses nothing."""

    ops: list[bytes] = field(default_factory=list)
    secrets: dict[int, tuple[bytes, bytes]] = field(default_factory=dict)
    lamport: int = 0


@dataclass
class Peer:
    index: int
    key: SigningKeyPair
    role: int
    replica: TableReplica
    bot: BotPlayer | None
    honest: bool = True
    alive: bool = True
    paused: bool = False
    #: After a restart: authors nothing until the table has shown it its own chain.
    recovering: bool = False
    restarts: int = 0
    buffer: list[tuple[Hashable, bytes]] = field(default_factory=list)
    store: Store = field(default_factory=Store)
    authored: dict[int, bytes] = field(default_factory=dict)  # seq -> body it signed
    checked: list[GameState] = field(default_factory=list)
    finals: dict[int, RoundFinal] = field(default_factory=dict)
    events: list[GameEvent] = field(default_factory=list)
    #: Outgoing datagrams pass through here (hostile scripts rewrite what a peer sends).
    transform: (
        Callable[[FuzzTable, list[tuple[Hashable, bytes]]], list[tuple[Hashable, bytes]]] | None
    ) = None
    move_latency: list[float] = field(default_factory=list)
    pending_moves: dict[bytes, float] = field(default_factory=dict)  # op hash -> when played
    latency_seen: tuple[int, int] = (0, 0)  # (round, stable ops) when last looked for them


ReplicaFactory = Callable[["FuzzTable", int, SigningKeyPair, int, bool], TableReplica]


def default_factory(
    table: FuzzTable, index: int, key: SigningKeyPair, role: int, restarted: bool
) -> TableReplica:
    cfg = table.config
    label = f"{cfg.seed}/{index}" + (f"/restart{table.peers[index].restarts}" if restarted else "")
    if index == 0 and not restarted:
        return TableReplica.open_table(
            key,
            name="p0",
            rules=cfg.rules(),
            spectators=True,
            randomness=seeded_bytes(label),
            heartbeat_interval=cfg.heartbeat,
        )
    if restarted:
        peer = table.peers[index]
        store = peer.store
        # Its own ops alone, as the node's store keeps them (DESIGN.md 4): they wait for
        # the table's ops they depend on, and `restore` keeps the peer quiet until it has
        # caught up (PROTOCOL.md 14).
        return TableReplica.restore(
            key,
            table.table_id,
            store.ops,
            name=f"p{index}",
            role=role,
            randomness=seeded_bytes(label),
            heartbeat_interval=cfg.heartbeat,
            clock=store.lamport,
        )
    return TableReplica.joining(
        key,
        table.table_id,
        name=f"p{index}",
        role=role,
        randomness=seeded_bytes(label),
        heartbeat_interval=cfg.heartbeat,
    )


@dataclass
class LinkStats:
    sent: int = 0
    delivered: int = 0
    dropped: int = 0
    duplicated: int = 0
    corrupted: int = 0
    injected: int = 0
