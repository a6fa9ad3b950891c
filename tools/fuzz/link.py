"""`link` mode: a table of honest peers under a seeded fault schedule, and its checker.

The checker (Jepsen's idea: run, then judge the history) says what must hold once the faults
have healed:

1. **Liveness.** Every round the host started is final on every honest peer that is alive,
   within `LIVENESS_BOUND` simulated seconds after the last fault ended.
2. **Agreement.** Honest live peers hold the same ops (equal version vectors), fold them
   into the same state (equal state hashes), and announce the same round results (scores,
   totals, cheaters).
3. **Signatures.** Every op a peer delivered verifies under its author's key.
4. **The same ops without faults.** A fresh replica fed every op the table holds, in one
   plain order with nothing lost, folds to the same state and the same results. The fold
   depends on the set of ops alone, so this must hold exactly.
5. **The same deals as a fault-free run.** The table run again with the same seed and no
   faults deals the same cards: per round, the same participants, commitments and start
   state. Which moves the bots make is *not* determined (a bot reacts to what it has seen
   and when, which faults change), so scores are compared with the refold of check 4,
   never with the fault-free run.

Along the way the table checks every fold (a card in two places, scores that do not add
up) and watches for crashes, divergence reports, honest peers expelled and seqs reused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nerts_p2p.game.position import state_hash
from nerts_p2p.table.replica import RoundFinal, TableReplica
from protocol import sync_starters
from protocol.departure import agreed_set, tally
from protocol.envelope import seal
from protocol.errors import RemoteProtocolError
from protocol.messages import SPECTATOR, Heartbeat, Op, evidence_body
from protocol.signing import SigningKeyPair, verify
from protocol.sync import SyncPeer
from protocol.sync_vouchers import relayable
from tools.fuzz.findings import Finding
from tools.fuzz.schedule import Fault, Schedule, ScheduleShape, generate
from tools.fuzz.shrink import ddmin
from tools.fuzz.table import FuzzTable, Problem, TableConfig
from tools.mesh import seeded_bytes

LIVENESS_BOUND = 60.0  # simulated seconds after the heal for every round to be final


def _final_key(final: RoundFinal) -> tuple[object, ...]:
    return (final.round, tuple(final.scores), tuple(sorted(final.cheaters)), final.totals)


def run_case(config: TableConfig, schedule: Schedule, *, trace: bool = False) -> FuzzTable:
    table = FuzzTable(config, schedule, trace=trace)
    table.run(until=schedule.heal_at + LIVENESS_BOUND + 30.0 * config.rounds)
    check(table)
    return table


def check(table: FuzzTable) -> None:
    """The checker: adds to `table.problems` whatever of the five checks fails."""
    peers = table.honest_live()
    if not peers:
        return
    if _split_by_invalid_twin(table):
        # Explains the stuck rounds and the different ops held; said once, by its cause.
        _check_signatures(table)
        return
    if not table.done() and not _no_quorum_left(table):
        behind = {
            p.index: sorted(set(range(1, table.max_rounds + 1)) - set(p.finals))
            for p in peers
            if p.role != SPECTATOR and len(p.finals) < table.max_rounds
        }
        table.problem(
            "liveness",
            None,
            f"{table.now - table.schedule.heal_at:.1f}s after the faults healed, round(s) "
            f"not final: {behind} (peer: rounds)",
        )
    vectors = {p.index: counted_vector(p.replica.sync) for p in peers}
    if len(set(vectors.values())) > 1:
        sizes = {i: sum(n for _, n in v) for i, v in vectors.items()}
        table.problem("disagreement", None, f"peers hold different ops (ops held: {sizes})")
    else:
        _check_race_winners(table)
        hashes = table.state_hashes()
        if len(set(hashes.values())) > 1:
            table.problem("disagreement", None, f"equal ops, different states: {hashes}")
    finals = {p.index: [_final_key(f) for _, f in sorted(p.finals.items())] for p in peers}
    players = [p for p in peers if p.role != SPECTATOR]
    if len({tuple(finals[p.index]) for p in players}) > 1:
        table.problem("disagreement", None, "peers announce different round results")
    _check_signatures(table)
    _check_refold(table)


def _no_quorum_left(table: FuzzTable) -> bool:
    """Whether the round being played can no longer end by design: even if every
    participant still running voted out every one that stopped, no agreement would drop
    them all (PROTOCOL.md 13.2): the running ones still in the round are no quorum of its
    participants, or they voted each other out (votes are never withdrawn; a lone side of a
    split never agrees, 13.3). Three players, one voted out after a long pause, then
    another killed; or two that suspected each other during a clock jump, then the third
    killed: the rest wait for ever (`fuzz link` seeds 4124, 4131, 5057, 5092). Judged from
    the most advanced live peer's view of the round."""
    peers = [p for p in table.honest_live() if p.role != SPECTATOR]
    if not peers:
        return False
    ahead = max(peers, key=lambda p: max(p.replica.sync.epochs, default=0))
    sync = ahead.replica.sync
    if not sync.epochs:
        return False
    log = sync.epochs[max(sync.epochs)]
    departed, votes = tally(log, sync_starters.vote_counts(sync, log))
    running = {p.replica.me for p in table.peers if p.alive}
    live = [a for a in log.participants if a not in log.excluded and a not in departed]
    stopped = [a for a in live if a not in running]
    if not stopped:
        return False  # nobody holds the round back for good: it must end
    for voter in live:
        if voter in running:
            votes.setdefault(voter, {}).update(dict.fromkeys(stopped, 0))
    return not set(stopped) <= agreed_set(log.participants, live, votes)


