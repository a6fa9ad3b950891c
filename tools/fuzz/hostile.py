"""`hostile` mode: scripted adversaries join a real table, and the report says for each
whether the honest peers detected it, contained it, and how fast.

Each script is one more peer at the table (or an outsider) that the fuzzer controls. It runs
the real replica code and then lies: it rewrites what it sends (`Peer.transform`), or signs
ops its own replica would refuse, or floods. The honest peers are judged exactly as in the
other modes (liveness, agreement, invariants, crashes), plus:

- **detected**: every honest peer registered the attack, as a protocol violation or an
  expulsion naming the adversary, a cheater verdict on its seat, or drop counters rising for
  the reason the attack should cause. The time is from the attack's start to the last honest
  peer's detection, in simulated seconds.
- **contained**: nothing the honest peers share went wrong (the checker finds nothing).

An adversary that is neither detected nor contained is a finding; so is the blind peer when
it is not detected, because its harm (winning races it should lose) breaks no check.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from typing import Any, Final

from protocol.clocks import LamportClock
from protocol.envelope import seal
from protocol.errors import DropReason, RemoteProtocolError
from protocol.messages import NO_PREV, Kind, Op, decode, derive_table_id, op_body, seal_op
from protocol.signing import SigningKeyPair
from protocol.sync import SyncPeer
from tools.fuzz.findings import Finding
from tools.fuzz.link import check
from tools.fuzz.schedule import Schedule
from tools.fuzz.table import FuzzTable, TableConfig

ATTACK_AT: Final = 3.0  # simulated second the adversary starts (the round is on by then)
ADVERSARIES: Final = (
    "forger",
    "replayer",
    "equivocator",
    "backdater",
    "blind",
    "non_member",
    "spectator_mover",
    "reveal_cheat",
    "lobby_wedger",
    "join_flooder",
    "datagram_flooder",
)


@dataclass
class HostileResult:
    name: str
    detected: bool
    contained: bool
    detect_seconds: float | None
    detail: str
    table: FuzzTable
    finding: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "adversary": self.name,
            "detected": self.detected,
            "contained": self.contained,
            "detect_seconds": self.detect_seconds,
            "detail": self.detail,
            "problems": [p.to_json() for p in self.table.problems[:10]],
        }


@dataclass
class Watch:
    """When each honest peer first noticed: by events naming the adversary, or by a drop
    counter rising after the attack began."""

    adversary: bytes
    reasons: tuple[DropReason, ...] = ()
    seen: dict[int, float] = field(default_factory=dict)
    baseline: dict[int, int] = field(default_factory=dict)


def _reauthor(op: Op, key: SigningKeyPair, **changes: Any) -> Op:
    fields = {
        "kind": op.kind,
        "table": op.table,
        "author": op.author,
        "seq": op.seq,
        "prev": op.prev,
        "lamport": op.lamport,
        "epoch": op.epoch,
        "deps": [list(d) for d in op.lobby_deps] if op.epoch == 0 else list(op.round_deps),
        "payload": op.payload,
    }
    fields.update(changes)
    payload = fields.pop("payload")
    return seal_op(key, op_body(payload=_thaw(payload), **fields))


def _thaw(value: object) -> object:
    return [_thaw(v) for v in value] if isinstance(value, tuple) else value


def _own_ops(
    table: FuzzTable, peer_index: int, out: list[tuple[Hashable, bytes]]
) -> list[tuple[int, Op | None]]:
    me = table.peers[peer_index].key.key_id
    found: list[tuple[int, Op | None]] = []
    for i, (_, datagram) in enumerate(out):
        try:
            message = decode(datagram, table=table.table_id)
        except RemoteProtocolError:
            continue
        if isinstance(message, Op) and message.author == me:
            found.append((i, message))
    return found


class BlindSyncPeer(SyncPeer):
    """Admits to seeing nothing but its own ops (and keeps its clock low): its moves sort
    early and win races. Its deps name only itself; its clock only clears the START floor."""

    def deps_for(self, kind: Kind, epoch: int, payload: object) -> list[object]:
        deps = super().deps_for(kind, epoch, payload)
        if epoch == 0 or kind == Kind.START:
            return deps
        log = self.epochs[epoch]
        return [d if p == self.me else 0 for p, d in zip(log.participants, deps, strict=True)]

    def author(self, kind: Kind, epoch: int, payload: object) -> Op:
        if epoch and epoch in self.epochs:
            own = self.logs[self.me][-1].lamport if self.logs.get(self.me) else 0
            floor = max(own, self.epochs[epoch].start.lamport)
            self.clock = LamportClock(floor)
        return super().author(kind, epoch, payload)


def _table_with_adversary(config: TableConfig, *, spectator: bool = False) -> FuzzTable:
    cfg = replace(
        config, players=config.players + (0 if spectator else 1), spectators=1 if spectator else 0
    )
    table = FuzzTable(cfg, Schedule(cfg.seed))
    table.peers[-1].honest = False
    # The host seats exactly the honest players plus a playing adversary.
    return table


def run_adversary(name: str, config: TableConfig) -> HostileResult:
    if name not in ADVERSARIES:
        raise ValueError(f"unknown adversary {name!r}; known: {', '.join(ADVERSARIES)}")
    setup = _SETUPS[name]
    table, watch = setup(config)
    _watch(table, watch)
    table.run(until=ATTACK_AT + 150.0)
    check(table)
    return _judge(name, table, watch)


def _watch(table: FuzzTable, watch: Watch) -> None:
    def on_step(kind: str, index: int, sent: int, took: float) -> None:
        peer = table.peers[index]
        if not peer.honest or index in watch.seen or table.now < ATTACK_AT:
            return
        counters = peer.replica.sync.counters
        total = sum(counters[r] for r in watch.reasons)
        if index not in watch.baseline:
            watch.baseline[index] = total
        elif total > watch.baseline[index]:
            watch.seen[index] = table.now
            return
        for event in peer.events[-8:]:
            author = getattr(event, "author", None)
            cheaters = getattr(event, "cheaters", None)
            named = author == watch.adversary
            if cheaters is not None:
                rnd = peer.replica.rounds.get(getattr(event, "round", 0))
                named = named or any(
                    rnd is not None and rnd.dealer.get(seat) == watch.adversary for seat in cheaters
                )
            if named:
                watch.seen[index] = table.now
                return

    table.watchers.append(on_step)


def _judge(name: str, table: FuzzTable, watch: Watch) -> HostileResult:
    honest = [p.index for p in table.honest_live()]
    detected = bool(honest) and all(i in watch.seen for i in honest)
    contained = not table.problems
    seconds = max(watch.seen.values()) - ATTACK_AT if detected and watch.seen else None
    kinds = sorted({p.kind for p in table.problems})
    detail = (
        ("detected" if detected else f"detected by {len(watch.seen)} of {len(honest)} honest peers")
        + (f" in {seconds:.2f}s" if seconds is not None else "")
        + ("; contained" if contained else f"; not contained: {', '.join(kinds)}")
    )
    # A stuck or split table is a finding even when the attack was noticed; the blind peer
    # breaks no check (its harm is races won unfairly), so only detecting it counts.
    finding = not contained or (name == "blind" and not detected)
    if name == "blind" and not detected:
        detail += "; its moves claim to have seen nothing and sort first (PROTOCOL.md 12)"
    return HostileResult(name, detected, contained, seconds, detail, table, finding)


def hostile_finding(result: HostileResult, config: TableConfig) -> Finding:
    table = result.table
    return Finding(
        "hostile",
        f"{result.name}: {result.detail}",
        list(table.problems),
        {"mode": "hostile", "adversary": result.name, "config": config.to_json()},
        list(table.history),
    )


# --- the adversaries -------------------------------------------------------------------------

Setup = Callable[[TableConfig], tuple[FuzzTable, Watch]]


def _forger(config: TableConfig) -> tuple[FuzzTable, Watch]:
    """Sends MOVEs in an honest player's name, signed with its own key."""
    table = _table_with_adversary(config)
    bad = table.peers[-1]
    victim = table.peers[1]
    rng = random.Random(f"forger/{config.seed}")

    def forge(t: FuzzTable) -> None:
        sync = victim.replica.sync
        rnd = victim.replica.current_round
        if rnd is not None:
            seq = sync.delivered(sync.me) + 1
            body = op_body(
                Kind.MOVE,
                t.table_id,
                sync.me,
                seq,
                sync.logs[sync.me][-1].hash,
                sync.clock.value + 1,
                rnd.number,
                [sync.delivered(p) for p in rnd.log.participants],
                "turn",
            )
            # The victim's name on it, the forger's signature under it.
            datagram = seal(bad.key, body)
            for p in t.peers[:-1]:
                t.inject(t.now, p.index, datagram, bad.index)
        t.call_at(t.now + 0.25 + rng.random() * 0.25, forge)

    table.call_at(ATTACK_AT, forge)
    return table, Watch(victim.key.key_id, (DropReason.BAD_SIGNATURE,))


