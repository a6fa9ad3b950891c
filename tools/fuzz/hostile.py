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

from dataclasses import dataclass
from typing import Any

from tools.fuzz.adversaries import ADVERSARIES, ATTACK_AT, SETUPS, Watch
from tools.fuzz.findings import Finding
from tools.fuzz.link import check
from tools.fuzz.table import FuzzTable, TableConfig


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


def run_adversary(name: str, config: TableConfig) -> HostileResult:
    if name not in ADVERSARIES:
        raise ValueError(f"unknown adversary {name!r}; known: {', '.join(ADVERSARIES)}")
    setup = SETUPS[name]
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
