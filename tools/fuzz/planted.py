"""Deliberately broken peers, to prove that the fuzzer finds what it is built to find.

Each is made in the fuzzer's harness by subclassing or wrapping the real classes; the core
(`protocol/sync.py`, `nerts_p2p/table/replica.py`) is never edited. A test switches one on
(`TableConfig.planted`) and checks that a campaign reports it with a reproducer that
replays.

- `bad-signature`: accepts ops and messages whatever their signature says;
- `arrival-order`: folds moves in the order they arrive, not in the agreed total order;
- `seq-reuse`: on restart it has forgotten its store, so it signs new ops with seqs it
  already used (only shows under a `restart` fault);
- the fourth of the issue, "never ends a round when a player vanishes", needs no planting on
  this branch: no peer ends a round without its vanished player yet (departure by agreement
  is issue 10's work in progress), and a `kill` fault shows it as a liveness finding.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Final

import protocol.sync as sync_module
from nerts_p2p.table.replica import TableReplica
from protocol import signing
from protocol.messages import Kind
from protocol.signing import SigningKeyPair
from protocol.sync import OpDelivered, SyncPeer

if TYPE_CHECKING:
    from tools.fuzz.peers import ReplicaFactory
    from tools.fuzz.table import FuzzTable, TableConfig

PLANTED: Final = ("bad-signature", "arrival-order", "seq-reuse")


def _no_check(public_key: bytes, body: bytes, signature: bytes) -> None:
    """The broken peer's idea of a signature check."""


class AcceptsBadSignatures(SyncPeer):
    """Runs the real gate with the signature check switched off (the simulation is one
    thread, so swapping the module's `verify` for the length of one call is exact)."""

    def receive(self, datagram: bytes, source: Hashable, now: float) -> None:
        setattr(sync_module, "verify", _no_check)  # noqa: B010 (the module does not export it)
        try:
            super().receive(datagram, source, now)
        finally:
            setattr(sync_module, "verify", signing.verify)  # noqa: B010


class FoldsInArrivalOrder(TableReplica):
    """Appends each delivered move to its fold as it arrives, ignoring where it sorts."""

    def _on_delivered(self, event: OpDelivered, refold: dict[int, int]) -> None:
        op = event.op
        rnd = self.rounds.get(op.epoch)
        if op.kind == Kind.MOVE and rnd is not None and event.position is not None:
            rnd.fold_one(op)
            return
        super()._on_delivered(event, refold)


def planted_factory(config: TableConfig) -> ReplicaFactory | None:
    """The replica factory that plants `config.planted` at `config.planted_peer`."""
    if not config.planted:
        return None
    if config.planted not in PLANTED:
        raise ValueError(f"unknown planted bug {config.planted!r}; known: {', '.join(PLANTED)}")
    from tools.fuzz.peers import default_factory

    def factory(
        table: FuzzTable, index: int, key: SigningKeyPair, role: int, restarted: bool
    ) -> TableReplica:
        if index != config.planted_peer or config.planted == "seq-reuse":
            return default_factory(table, index, key, role, restarted)
        replica = default_factory(table, index, key, role, restarted)
        # Same fields, broken behaviour: the class is swapped rather than the peer rebuilt,
        # so the broken peer is dealt exactly what the honest one would be.
        if config.planted == "arrival-order":
            replica.__class__ = FoldsInArrivalOrder
        else:
            replica.sync.__class__ = AcceptsBadSignatures
        return replica

    return factory


def forgets_store(config: TableConfig, index: int) -> bool:
    return config.planted == "seq-reuse" and index == config.planted_peer