def _replayer(config: TableConfig) -> tuple[FuzzTable, Watch]:
    """Captures the table's traffic and sends it all again, in bursts, to everyone."""
    table = _table_with_adversary(config)
    bad = table.peers[-1]
    captured: list[bytes] = []
    table.taps.append(lambda s, d, data: captured.append(data) if len(captured) < 5000 else None)
    rng = random.Random(f"replayer/{config.seed}")

    def replay(t: FuzzTable) -> None:
        for datagram in rng.sample(captured, min(200, len(captured))):
            t.inject(t.now, rng.randrange(len(t.peers) - 1), datagram, bad.index)
        t.call_at(t.now + 0.5, replay)

    table.call_at(ATTACK_AT, replay)
    return table, Watch(bad.key.key_id, (DropReason.REPLAYED,))


def _equivocator(config: TableConfig) -> tuple[FuzzTable, Watch]:
    """Each of its moves goes to half the table as is and to the other half changed."""
    table = _table_with_adversary(config)
    bad = table.peers[-1]

    def transform(t: FuzzTable, out: list[tuple[Hashable, bytes]]) -> list[tuple[Hashable, bytes]]:
        if t.now < ATTACK_AT:
            return out
        result = list(out)
        for i, op in _own_ops(t, bad.index, out):
            if op is None or op.kind != Kind.MOVE:
                continue
            other = _reauthor(op, bad.key, payload="stuck" if op.payload != "stuck" else "turn")
            half = len(t.peers) // 2
            result[i] = ("drop", b"")
            for p in range(len(t.peers) - 1):
                result.append((p, op.datagram() if p < half else other.datagram()))
        return [(d, g) for d, g in result if d != "drop"]

    bad.transform = transform
    return table, Watch(bad.key.key_id, (DropReason.EQUIVOCATION,))


