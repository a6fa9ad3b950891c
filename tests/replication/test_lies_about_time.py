"""Lies about time: un-seeing the call, and breaking a heartbeat's promise.

Regression tests for issue 10: after RoundFinal a non-caller could sign MOVEs chained after
its own REVEAL with deps from before the call, and they counted as "in the air"; a peer whose
heartbeats carried its real clock while its ops were stamped low made "stable" states change.
"""

from __future__ import annotations

from collections.abc import Callable

from nerts_p2p.game.position import state_hash
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import ProtocolViolation, StableState
from protocol.clocks import LamportClock
from protocol.envelope import seal
from protocol.errors import DropReason
from protocol.messages import Kind, Op, op_body
from protocol.sync import SyncPeer
from tools.mesh import PeerMesh


def _end_op(mesh: PeerMesh) -> Op:
    rnd = mesh.replicas[0].rounds[1]
    assert rnd.end_position is not None
    return rnd.steps[rnd.end_position].op


def test_un_seeing_the_call_changes_nothing_after_round_final() -> None:
    mesh = PeerMesh(players=3, rules=Rules(seats=3), seed=5)
    mesh.run(until=1200, rounds=1)
    assert all(1 in f for f in mesh.finals)
    finals = [f[1] for f in mesh.finals]
    hashes = mesh.state_hashes()
    end = _end_op(mesh)
    attacker_index = next(i for i, r in enumerate(mesh.replicas) if r.me != end.author)
    attacker = mesh.replicas[attacker_index].sync
    reveal = attacker.logs[attacker.me][-1]
    assert reveal.kind == Kind.REVEAL
    caller_at = attacker.epochs[1].index[end.author]
    unseen = list(reveal.round_deps)
    unseen[caller_at] = end.seq - 1  # "I never saw the call"
    for deps in (unseen, list(reveal.round_deps)):
        body = op_body(
            Kind.MOVE, attacker.table, attacker.me, reveal.seq + 1, reveal.hash,
            attacker.clock.value + 1, 1, deps, "turn",
        )  # fmt: skip
        datagram = seal(attacker.key, body)
        for i, replica in enumerate(mesh.replicas):
            if i != attacker_index:
                replica.receive(datagram, attacker_index, mesh.now)
        mesh.run_for(5.0)
    assert [f[1] for f in mesh.finals] == finals
    assert mesh.state_hashes() == hashes
    for i, events in enumerate(mesh.events):
        if i != attacker_index:
            assert any(
                isinstance(e, ProtocolViolation) and e.author == attacker.me for e in events
            ), "the MOVE after its author's REVEAL is refused and reported"


def _stamp_low(sync: SyncPeer) -> None:
    """Make `sync` sign its round ops as if it had seen nothing since its previous one (the
    same deps) and stamp them as low as the Lamport rules then allow, while its clock, and so
    its heartbeats, keep the real time and what it really holds."""
    honest_author: Callable[[Kind, int, object], Op] = sync.author
    honest_deps = sync.deps_for

    def author(kind: Kind, epoch: int, payload: object) -> Op:
        own = [
            op for op in sync.logs.get(sync.me, []) if op.epoch == epoch and op.kind != Kind.START
        ]
        if epoch == 0 or kind == Kind.START or not own:
            return honest_author(kind, epoch, payload)
        log = sync.epochs[epoch]
        seqs = list(own[-1].round_deps)
        seqs[log.index[sync.me]] = sync.delivered(sync.me)
        deps: list[object] = list(seqs)
        seen = [
            sync.logs[p][n - 1].lamport for p, n in zip(log.participants, seqs, strict=True) if n
        ]
        real = sync.clock
        sync.clock = LamportClock(max([log.start.lamport, *seen]))
        sync.deps_for = lambda *_: deps  # type: ignore[method-assign]
        try:
            return honest_author(kind, epoch, payload)
        finally:
            sync.clock = real
            sync.deps_for = honest_deps  # type: ignore[method-assign]

    sync.author = author  # type: ignore[method-assign]


def test_breaking_heartbeat_promises_expels_the_liar_and_stable_states_never_change() -> None:
    mesh = PeerMesh(players=3, rules=Rules(seats=3), seed=2)
    liar = mesh.replicas[2]
    _stamp_low(liar.sync)
    mesh.run(until=1200, rounds=1)
    honest = range(2)
    verdicts = {mesh.replicas[i].sync.expelled.get(liar.me) for i in honest}
    assert len(verdicts) == 1
    assert None not in verdicts, "every honest peer expelled the liar"
    # Each reached it on its own evidence or on the pair another relayed.
    assert all(liar.me in mesh.replicas[i].sync.lies for i in honest)
    assert sum(mesh.replicas[i].sync.counters[DropReason.BROKEN_PROMISE] for i in honest) >= 2
    for i in honest:
        rnd = mesh.replicas[i].rounds[1]
        announced = [e for e in mesh.events[i] if isinstance(e, StableState) and e.round == 1]
        assert [e.stable_ops for e in announced] == sorted({e.stable_ops for e in announced})
        # Every stable state once announced is still the state after that many ops.
        for event in announced:
            assert state_hash(rnd.states[event.stable_ops]) == event.state_hash
    assert all(1 in f for f in mesh.finals[:2]), "the round still ends for the honest peers"
