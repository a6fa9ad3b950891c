"""Running `mutate` mode against an in-process peer, watching it, and shrinking findings.

The target is one honest peer of a live table (the others keep playing, so its behaviour
under attack is judged against theirs). Mutated datagrams arrive from a few made-up source
addresses, so the per-source rate limit lets most of them through to the deeper gates; the
puppet (the fuzzer's own member) also authors validly signed ops in the wrong order.

Watched: an exception out of the peer (crash), a single datagram that takes more than
`HANG_SECONDS` of CPU time (hang), queues past the bounds PROTOCOL.md gives (growth), more
datagrams sent in answer to one than `MAX_AMPLIFICATION` (a reflector), and everything the
link checker checks (liveness, agreement, signatures, the fault-free refold).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field, replace
from typing import Any, Final

from nerts_p2p.game.legal import legal_moves
from nerts_p2p.game.moves import move_text
from protocol.errors import ProtocolError, RemoteProtocolError
from protocol.messages import NO_PREV, Kind, Op, decode, op_body, seal_op
from protocol.sync import MAX_AWAITING, MAX_PENDING, MAX_REQUESTED
from tools.fuzz.findings import Finding
from tools.fuzz.link import check, forged_ops
from tools.fuzz.mutate import Mutator
from tools.fuzz.schedule import Schedule
from tools.fuzz.shrink import ddmin
from tools.fuzz.table import FuzzTable, TableConfig

HANG_SECONDS = 1.0
MAX_AMPLIFICATION = 12  # datagrams sent in answer to one datagram (a REQUEST: 64 ops)
SOURCES = 4  # made-up addresses the mutated datagrams come from
INJECT_FROM = 2.0  # simulated second the campaign starts (the table is seated by then)
ORDER_ATTACKS = ("illegal_move", "early_reveal", "ready_in_round", "start_by_puppet")


@dataclass
class MutateCase:
    config: TableConfig  # the honest players; the puppet is one more
    seed: int = 0
    count: int = 2000  # datagrams to inject
    rate: float = 400.0  # per simulated second
    target: int = 1
    order_attacks: tuple[str, ...] = ORDER_ATTACKS
    lamport_cap: int | None = None
    #: Set for a replay or a shrunk case: exactly these (time, source, hex) injections.
    injections: list[tuple[float, str, str]] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "config": self.config.to_json(),
            "seed": self.seed,
            "count": self.count,
            "rate": self.rate,
            "target": self.target,
            "order_attacks": list(self.order_attacks),
            "lamport_cap": self.lamport_cap,
            "injections": self.injections,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MutateCase:
        injections = data.get("injections")
        return cls(
            TableConfig.from_json(data["config"]),
            int(data["seed"]),
            int(data["count"]),
            float(data["rate"]),
            int(data["target"]),
            tuple(data.get("order_attacks", ORDER_ATTACKS)),
            data.get("lamport_cap"),
            [(float(t), str(src), str(h)) for t, src, h in injections]
            if injections is not None
            else None,
        )


@dataclass
class MutateRun:
    table: FuzzTable
    injected: list[tuple[float, str, str]] = field(default_factory=list)
    by_mutator: dict[str, int] = field(default_factory=dict)
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0  # the whole table's, honest peers included
    max_amplification: int = 0
    trigger: tuple[float, str, str] | None = None
    #: The injected datagram being handled when each kind of problem first showed.
    triggers: dict[str, tuple[float, str, str]] = field(default_factory=dict)

    @property
    def target_drops(self) -> dict[str, int]:
        return self.table.peers[self.case_target].replica.sync.counters.as_dict()

    case_target: int = 1


def build_table(case: MutateCase) -> FuzzTable:
    config = replace(case.config, players=case.config.players + 1)
    table = FuzzTable(config, Schedule(case.seed))
    table.peers[-1 if not config.spectators else config.players - 1].honest = False
    return table


def puppet_of(table: FuzzTable) -> int:
    return next(p.index for p in table.peers if not p.honest)


def run_mutate(case: MutateCase) -> MutateRun:
    table = build_table(case)
    run = MutateRun(table, case_target=case.target)
    puppet = puppet_of(table)
    rng = random.Random(f"mutate/{case.seed}")
    mutator = Mutator(rng, table.peers[puppet].key, table.table_id, lamport_cap=case.lamport_cap)
    corpus: list[bytes] = []

    def capture(sender: int, target: int, datagram: bytes) -> None:
        if len(corpus) < 4000:
            corpus.append(datagram)
        elif rng.random() < 0.05:
            corpus[rng.randrange(len(corpus))] = datagram

    table.taps.append(capture)
    current: list[tuple[float, str, str]] = []

    keys = {p.key.key_id: p.key.public_key for p in table.peers}
    verified: dict[bytes, int] = {}
    problems_seen = [0]

    def watch(kind: str, index: int, sent: int, took: float) -> None:
        if index != case.target or kind != "inject":
            return
        _verify_new_ops(table, index, keys, verified)
        run.max_amplification = max(run.max_amplification, sent)
        if took > HANG_SECONDS:
            table.problem("hang", index, f"one datagram took {took:.2f} CPU seconds to handle")
        if sent > MAX_AMPLIFICATION:
            table.problem("amplification", index, f"one datagram made the peer send {sent}")
        sync = table.peers[index].replica.sync
        pending = sum(len(p) for p in sync.pending.values())
        awaiting = sum(len(p) for p in sync.awaiting_key.values())
        requested = len(getattr(sync, "_requested", {}))
        if pending > MAX_PENDING or awaiting > MAX_AWAITING or requested > MAX_REQUESTED:
            table.problem(
                "growth",
                index,
                f"queues past their bounds: pending {pending}, awaiting a key {awaiting}, "
                f"requests in flight {requested}",
            )
        if len(table.problems) > problems_seen[0]:
            new = table.problems[problems_seen[0] :]
            problems_seen[0] = len(table.problems)
            if table.last_injected is not None:
                source, datagram = table.last_injected
                record = (round(table.now, 6), str(source), datagram.hex())
                if run.trigger is None:
                    run.trigger = record
                for problem in new:
                    run.triggers.setdefault(problem.kind, record)

    table.watchers.append(watch)
    if case.injections is not None:
        for at, source, hexed in case.injections:
            table.inject(at, case.target, bytes.fromhex(hexed), source)
            run.injected.append((at, source, hexed))
    else:
        _schedule_campaign(case, table, run, mutator, corpus, rng, current)
    began, cpu = time.perf_counter(), time.process_time()
    last = max((at for at, _, _ in case.injections or []), default=0.0)
    campaign_end = max(last, INJECT_FROM + case.count / case.rate)
    table.run(until=campaign_end + 90.0, at_least=campaign_end)
    run.wall_seconds = time.perf_counter() - began
    run.cpu_seconds = time.process_time() - cpu
    check(table)
    return run


def _verify_new_ops(
    table: FuzzTable, index: int, keys: dict[bytes, bytes], verified: dict[bytes, int]
) -> None:
    """Checked at the datagram that let a forged op in, so a shrink can try it alone."""
    for text in forged_ops(table.peers[index].replica.sync, keys, verified)[:1]:
        table.problem("bad_signature_accepted", index, f"peer {index} {text}")


def _schedule_campaign(
    case: MutateCase,
    table: FuzzTable,
    run: MutateRun,
    mutator: Mutator,
    corpus: list[bytes],
    rng: random.Random,
    current: list[tuple[float, str, str]],
) -> None:
    """Inject in small batches; each batch is made from the corpus as it is at that time."""
    batch = 20
    interval = batch / case.rate
    batches = (case.count + batch - 1) // batch

    def fire(n: int) -> None:
        def action(t: FuzzTable) -> None:
            for _ in range(min(batch, case.count - n * batch)):
                datagram: bytes | None = None
                name = "order"
                if case.order_attacks and rng.random() < 0.02:
                    datagram = _order_attack(t, rng, case.order_attacks)
                elif corpus:
                    name, datagram = mutator.mutate(rng.choice(corpus))
                if datagram is None:
                    continue
                source = f"fz{rng.randrange(SOURCES)}"
                record = (round(t.now, 6), source, datagram.hex())
                run.injected.append(record)
                current.append(record)
                run.by_mutator[name] = run.by_mutator.get(name, 0) + 1
                t.inject(t.now, case.target, datagram, source)

        table.call_at(INJECT_FROM + n * interval, action)

    for n in range(batches):
        fire(n)


def _order_attack(table: FuzzTable, rng: random.Random, kinds: tuple[str, ...]) -> bytes | None:
    """A validly signed op of the puppet that breaks the rules or the protocol's order."""
    puppet = table.peers[puppet_of(table)]
    replica = puppet.replica
    sync = replica.sync
    rnd = replica.current_round
    attack = rng.choice(kinds)
    if rnd is None or not replica.is_member:
        return None
    if attack == "illegal_move":
        others = [s for s in range(rnd.rules.seats) if s != replica.seat]
        moves = legal_moves(rnd.state, rng.choice(others)) if others else []
        text = move_text(rng.choice(moves)).split(" ", 1)[1] if moves else "KS n-f"
        text = rng.choice((text, "KS n-f", "nerts", "turn", "0 5H n-w2", "zz"))
        payload: object = text
        kind, epoch = Kind.MOVE, rnd.number
    elif attack == "early_reveal":
        seed, salt = replica.my_secrets.get(rnd.number, (bytes(32), bytes(16)))
        payload = [seed if rng.random() < 0.5 else rng.randbytes(32), salt]
        kind, epoch = Kind.REVEAL, rnd.number
    elif attack == "ready_in_round":
        payload = [rnd.number + rng.choice((0, 1, 5)), rng.randbytes(32), [1, 2, 3, 4, 5]]
        kind, epoch = Kind.READY, 0
    else:
        payload = [list(rnd.log.participants), [0] * len(rnd.log.participants), []]
        kind, epoch = Kind.START, rnd.number + 1
    # Signed as the puppet's next op, without asking its own peer (which would refuse some):
    # the puppet then signs another op with that seq itself, and honest peers expel it.
    seq = sync.delivered(sync.me) + 1
    prev = sync.logs[sync.me][-1].hash if seq > 1 else NO_PREV
    lamport = sync.clock.value + 1
    try:
        deps = sync.deps_for(kind, epoch, payload)
        op = seal_op(
            sync.key, op_body(kind, sync.table, sync.me, seq, prev, lamport, epoch, deps, payload)
        )
    except ProtocolError:
        return None  # not even a well-formed op (the puppet's clock at its ceiling, say)
    return op.datagram()


