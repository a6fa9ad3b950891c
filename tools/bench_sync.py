"""Replication benchmarks (`nerts-p2p bench sync`). Measurements, not tests: medians of
repeated runs with their spread, rates compared as ratios within one run."""

from __future__ import annotations

import hashlib
import statistics
import time
from collections.abc import Hashable
from dataclasses import dataclass

from nerts_p2p.game.bots import CASUAL
from nerts_p2p.game.position import state_hash
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import TableReplica
from protocol.messages import SPECTATOR, Kind, Op, decode
from protocol.signing import SigningKeyPair, verify
from protocol.sync import SyncPeer
from tools.bench_engine import rate, summary
from tools.mesh import Faults, PeerMesh, seeded_bytes
from tools.progress import SILENT, ProgressLine

#: Every rate here is of this thread's CPU time: on a shared machine wall time measures the
#: other processes too (the catch-up below is measured the same way).
CPU = time.thread_time


def _recorded_round(seed: int) -> PeerMesh:
    mesh = PeerMesh(players=4, rules=Rules(seats=4), seed=seed, levels=(CASUAL,) * 4)
    mesh.run(until=1200, rounds=1)
    return mesh


def gate_benchmarks(repeats: int, seed: int = 1) -> dict[str, dict[str, float]]:
    mesh = _recorded_round(seed)
    host = mesh.replicas[0]
    all_ops = [op for log in host.sync.logs.values() for op in log]
    moves = [op for op in all_ops if op.kind == Kind.MOVE]
    # Deliver in an order every receiver accepts: by Lamport time (causal order).
    datagrams = [op.datagram() for op in sorted(all_ops, key=lambda o: (o.lamport, o.author))]
    keys = host.sync.keys

    def raw_verify() -> int:
        for op in moves:
            verify(keys[op.author], op.body, op.signature)
        return len(moves)

    def full_gate() -> int:
        # A fresh peer takes every op of the round through the whole receive path: the gate,
        # then chain, Lamport, membership, causal delivery and the round's order.
        peer = SyncPeer(mesh.replicas[-1].sync.key, host.sync.table, rate_per_s=1e9, burst=10**9)
        for datagram in datagrams:
            peer.receive(datagram, "bench", 0.0)
        assert peer.vector() == host.sync.vector(), "the bench peer missed ops"
        return len(datagrams)

    def sign() -> int:
        from protocol.messages import seal_op

        author = host.sync.key
        for op in moves[:200]:
            body = [
                int(op.kind),
                op.table,
                author.key_id,
                op.seq,
                op.prev,
                op.lamport,
                op.epoch,
                list(op.round_deps),
                op.payload,
            ]
            seal_op(author, body)
        return min(200, len(moves))

    def decode_gate() -> int:
        # Size, unpack with limits, schema, table id, then the signature: every step of the
        # gate before an op meets the sync state (chain, Lamport, membership, delivery).
        for datagram in move_datagrams:
            message = decode(datagram, table=host.sync.table)
            assert isinstance(message, Op)
            verify(keys[message.author], message.body, message.signature)
        return len(move_datagrams)

    move_datagrams = [op.datagram() for op in moves]
    # Interleave the measures within each repeat and compare them as ratios inside one
    # repeat: this machine is shared, so absolute rates drift between repeats.
    raw_rates, gate_rates, full_rates = [], [], []
    for _ in range(repeats):
        raw_rates.append(rate(raw_verify, 1, CPU)["median"])
        gate_rates.append(rate(decode_gate, 1, CPU)["median"])
        full_rates.append(rate(full_gate, 1, CPU)["median"])
    sizes = [len(op.datagram()) for op in moves]
    return {
        "raw_ed25519_verify_per_s": summary(raw_rates),
        "decode_gate_ops_per_s": summary(gate_rates),
        "decode_gate_cost_over_bare_verify": summary(
            [r / g for r, g in zip(raw_rates, gate_rates, strict=True)]
        ),
        "full_receive_ops_per_s": summary(full_rates),
        "full_receive_cost_over_bare_verify": summary(
            [r / f for r, f in zip(raw_rates, full_rates, strict=True)]
        ),
        "ops_signed_per_s": rate(sign, repeats, CPU),
        "bytes_per_move_datagram": summary([float(s) for s in sizes]),
    }