def counted_vector(sync: SyncPeer) -> tuple[tuple[bytes, int], ...]:
    """The version vector without an expelled author's ops from its expulsion on: they count
    nowhere, and a peer that delivered one before the proof reached it keeps it while the
    others never take it (PROTOCOL.md 10), so only the rest must be held alike."""
    out = []
    for author, seq in sync.vector():
        cut = sync.expelled.get(author)
        counted = seq if cut is None else min(seq, cut - 1)
        if counted:
            out.append((author, counted))
    return tuple(out)


def race_winners(replica: TableReplica) -> dict[tuple[int, int, int], int]:
    """(round, foundation, rank) -> the deck whose card holds that place: who won each
    race, as this peer's fold says. A foundation is named by the card that started it."""
    out: dict[tuple[int, int, int], int] = {}
    for number, rnd in replica.rounds.items():
        for foundation in rnd.state.foundations.values():
            for rank, card in enumerate(foundation.cards, start=1):
                out[(number, foundation.base, rank)] = card >> 6
    return out


def _check_race_winners(table: FuzzTable) -> None:
    """Peers that hold the same ops must agree on who won every foundation race (a peer
    that folds in arrival order gives a race to whichever racer's op reached it first)."""
    peers = [p for p in table.honest_live() if p.role != SPECTATOR]
    if len(peers) < 2:
        return
    first, *others = peers
    ours = race_winners(first.replica)
    for peer in others:
        theirs = race_winners(peer.replica)
        differ = sorted(k for k in ours.keys() | theirs.keys() if ours.get(k) != theirs.get(k))
        if differ:
            number, base, rank = differ[0]
            table.problem(
                "race_winners",
                peer.index,
                f"peers {first.index} and {peer.index} hold the same ops but disagree on "
                f"{len(differ)} foundation place(s); first: round {number}, the foundation "
                f"started by card {base}, rank {rank}: deck {ours.get(differ[0])} against "
                f"deck {theirs.get(differ[0])}",
            )


def _split_by_invalid_twin(table: FuzzTable) -> bool:
    """A peer rejected an author's op n for good while the others delivered a different,
    valid op n of that author (an equivocation the rejecting peer never sees as one): it can
    never deliver what depends on the valid twin, so it is cut off from the table."""
    found = False
    peers = table.honest_live()
    for peer in peers:
        for author, seq in peer.replica.sync.dead.items():
            if peer.replica.sync.expelled.get(author, seq + 1) <= seq:
                # Expelled at or below the rejected seq: that op and everything of its
                # author past the expulsion count nowhere, and deps on them are not judged,
                # so which twin a peer holds changes nothing (found by the 1,000,000-datagram
                # campaign, seed 1003: a false report).
                continue
            holders = [
                other.index for other in peers if other.replica.sync.delivered(author) >= seq
            ]
            if holders:
                found = True
                table.problem(
                    "split_by_invalid_twin",
                    peer.index,
                    f"peer {peer.index} rejected op {seq} of author {author.hex()} for good, "
                    f"peers {holders} delivered a valid op {seq} of that author: peer "
                    f"{peer.index} can never deliver what depends on it (ops held: "
                    f"{sum(n for _, n in peer.replica.sync.vector())} of "
                    f"{max(sum(n for _, n in p.replica.sync.vector()) for p in peers)})",
                )
    return found


