"""Replays: a match saved as its signed log, verified and replayed from that alone.

A replay file is a record file (`nerts_p2p.net.store`): a REPLAY record
`[format, table id, table name, host key id, rounds final when saved]`, then one LOG_OP
record per op of the table, anyone's, as the datagram that carried it (body and signature as
signed). Reading it runs every op through a fresh spectator's replica, so the receive gate
checks every signature, hash chain, Lamport stamp and membership exactly as a live peer would;
then each round is audited from the revealed seeds as at the table.

Nothing is trusted from the file but the signed ops: the header only says what to expect.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from nerts_p2p.net.records import network_round_record
from nerts_p2p.net.store import MAGIC, RecordFile, RecordKind, StoreError
from nerts_p2p.table.replica import RoundFinal, TableReplica
from protocol.errors import DropReason
from protocol.messages import SPECTATOR, Op
from protocol.signing import SigningKeyPair
from protocol.sync_vouchers import relayable

REPLAY_FORMAT: Final = 1
#: "Heard past everything": a finished log gets no more ops, so every participant's horizon
#: is as far as it can go.
END_OF_LOG: Final = 2**53


def save_replay(folder: Path, replica: TableReplica, *, table_name: str) -> Path:
    """Write the table's whole signed log; returns the file's path."""
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in table_name)[:40] or "table"
    path = folder / f"{stamp}-{safe}-{replica.sync.table.hex()}.nrp"
    if path.exists():
        path.unlink()
    finals = sum(1 for rnd in replica.rounds.values() if rnd.final is not None)
    header = [REPLAY_FORMAT, replica.sync.table, table_name, replica.sync.host or b"", finals]
    RecordFile(path).append_all(
        [
            (RecordKind.REPLAY, header),
            *((RecordKind.LOG_OP, op.datagram()) for op in all_ops(replica)),
        ]
    )
    return path


def all_ops(replica: TableReplica) -> Iterable[Op]:
    """Every delivered op, in an order that delivers them at once (by Lamport time), and
    the evidence of any equivocation (both versions); an op taken on a voucher whose own
    signature does not verify comes after its voucher, as it is relayed (PROTOCOL.md 4)."""
    ops = [op for log in replica.sync.logs.values() for op in log]
    ops.sort(key=lambda op: (op.lamport, op.author, op.seq))
    evidence = [op for pair in replica.sync.evidence.values() for op in pair]
    return relayable(replica.sync, [*ops, *evidence])


@dataclass
class ReplayResult:
    table: bytes
    name: str
    ops: int
    replica: TableReplica
    finals: list[RoundFinal] = field(default_factory=list)
    #: Ops the gate refused, by reason (a forged or damaged op is named here).
    refused: dict[str, int] = field(default_factory=dict)

    @property
    def verified(self) -> bool:
        return not self.refused

    def records(self) -> list[dict[str, object]]:
        return [network_round_record(self.replica.rounds[f.round], f) for f in self.finals]


#: A replay is a match's signed log: 64 authors' ops of at most 1,200 bytes, a few thousand
#: a round. 256 MiB is dozens of long matches; a bigger file is not one.
MAX_REPLAY_BYTES: Final = 256 * 2**20


def load_replay(path: Path) -> ReplayResult:
    """Verify every op of a replay file and fold it. Raises `StoreError` in plain words for
    a file that is not a replay or is damaged."""
    if path.is_dir():
        raise StoreError(f"{path} is a folder: give one replay file in it (*.nrp)")
    if not path.is_file():
        raise StoreError(f"{path} does not exist or is not a file")
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            start = f.read(len(MAGIC))
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror}") from exc
    # Looked at before the whole file is read: a 10 GB file of anything is refused at once.
    if start != MAGIC:
        raise StoreError(f"{path} is not a nerts-p2p replay")
    if size > MAX_REPLAY_BYTES:
        raise StoreError(
            f"{path} is {size / 2**20:,.0f} MiB: larger than any match's replay "
            f"({MAX_REPLAY_BYTES // 2**20} MiB at most)"
        )
    records = RecordFile(path).read_only()
    if not records or records[0][0] != RecordKind.REPLAY:
        raise StoreError(f"{path} is not a nerts-p2p replay")
    header = records[0][1]
    if not (isinstance(header, list) and len(header) == 5 and header[0] == REPLAY_FORMAT):
        raise StoreError(f"{path}: replay format not understood")
    _, table, name, _host, _finals = header
    if not isinstance(table, bytes) or len(table) != 8 or not isinstance(name, str):
        raise StoreError(f"{path}: the replay's header is damaged")
    watcher = TableReplica.joining(
        SigningKeyPair(bytes(32)),
        table,
        name="replay",
        role=SPECTATOR,
        randomness=lambda n: bytes(n),
    )
    ops = 0
    for i, (kind, payload) in enumerate(records[1:]):
        if kind != RecordKind.LOG_OP or not isinstance(payload, bytes):
            raise StoreError(f"{path}: record {i + 2} is not an op")
        ops += 1
        # One op per millisecond of pretend time: the gate's rate limit is not a judge here.
        watcher.receive(payload, ("replay", 0), i * 0.001)
    watcher.sync.close_log()
    for log in watcher.sync.epochs.values():
        for participant in log.participants:
            log.hear(participant, END_OF_LOG)
    watcher.tick(ops * 0.001 + 1.0)
    watcher.outgoing()
    result = ReplayResult(table, name, ops, watcher)
    result.finals = [e for e in watcher.events() if isinstance(e, RoundFinal)]
    counters = watcher.sync.counters.as_dict()
    result.refused = {
        reason: n
        for reason, n in counters.items()
        if n and reason not in (DropReason.REPLAYED.value, DropReason.RATE_LIMITED.value)
    }
    pending = sum(len(p) for p in watcher.sync.pending.values())
    if pending:
        result.refused["missing_deps"] = pending
    return result