def fold_benchmark(repeats: int, seed: int = 1) -> dict[str, float]:
    mesh = _recorded_round(seed)
    rnd = mesh.replicas[1].current_round
    assert rnd is not None

    def refold() -> int:
        rnd.fold_from(0)
        return len(rnd.steps)

    return rate(refold, repeats, CPU)


def heal_time(seed: int, heartbeat: float = 0.075) -> float:
    """Simulated seconds from the end of a partition to equal vectors and equal stable
    hashes on every peer (bots paused at the heal, so nothing new is authored)."""
    partition_end = 12.0
    link = Faults(
        drop=0.0, delay=(0.001, 0.004), partitions=((4.0, partition_end, frozenset({0, 1})),)
    )
    mesh = PeerMesh(players=4, rules=Rules(seats=4), seed=seed, faults=link, heartbeat=heartbeat)
    mesh.max_rounds = 1
    while mesh.now < partition_end and mesh.step():
        pass
    mesh.bots_paused = True
    while mesh.step():
        vectors = {r.sync.vector() for r in mesh.replicas}
        stable = set(mesh.stable_hashes())
        full = {state_hash(r.current_round.state) for r in mesh.replicas if r.current_round}
        if len(vectors) == 1 and len(stable) == 1 and stable == full:
            return mesh.now - partition_end
        if mesh.now > partition_end + 60:
            break
    raise AssertionError("the mesh did not settle within a minute of simulated time")


@dataclass
class CatchUp:
    simulated_s: float  # from arriving to holding every op and the round's final result
    work_s: float  # this machine's time inside the late spectator's receive and tick
    verify_s: float  # decoding each of those ops from its datagram and verifying its signature
    bare_verify_s: float  # the Ed25519 verifications of those ops alone
    ops: int


#: What reaches the late spectator, in order: (time, datagram and its source) or (time, None)
#: for a tick. Replayed into a fresh spectator with the same key it does exactly the same.
Trace = list[tuple[float, tuple[bytes, Hashable] | None]]


def remade_spectator(mesh: PeerMesh, name: str = "late") -> TableReplica:
    """The spectator `PeerMesh.add_spectator(name)` makes, made again (same key, same
    randomness): given what reached that one, it does exactly the same."""
    key = SigningKeyPair(hashlib.sha256(f"key/{mesh.seed}/{name}".encode()).digest())
    return TableReplica.joining(
        key,
        mesh.replicas[0].sync.table,
        name=name,
        role=SPECTATOR,
        randomness=seeded_bytes(f"{mesh.seed}/{name}"),
        heartbeat_interval=mesh.heartbeat,
    )


def _caught_up(late: TableReplica, host: TableReplica) -> bool:
    return (
        late.sync.vector() == host.sync.vector()
        and late.current_round is not None
        and late.rounds[1].final is not None
    )


def recording(replica: TableReplica) -> Trace:
    """What reaches `replica` from now on, in order (its receive and tick are wrapped, on
    the instance, for the benchmark)."""
    trace: Trace = []
    receive, tick = replica.receive, replica.tick

    def recording_receive(datagram: bytes, source: Hashable, now: float) -> None:
        trace.append((now, (datagram, source)))
        receive(datagram, source, now)

    def recording_tick(now: float) -> None:
        trace.append((now, None))
        tick(now)

    replica.receive = recording_receive  # type: ignore[method-assign]
    replica.tick = recording_tick  # type: ignore[method-assign]
    return trace


def record_catch_up(seed: int) -> tuple[PeerMesh, Trace, float]:
    """A spectator arrives after a whole 4-seat round and catches up in the mesh; returns the
    mesh, what reached the spectator, and the simulated seconds until it held every op and
    the round's final result."""
    mesh = _recorded_round(seed)
    host = mesh.replicas[0]
    late = mesh.add_spectator()
    trace = recording(late)
    arrived = mesh.now
    while not _caught_up(late, host):
        if not mesh.step() or mesh.now > arrived + 60:
            raise AssertionError("the late spectator did not catch up within a minute")
    return mesh, trace, mesh.now - arrived