def _backdater(config: TableConfig) -> tuple[FuzzTable, Watch]:
    """Stamps its first move after the attack just above its own previous op."""
    table = _table_with_adversary(config)
    bad = table.peers[-1]
    done: list[bool] = []

    def transform(t: FuzzTable, out: list[tuple[Hashable, bytes]]) -> list[tuple[Hashable, bytes]]:
        if t.now < ATTACK_AT or done:
            return out
        result = list(out)
        sync = bad.replica.sync
        for i, op in _own_ops(t, bad.index, out):
            if op is None or op.kind != Kind.MOVE or op.seq < 2:
                continue
            previous = sync.logs[sync.me][op.seq - 2]
            backdated = _reauthor(op, bad.key, lamport=previous.lamport + 1)
            if backdated.lamport < op.lamport:
                result[i] = (result[i][0], backdated.datagram())
                done.append(True)
                break
        return result

    bad.transform = transform
    return table, Watch(bad.key.key_id, (DropReason.BACKDATED,))


def _blind(config: TableConfig) -> tuple[FuzzTable, Watch]:
    table = _table_with_adversary(replace(config, level="expert"))
    bad = table.peers[-1]
    bad.replica.sync.__class__ = BlindSyncPeer
    return table, Watch(bad.key.key_id, (DropReason.BACKDATED, DropReason.EQUIVOCATION))


def _outsider_op(
    table: FuzzTable, key: SigningKeyPair, kind: Kind, payload: object, seq: int = 1
) -> bytes:
    host = table.peers[0].replica.sync
    rnd = table.peers[0].replica.current_round
    epoch = rnd.number if rnd is not None and kind != Kind.JOIN else 0
    deps: list[object] = (
        [0] * len(rnd.log.participants) if epoch and rnd is not None else [[host.me, 1]]
    )
    op = seal_op(
        key,
        op_body(
            kind,
            table.table_id,
            key.key_id,
            seq,
            NO_PREV,
            host.clock.value + 5,
            epoch,
            deps,
            payload,
        ),
    )
    return op.datagram()


def _non_member(config: TableConfig) -> tuple[FuzzTable, Watch]:
    """Never joins, and sends moves for the round."""
    table = _table_with_adversary(config)
    key = SigningKeyPair(hashlib.sha256(f"outsider/{config.seed}".encode()).digest())

    def attack(t: FuzzTable) -> None:
        if t.peers[0].replica.current_round is not None:
            datagram = _outsider_op(t, key, Kind.MOVE, "turn")
            for p in t.peers[:-1]:
                t.inject(t.now, p.index, datagram, "outsider")
        t.call_at(t.now + 0.5, attack)

    table.call_at(ATTACK_AT, attack)
    return table, Watch(key.key_id, (DropReason.UNKNOWN_AUTHOR, DropReason.NOT_A_MEMBER))


