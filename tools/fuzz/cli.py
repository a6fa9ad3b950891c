"""`nerts-p2p fuzz`: the command line of the fuzzer (client/cli.py hands over to this).

nerts-p2p fuzz [all|link|mutate|hostile] [options]    a campaign; exit 1 on findings
nerts-p2p fuzz replay FINDING.json                    run a finding again, exactly
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from tools.fuzz.adversaries import ADVERSARIES
from tools.fuzz.campaign import MODES, CampaignOptions, CampaignReport, p99, run_campaign
from tools.fuzz.findings import load_case
from tools.fuzz.mutate_run import ORDER_ATTACKS
from tools.fuzz.planted import PLANTED
from tools.fuzz.schedule import kinds_from_text
from tools.fuzz.table import TableConfig


def add_fuzz_parser(sub: Any) -> None:
    fuzz = sub.add_parser(
        "fuzz",
        help="attack peers with faults, mutated datagrams and hostile peers",
        description="A fault-injecting, structure-aware fuzzer for the nerts-p2p protocol. "
        "Exit status: 0 no findings, 1 findings, 2 usage.",
    )
    fuzz.add_argument("mode", nargs="?", default="all", choices=("all", *MODES, "replay"))
    fuzz.add_argument("finding", nargs="?", help="replay: the finding file to run again")
    fuzz.add_argument("--seed", type=int, default=0, help="first seed of the campaign")
    fuzz.add_argument("--players", type=int, default=3, help="honest players at each table")
    fuzz.add_argument("--nerts-size", type=int, default=6, help="short rounds fuzz faster")
    fuzz.add_argument("--level", default="casual", help="bot level: novice, casual, expert")
    fuzz.add_argument("--cases", type=int, default=4, help="link: fault schedules to run")
    fuzz.add_argument(
        "--faults", default="default", help="link: fault kinds, comma separated, or all"
    )
    fuzz.add_argument("--faults-per-case", type=int, default=8)
    fuzz.add_argument("--datagrams", type=int, default=4000, help="mutate: datagrams in all")
    fuzz.add_argument("--per-case", type=int, default=2000, help="mutate: datagrams per table")
    fuzz.add_argument("--rate", type=float, default=400.0, help="mutate: per simulated second")
    fuzz.add_argument(
        "--no-order-attacks",
        action="store_true",
        help="mutate: the puppet signs no ops out of protocol order",
    )
    fuzz.add_argument(
        "--lamport-cap",
        type=int,
        default=None,
        help="mutate: sign no op with a Lamport time above this (main crashes at 2**48)",
    )
    fuzz.add_argument(
        "--adversaries",
        default="all",
        help=f"hostile: comma separated, or all ({', '.join(ADVERSARIES)})",
    )
    fuzz.add_argument(
        "--planted",
        default="",
        choices=("", *PLANTED),
        help="plant a broken peer (to prove the fuzzer finds it)",
    )
    fuzz.add_argument("--no-shrink", action="store_true", help="report findings unshrunk")
    fuzz.add_argument(
        "--no-baseline",
        action="store_true",
        help="mutate: skip the quiet runs that give latency without the campaign",
    )
    fuzz.add_argument(
        "--known", default="", help="finding kinds to report without failing (known defects)"
    )
    fuzz.add_argument("--out", default="fuzz-findings", help="directory for finding files")
    fuzz.add_argument("--json", action="store_true", help="the report as one JSON object")
    fuzz.add_argument("--target", help="mutate over UDP: HOST:PORT of a peer (loopback only)")
    fuzz.add_argument("--table", help="--target: the target's table id (16 hex digits)")
    fuzz.add_argument(
        "--allow-remote",
        action="store_true",
        help="--target may be outside loopback (never use on a shared network)",
    )
    fuzz.set_defaults(run=run_fuzz)


def _names(text: str, known: tuple[str, ...], what: str) -> tuple[str, ...]:
    if text in ("", "all"):
        return known
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    bad = [n for n in names if n not in known]
    if bad:
        raise ValueError(f"unknown {what} {', '.join(bad)}; known: {', '.join(known)}")
    return names


def options_from(args: argparse.Namespace) -> CampaignOptions:
    for name in ("players", "cases", "datagrams", "per_case", "nerts_size"):
        if getattr(args, name) < (2 if name == "players" else 1 if name != "datagrams" else 0):
            raise ValueError(f"--{name.replace('_', '-')} is too small")
    if args.rate <= 0:
        raise ValueError("--rate must be positive")
    from nerts_p2p.game.bots import level_named

    level_named(args.level)
    table = TableConfig(
        players=args.players, nerts_size=args.nerts_size, level=args.level, planted=args.planted
    )
    modes = MODES if args.mode == "all" else (args.mode,)
    return CampaignOptions(
        modes=modes,
        seed=args.seed,
        table=table,
        link_cases=args.cases,
        fault_kinds=kinds_from_text(args.faults),
        faults_per_case=args.faults_per_case,
        datagrams=args.datagrams,
        per_case=args.per_case,
        rate=args.rate,
        order_attacks=() if args.no_order_attacks else ORDER_ATTACKS,
        lamport_cap=args.lamport_cap,
        adversaries=_names(args.adversaries, ADVERSARIES, "adversary"),
        shrink=not args.no_shrink,
        out=Path(args.out),
        known=frozenset(n.strip() for n in args.known.split(",") if n.strip()),
        baseline=not args.no_baseline,
    )


def run_fuzz(args: argparse.Namespace) -> int:
    if args.mode == "replay":
        if not args.finding:
            raise ValueError("fuzz replay needs a finding file: nerts-p2p fuzz replay FILE.json")
        return replay(Path(args.finding), as_json=args.json)
    if args.finding:
        raise ValueError(f"unexpected argument {args.finding!r}")
    options = options_from(args)
    if args.target:
        from tools.fuzz.udp import run_udp_campaign

        return run_udp_campaign(args, options)
    report = run_campaign(options)
    _print_report(report, options, as_json=args.json)
    return 1 if report.findings else 0


def _print_report(report: CampaignReport, options: CampaignOptions, *, as_json: bool) -> None:
    if as_json:
        print(json.dumps(report.to_json(), indent=1))
        return
    print(f"cases: {report.cases}")
    if "mutate" in options.modes:
        print(
            f"mutate: {report.datagrams} datagrams, {report.rate():,.0f} per second "
            f"({report.to_json()['mutate']['datagrams_per_cpu_second']:,.0f} per CPU second); "
            f"crashes {report.crashes}, hangs {report.hangs}, divergences {report.divergences}; "
            f"honest p99 move latency {p99(report.latency)}s "
            f"(without the campaign {p99(report.latency_baseline)}s)"
        )
        drops = ", ".join(f"{k} {v}" for k, v in report.drops.items() if v)
        print(f"  target's drops by reason: {drops}")
    for row in report.hostile:
        print(f"hostile {row['adversary']}: {row['detail']}")
    for finding in report.known:
        print(f"known: {finding.title}\n  {finding.replay_command()}")
    for finding in report.findings:
        print(f"FINDING: {finding.title}")
        for problem in finding.problems[:3]:
            print(f"  at {problem.time:.2f}s: {problem.kind}: {problem.detail}")
        print(f"  replay: {finding.replay_command()}")
    print(
        f"{len(report.findings)} finding(s)"
        + (f", {len(report.known)} known" if report.known else "")
    )


def replay(path: Path, *, as_json: bool) -> int:
    """Run a finding again; exit 1 if it still shows a problem, 0 if it does not."""
    from tools.fuzz.hostile import run_adversary
    from tools.fuzz.link import LinkCase, run_link
    from tools.fuzz.mutate_run import MutateCase, run_mutate

    mode, case = load_case(path)
    try:
        if mode == "link":
            table = run_link(LinkCase.from_json(case))
        elif mode == "mutate":
            table = run_mutate(MutateCase.from_json(case)).table
        elif mode == "hostile":
            table = run_adversary(case["adversary"], TableConfig.from_json(case["config"])).table
        else:
            raise ValueError(f"{path}: unknown mode {mode!r}")
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{path}: the finding's case is incomplete ({exc})") from None
    problems = [p.to_json() for p in table.problems]
    if as_json:
        print(json.dumps({"mode": mode, "reproduced": bool(problems), "problems": problems}))
    else:
        for p in problems[:20]:
            print(f"at {p['time']:.2f}s: {p['kind']}: {p['detail']}")
        print(f"{'reproduced' if problems else 'did not reproduce'}: {len(problems)} problem(s)")
    return 1 if problems else 0


__all__ = ["add_fuzz_parser", "options_from", "replay", "run_fuzz"]