def replay_catch_up(mesh: PeerMesh, trace: Trace) -> float:
    """This machine's seconds inside a fresh late spectator's receive and tick while it takes
    the recorded catch-up again (its JOIN, as the mesh's lobby signs it, is not counted)."""
    host = mesh.replicas[0]
    late = remade_spectator(mesh)
    late.request_table(host.me, 0, trace[0][0])
    work = 0.0
    for now, datagram in trace:
        start = time.thread_time()
        if datagram is None:
            late.tick(now)
        else:
            late.receive(datagram[0], datagram[1], now)
        work += time.thread_time() - start
        if not late.is_member and late.sync.open_op is not None:
            late.join()
        late.outgoing()
        late.events()
    assert _caught_up(late, host), "the replayed spectator did not catch up"
    return work


def verify_alone(ops: list[Op], keys: dict[bytes, bytes], table: bytes) -> tuple[float, float]:
    """Seconds to take each op from its datagram (unpack, schema, table id) and verify its
    signature, nothing else; and the bare Ed25519 verifications alone."""
    datagrams = [(op.datagram(), keys[op.author]) for op in ops]
    start = time.thread_time()
    for datagram, public_key in datagrams:
        message = decode(datagram, table=table)
        assert isinstance(message, Op)
        verify(public_key, message.body, message.signature)
    decoded = time.thread_time() - start
    start = time.thread_time()
    for op in ops:
        verify(keys[op.author], op.body, op.signature)
    return decoded, time.thread_time() - start


def catch_up(seed: int, replays: int = 5) -> CatchUp:
    """A spectator that arrives after a whole 4-seat round: how long it takes to hold every op
    and reach the round's final result, and what that costs beside verifying the ops alone.
    The recorded catch-up is replayed `replays` times, interleaved with the verification
    alone, and the medians are taken (this machine is shared)."""
    mesh, trace, simulated = record_catch_up(seed)
    host = mesh.replicas[0]
    ops = [op for log in host.sync.logs.values() for op in log]
    work, verified, bare = [], [], []
    for _ in range(replays):
        work.append(replay_catch_up(mesh, trace))
        decoded, alone = verify_alone(ops, host.sync.keys, host.sync.table)
        verified.append(decoded)
        bare.append(alone)
    return CatchUp(
        simulated,
        statistics.median(work),
        statistics.median(verified),
        statistics.median(bare),
        len(ops),
    )


def sync_benchmarks(
    repeats: int = 5, progress: ProgressLine = SILENT
) -> dict[str, dict[str, float]]:
    progress.expect(2 + 2 * repeats)
    results = gate_benchmarks(repeats)
    progress.step("the gate")
    results["ops_folded_per_s"] = fold_benchmark(repeats)
    progress.step("the fold")
    heals = []
    for seed in range(repeats):
        heals.append(heal_time(seed))
        progress.step(f"a healed partition {seed + 1} of {repeats}")
    results["heal_to_equal_stable_hash_s"] = summary(heals)
    results["heal_in_heartbeat_intervals"] = summary([h / 0.075 for h in heals])
    catch_ups = []
    for seed in range(1, repeats + 1):
        catch_ups.append(catch_up(seed))
        progress.step(f"a late spectator's catch-up {seed} of {repeats}")
    results["late_spectator_catch_up_simulated_s"] = summary([c.simulated_s for c in catch_ups])
    results["late_spectator_catch_up_work_s"] = summary([c.work_s for c in catch_ups])
    results["late_spectator_verify_only_s"] = summary([c.verify_s for c in catch_ups])
    # The aim: catching up costs at most 1.5 times verifying the same ops (each taken from its
    # datagram and its signature checked: what any receiver must do, nothing else).
    results["late_spectator_catch_up_over_verify"] = summary(
        [c.work_s / c.verify_s for c in catch_ups]
    )
    results["late_spectator_catch_up_over_bare_ed25519"] = summary(
        [c.work_s / c.bare_verify_s for c in catch_ups]
    )
    results["late_spectator_ops"] = summary([float(c.ops) for c in catch_ups])
    return results