def _spectator_mover(config: TableConfig) -> tuple[FuzzTable, Watch]:
    """Joins as a spectator, then signs moves as if it had a seat."""
    table = _table_with_adversary(config, spectator=True)
    bad = table.peers[-1]

    def attack(t: FuzzTable) -> None:
        sync = bad.replica.sync
        rnd = bad.replica.current_round
        if rnd is not None and sync.logs.get(sync.me):
            seq = sync.delivered(sync.me) + 1
            op = seal_op(
                bad.key,
                op_body(
                    Kind.MOVE,
                    t.table_id,
                    sync.me,
                    seq,
                    sync.logs[sync.me][-1].hash,
                    sync.clock.value + 1,
                    rnd.number,
                    [sync.delivered(p) for p in rnd.log.participants],
                    "turn",
                ),
            )
            for p in t.peers[:-1]:
                t.inject(t.now, p.index, op.datagram(), bad.index)
            return
        t.call_at(t.now + 0.5, attack)

    table.call_at(ATTACK_AT, attack)
    return table, Watch(bad.key.key_id, (DropReason.SPECTATOR_OP,))


def _reveal_cheat(config: TableConfig) -> tuple[FuzzTable, Watch]:
    """Its REVEAL names a seed that is not the one it committed to."""
    table = _table_with_adversary(config)
    bad = table.peers[-1]

    def transform(t: FuzzTable, out: list[tuple[Hashable, bytes]]) -> list[tuple[Hashable, bytes]]:
        result = list(out)
        for i, op in _own_ops(t, bad.index, out):
            if op is not None and op.kind == Kind.REVEAL:
                lie = _reauthor(op, bad.key, payload=[bytes(32), op.payload[1]])
                result[i] = (result[i][0], lie.datagram())
        return result

    bad.transform = transform
    return table, Watch(bad.key.key_id, ())


def _lobby_wedger(config: TableConfig) -> tuple[FuzzTable, Watch]:
    """READY with shown=[]: a round that seats it cannot start."""
    table = _table_with_adversary(config)
    bad = table.peers[-1]

    def transform(t: FuzzTable, out: list[tuple[Hashable, bytes]]) -> list[tuple[Hashable, bytes]]:
        result = list(out)
        for i, op in _own_ops(t, bad.index, out):
            if op is not None and op.kind == Kind.READY:
                wedge = _reauthor(op, bad.key, payload=[op.payload[0], op.payload[1], []])
                result[i] = (result[i][0], wedge.datagram())
        return result

    bad.transform = transform
    return table, Watch(bad.key.key_id, ())


def _join_flooder(config: TableConfig) -> tuple[FuzzTable, Watch]:
    """JOINs from hundreds of made-up members."""
    table = _table_with_adversary(config)
    bad = table.peers[-1]
    count = [0]

    def attack(t: FuzzTable) -> None:
        for _ in range(50):
            count[0] += 1
            key = SigningKeyPair(
                hashlib.sha256(f"flood/{config.seed}/{count[0]}".encode()).digest()
            )
            datagram = _outsider_op(t, key, Kind.JOIN, [key.public_key, f"j{count[0]}", 1])
            for p in t.peers[:-1]:
                t.inject(t.now, p.index, datagram, bad.index)
        if count[0] < 500:
            t.call_at(t.now + 0.1, attack)

    table.call_at(ATTACK_AT, attack)
    return table, Watch(bad.key.key_id, (DropReason.RATE_LIMITED, DropReason.NOT_A_MEMBER))


def _datagram_flooder(config: TableConfig) -> tuple[FuzzTable, Watch]:
    """5,000 datagrams a second from one address at every honest peer, for 10 seconds."""
    table = _table_with_adversary(config)
    bad = table.peers[-1]
    rng = random.Random(f"flood/{config.seed}")
    junk = [
        derive_table_id(rng.randbytes(32), rng.randbytes(8)) * rng.randint(1, 100)
        for _ in range(64)
    ]
    end = ATTACK_AT + 10.0

    def attack(t: FuzzTable) -> None:
        for _ in range(50):
            for p in t.peers[:-1]:
                t.inject(t.now, p.index, rng.choice(junk), bad.index)
        if t.now < end:
            t.call_at(t.now + 0.01, attack)

    table.call_at(ATTACK_AT, attack)
    return table, Watch(bad.key.key_id, (DropReason.RATE_LIMITED,))


_SETUPS: Final[dict[str, Setup]] = {
    "forger": _forger,
    "replayer": _replayer,
    "equivocator": _equivocator,
    "backdater": _backdater,
    "blind": _blind,
    "non_member": _non_member,
    "spectator_mover": _spectator_mover,
    "reveal_cheat": _reveal_cheat,
    "lobby_wedger": _lobby_wedger,
    "join_flooder": _join_flooder,
    "datagram_flooder": _datagram_flooder,
}