def forged_ops(sync: SyncPeer, keys: dict[bytes, bytes], since: dict[bytes, int]) -> list[str]:
    """Ops a peer delivered, or holds as evidence to expel someone, whose signature does not
    verify (with the real check). `since` remembers how far each log was checked."""
    found: list[str] = []
    held: list[tuple[str, Op]] = []
    for author, log in sync.logs.items():
        held.extend(("delivered", op) for op in log[since.get(author, 0) :])
        since[author] = len(log)
    if len(sync.evidence) != since.get(b"evidence", -1):
        since[b"evidence"] = len(sync.evidence)
        for pair in sync.evidence.values():
            held.extend(("expelled its author on", op) for op in pair)
    # Version 2: an op that breaks a heartbeat's promise takes no slot in any log; it is
    # kept with the promise in `lies`, and a forged one expels an honest author from there.
    if len(sync.lies) != since.get(b"lies", -1):
        since[b"lies"] = len(sync.lies)
        for promise, op in sync.lies.values():
            held.append(("expelled its author (broken promise) on", op))
            if not _verifies(keys.get(promise.sender) or sync.keys.get(promise.sender), promise):
                found.append(
                    f"expelled {op.author.hex()} on a heartbeat of {promise.sender.hex()}"
                    " whose signature does not verify"
                )
    for what, op in held:
        if not _authentic(sync, keys, op):
            found.append(
                f"{what} op {op.seq} of {op.author.hex()}, whose signature does not verify"
                " and that no op of its author vouches for"
            )
    return found


def _authentic(sync: SyncPeer, keys: dict[bytes, bytes], op: Op) -> bool:
    """PROTOCOL.md 4, step 6: its signature verifies, or its author's next op names it by
    `prev` and is authentic itself. The peer names the voucher it took (`_vouched`); the
    voucher is checked here as any op is, so a peer that names a false one is caught."""
    while not _verifies(keys.get(op.author) or sync.keys.get(op.author), op):
        voucher = sync._vouched.get(op.hash)
        if voucher is None or (voucher.author, voucher.seq, voucher.prev) != (
            op.author,
            op.seq + 1,
            op.hash,
        ):
            return False
        op = voucher
    return True


def _verifies(public_key: bytes | None, signed: Op | Heartbeat) -> bool:
    """The real check (an unknown author cannot be checked here, so it passes)."""
    try:
        if public_key is not None:
            verify(public_key, signed.body, signed.signature)
    except RemoteProtocolError:
        return False
    return True


def _check_signatures(table: FuzzTable) -> None:
    keys = {p.key.key_id: p.key.public_key for p in table.peers}
    for peer in table.honest_live():
        for text in forged_ops(peer.replica.sync, keys, {})[:3]:
            table.problem("bad_signature_accepted", peer.index, f"peer {peer.index} {text}")


