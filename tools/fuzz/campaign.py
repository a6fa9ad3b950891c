"""A campaign: many cases of each mode, a live summary, findings written and shrunk.

`run_campaign` is what `nerts-p2p fuzz` runs. Every case is seeded, so a campaign is a pure
function of its options; what it finds is written to `--out` as finding files that
`nerts-p2p fuzz replay` runs again exactly.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

from tools.fuzz.adversaries import ADVERSARIES
from tools.fuzz.findings import Finding
from tools.fuzz.hostile import HostileResult, hostile_finding, run_adversary
from tools.fuzz.link import LinkCase, deal_fingerprint, link_finding, run_link
from tools.fuzz.mutate_run import ORDER_ATTACKS, MutateCase, mutate_finding, run_mutate
from tools.fuzz.schedule import DEFAULT_KINDS, Schedule, ScheduleShape, generate
from tools.fuzz.table import FuzzTable, TableConfig
from tools.progress import bar_line

MODES = ("link", "mutate", "hostile")


@dataclass
class CampaignOptions:
    modes: tuple[str, ...] = MODES
    seed: int = 0
    table: TableConfig = field(default_factory=TableConfig)
    link_cases: int = 4
    fault_kinds: tuple[str, ...] = DEFAULT_KINDS
    faults_per_case: int = 8
    datagrams: int = 4000  # mutate: in all
    per_case: int = 2000  # mutate: per table
    rate: float = 400.0
    order_attacks: tuple[str, ...] = ORDER_ATTACKS
    lamport_cap: int | None = None
    adversaries: tuple[str, ...] = ADVERSARIES
    shrink: bool = True
    out: Path = Path("fuzz-findings")
    #: Finding kinds reported but not failing the campaign (known defects, named so).
    known: frozenset[str] = frozenset()
    baseline: bool = True  # mutate: also run each table without the campaign (latency)


@dataclass
class CampaignReport:
    findings: list[Finding] = field(default_factory=list)
    known: list[Finding] = field(default_factory=list)
    cases: dict[str, int] = field(default_factory=dict)
    datagrams: int = 0
    mutate_wall: float = 0.0
    mutate_cpu: float = 0.0
    drops: dict[str, int] = field(default_factory=dict)
    by_mutator: dict[str, int] = field(default_factory=dict)
    crashes: int = 0
    hangs: int = 0
    divergences: int = 0
    latency: list[float] = field(default_factory=list)
    latency_baseline: list[float] = field(default_factory=list)
    hostile: list[dict[str, Any]] = field(default_factory=list)
    faults_applied: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "findings": [f.to_json() for f in self.findings],
            "known": [f.to_json() for f in self.known],
            "cases": self.cases,
            "mutate": {
                "datagrams": self.datagrams,
                "datagrams_per_second": self.rate(),
                "datagrams_per_cpu_second": round(self.datagrams / self.mutate_cpu, 1)
                if self.mutate_cpu
                else 0.0,
                "by_mutator": self.by_mutator,
                "target_drops": self.drops,
                "crashes": self.crashes,
                "hangs": self.hangs,
                "divergences": self.divergences,
                "move_latency_p99": p99(self.latency),
                "move_latency_p99_without": p99(self.latency_baseline),
            },
            "hostile": self.hostile,
        }

    def rate(self) -> float:
        return round(self.datagrams / self.mutate_wall, 1) if self.mutate_wall else 0.0


def p99(values: list[float]) -> float | None:
    if len(values) < 2:
        return round(values[0], 4) if values else None
    return round(statistics.quantiles(values, n=100)[98], 4)


#: The case's words on the progress line (with the bar and the counts, under 100 columns).
LABEL_WIDTH = 48


class Progress:
    """One line on the terminal, redrawn: a bar, the case, and the findings so far."""

    def __init__(self, total: int, stream: TextIO, *, live: bool) -> None:
        self.total = max(total, 1)
        self.done = 0
        self.stream = stream
        self.live = live

    def update(self, label: str, findings: int) -> None:
        self.done += 1
        # Cut to one terminal line, visibly ("..."), not in the middle of a word unmarked.
        line = f"{bar_line(self.done, self.total, label, LABEL_WIDTH)} findings: {findings}"
        if self.live:
            self.stream.write("\r" + line)
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def _latencies(table: FuzzTable) -> list[float]:
    return [x for p in table.peers if p.honest for x in p.move_latency]


def run_campaign(
    options: CampaignOptions, *, stream: TextIO | None = None, live: bool | None = None
) -> CampaignReport:
    stream = stream if stream is not None else sys.stderr
    live = stream.isatty() if live is None else live
    report = CampaignReport()
    mutate_cases = (options.datagrams + options.per_case - 1) // options.per_case
    total = (
        ("link" in options.modes) * options.link_cases
        + ("mutate" in options.modes) * mutate_cases
        + ("hostile" in options.modes) * len(options.adversaries)
    )
    progress = Progress(total, stream, live=live)

    def keep(finding: Finding) -> None:
        number = len(report.findings) + len(report.known) + 1
        finding.write(options.out, number)
        if set(finding.kinds) <= options.known:
            report.known.append(finding)
        else:
            report.findings.append(finding)

    if "link" in options.modes:
        _link(options, report, progress, keep)
    if "mutate" in options.modes:
        _mutate(options, report, progress, keep, mutate_cases)
    if "hostile" in options.modes:
        _hostile(options, report, progress, keep)
    return report


def _link(
    options: CampaignOptions,
    report: CampaignReport,
    progress: Progress,
    keep: Callable[[Finding], None],
) -> None:
    references: dict[int, dict[int, tuple[object, ...]]] = {}
    for n in range(options.link_cases):
        seed = options.seed + n
        config = replace(options.table, seed=seed)
        shape = ScheduleShape(
            peers=config.players, count=options.faults_per_case, kinds=options.fault_kinds
        )
        case = LinkCase(config, generate(seed, shape))
        if seed not in references:
            references[seed] = deal_fingerprint(run_link(LinkCase(config, Schedule(seed))))
        table = run_link(case, reference=references[seed])
        report.faults_applied += len(case.schedule.faults)
        report.cases["link"] = report.cases.get("link", 0) + 1
        if table.problems:
            keep(link_finding(case, table, shrink=options.shrink))
        progress.update(f"link seed {seed}", len(report.findings))


def _mutate(
    options: CampaignOptions,
    report: CampaignReport,
    progress: Progress,
    keep: Callable[[Finding], None],
    cases: int,
) -> None:
    left = options.datagrams
    for n in range(cases):
        seed = options.seed + n
        count = min(options.per_case, left)
        left -= count
        case = MutateCase(
            replace(options.table, seed=seed),
            seed=seed,
            count=count,
            rate=options.rate,
            order_attacks=options.order_attacks,
            lamport_cap=options.lamport_cap,
        )
        run = run_mutate(case)
        report.datagrams += len(run.injected)
        report.mutate_wall += run.wall_seconds
        report.mutate_cpu += run.cpu_seconds
        for reason, value in run.target_drops.items():
            report.drops[reason] = report.drops.get(reason, 0) + value
        for name, value in run.by_mutator.items():
            report.by_mutator[name] = report.by_mutator.get(name, 0) + value
        kinds = [p.kind for p in run.table.problems]
        report.crashes += kinds.count("crash")
        report.hangs += kinds.count("hang")
        report.divergences += sum(k.startswith("divergence") for k in kinds)
        report.latency.extend(_latencies(run.table))
        if options.baseline:
            quiet = run_mutate(replace(case, count=0, injections=[]))
            report.latency_baseline.extend(_latencies(quiet.table))
        report.cases["mutate"] = report.cases.get("mutate", 0) + 1
        if run.table.problems:
            shrink = options.shrink and not set(kinds) <= options.known
            keep(mutate_finding(case, run, shrink=shrink))
        progress.update(f"mutate seed {seed}: {len(run.injected)} datagrams", len(report.findings))


def _hostile(
    options: CampaignOptions,
    report: CampaignReport,
    progress: Progress,
    keep: Callable[[Finding], None],
) -> None:
    for name in options.adversaries:
        config = replace(options.table, seed=options.seed)
        result: HostileResult = run_adversary(name, config)
        report.hostile.append(result.to_json())
        report.cases["hostile"] = report.cases.get("hostile", 0) + 1
        if result.finding:
            keep(hostile_finding(result, config))
        progress.update(f"hostile {name}: {result.detail}", len(report.findings))
