"""Deliberately broken peers, to prove that the fuzzer finds what it is built to find.

Each is made in the fuzzer's harness by subclassing or wrapping the real classes; the core
(`protocol/sync*.py`, `nerts_p2p/table/`) is never edited. A test switches one on
(`TableConfig.planted`) and checks that a campaign reports it with a reproducer that
replays.

- `bad-signature`: accepts ops and messages whatever their signature says;
- `arrival-order`: folds a round's ops in the order they arrive, not in the agreed total
  order (re-folds too). Ops of different authors commute unless they race for one
  foundation place, and `delay` (a few hundred ms, random per datagram) almost never made
  two bots race: 10 seeds of 4 expert players showed no race at all. A `lag` fault (one
  peer's link to some others slow by 0.2-1.2 s, in order) makes the lagging peer's moves
  reach those peers late, so it races them, and peers see the racers in different orders:
  the checker's per-race winners (and the state hashes) then differ;
- `seq-reuse`: on restart it has forgotten its store (it still knows the table: the
  others' ops and its own JOIN) and signs at once, before the table has shown it its own
  chain, so its next op reuses a seq (only shows under a `restart` fault). Since private
  tables (issue 6) a restarted peer that knows nothing must be admitted again, which
  quietly stopped the old planted peer (one that forgot the table too) from signing at all;
- `never-departs`: every peer ignores silence and departures (no DEPART vote, kind 9, and
  no applying one), so a round whose player vanished never ends; a `kill` fault shows it
  as a liveness finding (main ends such a round by departure: an honest `kill` is clean).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Final

import protocol.sync as sync_module
import protocol.sync_parking as parking_module
from nerts_p2p.game.errors import NertsError
from nerts_p2p.table.replica import ReplicatedRound, TableReplica
from protocol import signing
from protocol.errors import LocalProtocolError
from protocol.messages import Kind, Op
from protocol.signing import SigningKeyPair
from protocol.sync import DeparturesChanged, OpDelivered, SyncPeer

if TYPE_CHECKING:
    from tools.fuzz.peers import ReplicaFactory
    from tools.fuzz.table import FuzzTable, TableConfig

PLANTED: Final = ("bad-signature", "arrival-order", "seq-reuse", "never-departs")


def _no_check(public_key: bytes, body: bytes, signature: bytes) -> None:
    """The broken peer's idea of a signature check."""


class AcceptsBadSignatures(SyncPeer):
    """Runs the real gate with the signature check switched off (the simulation is one
    thread, so swapping the module's `verify` for the length of one call is exact)."""

    def receive(self, datagram: bytes, source: Hashable, now: float) -> None:
        # Both modules that verify: the gate (sync messages) and parking (ops).
        for module in (sync_module, parking_module):
            setattr(module, "verify", _no_check)  # noqa: B010 (the module does not export it)
        try:
            super().receive(datagram, source, now)
        finally:
            for module in (sync_module, parking_module):
                setattr(module, "verify", signing.verify)  # noqa: B010


class FoldsInArrivalOrder(TableReplica):
    """Folds every op of a round in the order it arrived, ignoring where it sorts.

    Appending at arrival alone is not enough since version 2: the real replica re-folds a
    round from the log's order whenever a departure, an expulsion or any op that sorts
    before the fold's end arrives (a MIX, a REVEAL), which quietly repaired the planted
    bug. So this peer's re-fold replays its arrival order too."""

    def _arrivals(self, epoch: int) -> list[Op]:
        arrived: dict[int, list[Op]] = self.__dict__.setdefault("_arrived", {})
        return arrived.setdefault(epoch, [])

    def _on_delivered(self, event: OpDelivered, refold: dict[int, int]) -> None:
        op = event.op
        rnd = self.rounds.get(op.epoch)
        if op.kind in (Kind.START, Kind.SEED_SHARE) or rnd is None or event.position is None:
            super()._on_delivered(event, refold)
            return
        if op.kind == Kind.REVEAL:
            rnd.reveals[op.author] = op
        self._arrivals(op.epoch).append(op)
        was_ended = rnd.end_position is not None
        rnd.fold_one(op)
        if not was_ended and rnd.end_position is not None:
            self._announce_end(rnd)

    def _refold(self, rnd: ReplicatedRound, position: int) -> None:
        was_ended = rnd.end_position is not None
        del rnd.steps[:]
        del rnd.states[1:]
        rnd.end_position = None
        for op in self._arrivals(rnd.number):
            rnd.fold_one(op)
        if not was_ended and rnd.end_position is not None:
            self._announce_end(rnd)


class NeverDeparts(TableReplica):
    """Never votes a silent participant out, and ignores the table's departures: a round
    with a vanished player never ends (the defect main fixed with DEPART, kind 9)."""

    def _watch_presence(self, now: float) -> None:
        return

    def _on_departed(self, event: DeparturesChanged, refold: dict[int, int]) -> None:
        return


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
        replica = default_factory(table, index, key, role, restarted)
        # Same fields, broken behaviour: the class is swapped rather than the peer rebuilt,
        # so the broken peer is dealt exactly what the honest one would be.
        if config.planted == "never-departs":
            # Every peer: one honest peer's vote would end the round without the vanished.
            replica.__class__ = NeverDeparts
            return replica
        if config.planted == "seq-reuse":
            if restarted and index == config.planted_peer:
                return _forgetful_restore(table, index, key, role)
            return replica
        if index != config.planted_peer:
            return replica
        if config.planted == "arrival-order":
            replica.__class__ = FoldsInArrivalOrder
        else:
            replica.sync.__class__ = AcceptsBadSignatures
        return replica

    return factory


def _forgetful_restore(
    table: FuzzTable, index: int, key: SigningKeyPair, role: int
) -> TableReplica:
    """The seq-reuse peer back from a crash: its own ops are gone but for its JOIN, and it
    signs an op at once (a DEPART vote, or READY in the lobby) with the seq after its
    JOIN, which it had used."""
    from tools.mesh import seeded_bytes

    peer = table.peers[index]
    known = [
        op.datagram()
        for log in peer.replica.sync.logs.values()
        for op in log
        if op.author != key.key_id or op.seq == 1
    ]
    replica = TableReplica.restore(
        key,
        table.table_id,
        known,
        name=f"p{index}",
        role=role,
        randomness=seeded_bytes(f"forgetful/{index}/{peer.restarts}"),
        heartbeat_interval=table.config.heartbeat,
    )
    # It forgot that it ever sat here, so it does not wait to catch up on its own chain
    # (PROTOCOL.md 14's quiet restart): it authors at once.
    replica.sync.resuming = None
    rnd = replica.current_round
    try:
        if rnd is not None and replica.me in rnd.log.index:
            # A vote against another participant: an op that changes nothing by itself.
            other = next(p for p in rnd.log.participants if p != replica.me)
            replica.sync.author(Kind.DEPART, rnd.number, [other, replica.sync.delivered(other)])
        elif replica.is_member:
            replica.ready()
    except (LocalProtocolError, NertsError):
        pass  # nothing it could sign: no reuse this time
    return replica


def forgets_store(config: TableConfig, index: int) -> bool:
    return config.planted == "seq-reuse" and index == config.planted_peer