def _check_refold(table: FuzzTable) -> None:
    """Check 4: every op the table holds, fed to a fresh replica without faults."""
    source = table.honest_live()[0]
    ops = sorted(
        (op for log in source.replica.sync.logs.values() for op in log),
        key=lambda op: (op.epoch, op.lamport, op.author),
    )
    fresh = TableReplica.joining(
        SigningKeyPair(b"\x01" * 32),
        table.table_id,
        name="refold",
        role=SPECTATOR,
        randomness=seeded_bytes("refold"),
    )
    # An op taken on a voucher and not signed alone comes after its voucher, as any peer
    # relays it (PROTOCOL.md 4, step 6).
    sync = source.replica.sync
    for op in relayable(sync, [*ops, *(op for pair in sync.evidence.values() for op in pair)]):
        fresh.receive(op.datagram(), "ref", table.now)
    # A broken promise is proof too: the promise (relayed as EVIDENCE) and the op.
    relay = SigningKeyPair(b"\x02" * 32)
    for promise, broken in source.replica.sync.lies.values():
        fresh.receive(broken.datagram(), "ref", table.now)
        proof = seal(relay, evidence_body(table.table_id, relay.key_id, [promise]))
        fresh.receive(proof, "ref", table.now)
    # Heartbeats give the horizons that make the rounds final (they are signed promises).
    for datagram in table.last_heartbeat.values():
        fresh.receive(datagram, "ref", table.now)
    if fresh.sync.vector() != source.replica.sync.vector():
        table.problem("refold", None, "a fresh replica could not deliver the ops the table holds")
        return
    ours, theirs = fresh.current_round, source.replica.current_round
    if (ours is None) != (theirs is None) or (
        ours and theirs and state_hash(ours.state) != state_hash(theirs.state)
    ):
        table.problem("refold", source.index, "the same ops folded without faults differ")
        return
    for number, final in source.finals.items():
        rnd = fresh.rounds.get(number)
        if (
            rnd is not None
            and rnd.final is not None
            and _final_key(rnd.final)[:3] != _final_key(final)[:3]
        ):
            table.problem(
                "refold",
                source.index,
                f"round {number}: the same ops scored without faults give another result",
            )


def deal_fingerprint(table: FuzzTable) -> dict[int, tuple[object, ...]]:
    """What the fault-free run must share with any other run of the same seed."""
    peer = table.peers[0]
    out: dict[int, tuple[object, ...]] = {}
    for number, rnd in peer.replica.rounds.items():
        participants = tuple(rnd.log.participants)
        out[number] = (
            participants,
            tuple(rnd.commitments[p] for p in participants),
            state_hash(rnd.start_state),
        )
    return out


def compare_deals(table: FuzzTable, reference: dict[int, tuple[object, ...]]) -> None:
    """Check 5 against the fault-free run's fingerprint."""
    for number, fingerprint in deal_fingerprint(table).items():
        want = reference.get(number)
        if want is not None and want != fingerprint:
            table.problem(
                "deal", None, f"round {number} was dealt differently from the fault-free run"
            )


@dataclass
class LinkCase:
    config: TableConfig
    schedule: Schedule

    def to_json(self) -> dict[str, Any]:
        return {"config": self.config.to_json(), "schedule": self.schedule.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LinkCase:
        return cls(TableConfig.from_json(data["config"]), Schedule.from_json(data["schedule"]))


def run_link(
    case: LinkCase, *, reference: dict[int, tuple[object, ...]] | None = None, trace: bool = False
) -> FuzzTable:
    table = run_case(case.config, case.schedule, trace=trace)
    if reference is not None:
        compare_deals(table, reference)
    return table


def shrink_link(case: LinkCase, problems: list[Problem], *, budget: int = 40) -> LinkCase:
    """The fewest faults that still show a problem of the same kind."""
    wanted = {p.kind for p in problems}

    def fails(faults: list[Fault]) -> bool:
        smaller = LinkCase(case.config, case.schedule.with_faults(faults))
        table = run_link(smaller)
        return any(p.kind in wanted for p in table.problems)

    kept = ddmin(list(case.schedule.faults), fails, budget=budget)
    return LinkCase(case.config, case.schedule.with_faults(kept))


def link_finding(case: LinkCase, table: FuzzTable, *, shrink: bool = True) -> Finding:
    if shrink:
        case = shrink_link(case, table.problems)
        table = run_link(case, trace=True)
    kinds = sorted({p.kind for p in table.problems})
    return Finding(
        "link",
        f"{', '.join(kinds)} under {len(case.schedule.faults)} fault(s), seed {case.config.seed}",
        list(table.problems),
        {"mode": "link", **case.to_json()},
        list(table.history),
    )


def link_cases(seeds: range, base: TableConfig, shape: ScheduleShape) -> list[LinkCase]:
    from dataclasses import replace

    return [LinkCase(replace(base, seed=seed), generate(seed, shape)) for seed in seeds]