#: Kinds that name their cause: a shrink keeps the first of these the run showed, rather
#: than any problem (on version 2 one forged op also expels and splits, and a shrink to
#: "any kind" settled on a datagram that only shows the split).
SPECIFIC_KINDS: Final = ("bad_signature_accepted", "crash", "hang", "amplification", "growth")


def shrink_mutate(case: MutateCase, run: MutateRun, *, budget: int = 30) -> MutateCase:
    kinds = {p.kind for p in run.table.problems}
    focus = next((k for k in SPECIFIC_KINDS if k in kinds), None)
    wanted = {focus} if focus is not None else kinds

    def fails(injections: list[tuple[float, str, str]]) -> bool:
        smaller = replace(case, injections=injections)
        return any(p.kind in wanted for p in run_mutate(smaller).table.problems)

    first = [run.triggers[focus]] if focus is not None and focus in run.triggers else []
    for suspect in [*first, *_suspects(run)]:
        if fails([suspect]):
            return replace(case, injections=[suspect])
    return replace(case, injections=ddmin(run.injected, fails, budget=budget))


def _suspects(run: MutateRun) -> list[tuple[float, str, str]]:
    """Injections to try alone before delta debugging: the one being handled when the first
    problem showed, and any op whose (author, seq) a peer rejected for good."""
    out = [run.trigger] if run.trigger is not None else []
    dead = {
        (author, seq)
        for p in run.table.honest_live()
        for author, seq in p.replica.sync.dead.items()
    }
    if dead:
        for record in run.injected:
            try:
                message = decode(bytes.fromhex(record[2]), table=run.table.table_id)
            except RemoteProtocolError:
                continue
            if isinstance(message, Op) and (message.author, message.seq) in dead:
                out.append(record)
    return out[:8]


def mutate_finding(case: MutateCase, run: MutateRun, *, shrink: bool = True) -> Finding:
    if shrink:
        case = shrink_mutate(case, run)
        run = run_mutate(case)
    table = run.table
    kinds = sorted({p.kind for p in table.problems})
    return Finding(
        "mutate",
        f"{', '.join(kinds)} after {len(run.injected)} datagram(s), seed {case.seed}",
        list(table.problems),
        {"mode": "mutate", **case.to_json()},
        list(table.history),
    )
