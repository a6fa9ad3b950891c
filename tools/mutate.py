"""Mutation testing of the core: does the suite notice when the code is subtly wrong?

    .venv/bin/python -m tools.mutate [--module nerts_p2p/game/engine.py ...] [--sample N]
                                     [--seed S] [--timeout SECONDS] [--fail-under PCT] [--json]

Each mutant is one small change to one core module (a comparison, boolean or arithmetic
operator swapped, a constant off by one, a condition negated, a returned value replaced, a
statement deleted). The module's own test subset (`TEST_SUBSETS`) runs against it with `-x`;
the mutant is *killed* if a test fails (or errors, or runs past the per-mutant timeout: an
infinite loop is caught that way) and *survives* if every test passes.

Mutants (`tools/mutants.py`) are written into a temporary copy of the source tree, never
into the worktree, so an interrupted campaign (Ctrl-C included) leaves nothing mutated
behind. The copy is imported
ahead of the editable install (`PYTHONPATH`), and the campaign checks that before starting.
Test runs are forked from one process that has pytest loaded (`tools/mutation_worker.py`).

Survivors that cannot change behaviour (equivalent mutants) are listed with the reason in
`tools/mutation_equivalent.txt`; the kill rate is reported both raw and over the
non-equivalent mutants. Exit codes: 0 every module reaches `--fail-under` (over its
non-equivalent mutants), 1 some module does not or the unmutated tests fail, 2 bad usage.
This is a campaign, not part of `make test` (docs/MUTATION.md has the figures).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TextIO

from tools.mutants import Mutant, generate_mutants, mutate_source, mutation_points

ROOT = Path(__file__).resolve().parent.parent

#: The tests of the table replica: every module `nerts_p2p/table/replica.py` was split into
#: (one concept each) is judged by the same subset.
REPLICA_TESTS: tuple[str, ...] = (
    "tests/replication/test_table_gate_edges.py",
    # The conformance vectors: the game's checks of OPEN, READY and START at the gate.
    "tests/protocol/test_vectors.py",
    "tests/replication/test_unreadable_move.py",
    "tests/replication/test_restore_default.py",
    "tests/replication/test_seed_share_commitment.py",
    "tests/replication/test_table_seats.py",
    "tests/replication/test_reveals.py",
    "tests/replication/test_race_announcements.py",
    "tests/replication/test_partner_seed.py",
    "tests/replication/test_pinned_behaviours.py",
    "tests/replication/test_replica_rules.py",
    "tests/replication/test_replica_door.py",
    "tests/replication/test_spent_time_reports.py",
    "tests/replication/test_presence_across_rounds.py",
    "tests/replication/test_round_end.py",
    "tests/replication/test_races.py",
    "tests/replication/test_order.py",
    "tests/replication/test_hostile_table.py",
    "tests/replication/test_fair_ties.py",
    "tests/replication/test_wedged_lobby.py",
    "tests/replication/test_lobby_state_hash.py",
    "tests/replication/test_lamport_ceiling.py",
    "tests/protocol/test_admission.py",
    # Seed 801's survivors: restarts around a round's start, a nonce never revealed by a
    # player voted out, a start announced stable on its own.
    "tests/replication/test_restart_secrets_and_moves.py",
    "tests/replication/test_departed_before_nonce.py",
    "tests/replication/test_start_announced_stable.py",
    # Seed 804's: our own move handed to the shell as it is signed, a departure reported by
    # the tick whose vote settles it.
    "tests/replication/test_shell_hears_at_once.py",
    # Seed 901's: a departed player's last move that every voter held; the presence
    # watch's edges.
    "tests/replication/test_departure_cut.py",
    "tests/replication/test_presence_edges.py",
    # The slow ones (whole simulated matches on lossy meshes) last: with -x, a mutant an
    # earlier test kills never waits for them.
    "tests/replication/test_one_way_link.py",
    # Seed 901's: a round begun by the heir of a starter voted out, and its former
    # starter's START arriving after it.
    "tests/replication/test_start_race.py",
    "tests/replication/test_restarts.py",
    "tests/replication/test_lies_about_time.py",
    "tests/replication/test_blind_peer.py",
    "tests/replication/test_partnerships.py",
    "tests/replication/test_catch_up.py",
    "tests/replication/test_departures.py",
)
REPLICA_MODULES: tuple[str, ...] = tuple(
    f"nerts_p2p/table/{name}.py"
    for name in (
        "replica", "round", "lobby", "playing", "round_start", "deal_secrets", "stability",
        "round_finish", "departure_votes", "events", "commitments", "presence", "gate",
        "status", "wire",
    )
)  # fmt: skip
#: The tests of the sync state machine that drive one `SyncPeer` (or a small table) by hand:
#: a few seconds in all, fastest first. Every sync module is judged by them...
SYNC_TESTS: tuple[str, ...] = (
    "tests/protocol/test_sync_refusals.py",
    "tests/protocol/test_sync_pinned.py",
    "tests/protocol/test_member_names.py",
    "tests/protocol/test_signs_of_life.py",
    "tests/protocol/test_relay_and_requests.py",
    "tests/protocol/test_lamport_step.py",
    "tests/protocol/test_round_order.py",
    "tests/protocol/test_answers_tracked.py",
    "tests/protocol/test_sync_rules.py",
    "tests/replication/test_pinned_behaviours.py",
    "tests/protocol/test_anti_entropy_rules.py",
    "tests/protocol/test_vectors.py",
    "tests/replication/test_lamport_ceiling.py",
    "tests/replication/test_order.py",
    "tests/replication/test_round_end.py",
    "tests/protocol/test_admission.py",
    "tests/protocol/test_hostile.py",
    "tests/replication/test_one_way_link.py",
    "tests/protocol/test_reference_bounds.py",
    "tests/protocol/test_relayed_evidence.py",
    "tests/protocol/test_relayed_heartbeats.py",
    "tests/protocol/test_promise_bound.py",
    "tests/protocol/test_heartbeats_run_ahead.py",
    "tests/protocol/test_parking.py",
    "tests/protocol/test_divergence_probe.py",
    "tests/replication/test_heir_start_waits.py",
    "tests/replication/test_departure_on_own_vote.py",
    "tests/protocol/test_first_op_equivocation.py",
    "tests/protocol/test_deps_after_expulsion.py",
    "tests/protocol/test_invalid_copy_chain.py",
    "tests/protocol/test_ops_awaiting_a_key.py",
    "tests/replication/test_stamping_bounds.py",
    "tests/replication/test_stamp_after_expelled_liar.py",
    "tests/protocol/test_expulsion_edges.py",
    "tests/protocol/test_push_probe_and_packing.py",
    "tests/protocol/test_promise_book.py",
    "tests/protocol/test_op_checks_edges.py",
    "tests/protocol/test_signs_of_life_edges.py",
    "tests/protocol/test_departure_agreement.py",
    "tests/protocol/test_store_load_order.py",
    "tests/protocol/test_who_starts.py",
    "tests/protocol/test_tracked_sources_bound.py",
    "tests/protocol/test_first_op_not_a_join.py",
    "tests/protocol/test_claims_after_expulsion.py",
    "tests/replication/test_rounds_with_other_players.py",
    "tests/protocol/test_restart_holds.py",
    "tests/replication/test_start_edges.py",
    "tests/protocol/test_gap_ranges.py",
    "tests/protocol/test_expelled_digest.py",
)
#: ...and the modules whose concept only whole simulated tables exercise also by these
#: (each a minute or more on a loaded host: a surviving mutant costs the whole subset).
SYNC_TABLE_TESTS: dict[str, tuple[str, ...]] = {
    "restart": (
        "tests/replication/test_restart_resume_rules.py",
        "tests/net/test_store.py",
        "tests/replication/test_quiet_restart.py",
        "tests/replication/test_restarts.py",
    ),
    "lies": ("tests/replication/test_lies_about_time.py",),
    "catch_up": ("tests/replication/test_catch_up.py",),
    "departures": ("tests/replication/test_departures.py",),
    "start_race": ("tests/replication/test_start_race.py",),
}
_SYNC_EXTRA: dict[str, tuple[str, ...]] = {
    "sync": ("restart", "departures"),
    "sync_parking": (),
    "sync_delivery": (),
    "sync_checks": (),
    "sync_lamport": (),
    "sync_membership": ("departures",),
    "sync_starters": ("departures", "start_race"),
    "sync_heartbeats": (),
    "sync_requests": (),
    "sync_evidence": ("lies",),
    "sync_restart": ("restart",),
    "sync_events": (),
    "sync_limits": ("catch_up",),
    "sync_liveness": ("departures",),
}
SYNC_MODULES: tuple[str, ...] = tuple(f"protocol/{name}.py" for name in _SYNC_EXTRA)
SYNC_SUBSETS: dict[str, tuple[str, ...]] = {
    f"protocol/{name}.py": SYNC_TESTS + tuple(t for key in extra for t in SYNC_TABLE_TESTS[key])
    for name, extra in _SYNC_EXTRA.items()
}

#: Each core module and the narrowest test subset that should kill its mutants.
TEST_SUBSETS: dict[str, tuple[str, ...]] = {
    "nerts_p2p/game/engine.py": (
        "tests/engine/test_rules_scenarios.py",
        "tests/engine/test_completeness.py",
        "tests/engine/test_stuck.py",
        "tests/engine/test_variants.py",
        "tests/engine/test_owners_view.py",
        "tests/engine/test_turn_knowledge.py",
        "tests/engine/test_properties.py::test_a_rejected_move_changes_nothing",
        "tests/engine/test_properties.py::test_every_card_of_every_deck_is_in_exactly_one_place",
    ),
    "nerts_p2p/game/legal.py": (
        "tests/engine/test_completeness.py",
        "tests/engine/test_stuck.py",
        "tests/engine/test_properties.py",
    ),
    "nerts_p2p/game/scoring.py": (
        "tests/engine/test_scoring_boundaries.py",
        "tests/engine/test_variants.py",
        "tests/engine/test_rules_scenarios.py",
        "tests/engine/test_simulation.py",
    ),
    "protocol/order.py": (
        "tests/protocol/test_round_order.py",
        "tests/replication/test_departure_cut.py",
        "tests/replication/test_pinned_behaviours.py",
        "tests/replication/test_order.py",
        "tests/replication/test_hostile_table.py::test_a_host_who_sits_a_round_out_can_still_start_it",
        "tests/protocol/test_sync_rules.py",
        "tests/replication/test_fair_ties.py",
        "tests/replication/test_races.py",
        "tests/replication/test_replica_rules.py",
        # The START's confirmation, kept on the round's log (seed 1201: a log born
        # confirmed let players act in a round its START could still be voided from).
        "tests/replication/test_start_race.py",
    ),
    "protocol/schema.py": (
        "tests/protocol/test_schema_bounds.py",
        "tests/protocol/test_schema_words.py",
        "tests/protocol/test_schema.py",
        "tests/protocol/test_hostile.py",
    ),
    **dict.fromkeys(REPLICA_MODULES, REPLICA_TESTS),
    # The shells' questions between rounds: no replica test asks them (seed 701 drew eight
    # mutants of status.py and the replica subset killed none), their own tests do.
    "nerts_p2p/table/status.py": (
        "tests/replication/test_lobby_question_edges.py",
        "tests/replication/test_lobby_questions.py",
    ),
    # The rules on the wire: the variants' own tests read malformed pairs (seed 901 drew
    # the plain-words refusal of a value that is no array, which no replica test sends).
    "nerts_p2p/table/wire.py": (
        "tests/engine/test_variants.py",
        *REPLICA_TESTS,
    ),
    **SYNC_SUBSETS,
    # The sync machine's two pure helpers: judged by the sync tests, and by the whole
    # tables whose concept they are (departures agreed on, promises broken).
    "protocol/departure.py": SYNC_TESTS + SYNC_TABLE_TESTS["departures"],
    "protocol/promises.py": SYNC_TESTS + SYNC_TABLE_TESTS["lies"],
}

EQUIVALENT_FILE = Path(__file__).resolve().parent / "mutation_equivalent.txt"
#: How `tools.mutants` describes a mutation (the last field of an equivalent's entry).
_MUTATION = re.compile(
    r"\S+ -> \S+|not in -> in|in -> not in|is not -> is|is -> is not|statement deleted"
    r"|drop `not`|negate the condition|negate a comprehension filter|return None instead"
    r"|.+ \(#\d+ on the line\)"
)

#: Runs of the subset with the unmutated code: the per-mutant timeout defaults to this
#: many times the slowest of them (plus a margin for a loaded host).
TIMEOUT_FACTOR = 4.0
TIMEOUT_MARGIN = 10.0


# --- running them -------------------------------------------------------------------------


@dataclass
class MutantResult:
    mutant: Mutant
    outcome: str  # "killed", "timeout" (counts as killed) or "survived"
    equivalent: bool = False

    @property
    def killed(self) -> bool:
        return self.outcome != "survived"


@dataclass
class ModuleReport:
    module: str
    tests: tuple[str, ...]
    candidates: int
    results: list[MutantResult] = field(default_factory=list)
    clean_seconds: float = 0.0  # the subset's run on the unmutated tree

    @property
    def killed(self) -> int:
        return sum(r.killed for r in self.results)

    @property
    def equivalent(self) -> int:
        return sum(r.equivalent for r in self.results)

    @property
    def score(self) -> float:
        """Killed over non-equivalent mutants, in percent (100 when there are none)."""
        counted = len(self.results) - self.equivalent
        return 100.0 if counted == 0 else 100.0 * self.killed / counted

    @property
    def raw_score(self) -> float:
        return 100.0 if not self.results else 100.0 * self.killed / len(self.results)


class CampaignError(Exception):
    """The campaign cannot run (the unmutated tests fail, the copy is not imported...)."""


def load_equivalent(path: Path = EQUIVALENT_FILE) -> set[str]:
    """Mutant keys known to be equivalent: `module | original line | mutation  # why`, the
    module optionally scoped to a function (`module::Class.method`)."""
    if not path.exists():
        return set()
    keys = set()
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        # The reason follows the mutation after "  #", but the original line may hold a
        # comment of its own, and " | " (`seen | mask`): the entry ends at the first "  #"
        # whose last field reads as a mutation; module and mutation are the outer fields.
        ends = [i for i in range(len(line)) if line.startswith("  #", i)] + [len(line)]
        for end in ends:
            parts = [part.strip() for part in line[:end].split(" | ")]
            if len(parts) >= 3 and _MUTATION.fullmatch(parts[-1]):
                keys.add(" | ".join([parts[0], " | ".join(parts[1:-1]), parts[-1]]))
                break
    return keys


def is_listed(mutant: Mutant, equivalent: set[str]) -> bool:
    """Listed as equivalent: by its key, or by its key scoped to its function
    (`module::Class.method | line | mutation`), which names only that function's line."""
    return mutant.key in equivalent or mutant.scoped_key in equivalent


def _copy_tree(root: Path, into: Path) -> Path:
    target = into / "tree"
    ignore = shutil.ignore_patterns(
        ".venv", ".git", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache",
        ".hypothesis", "*.egg-info",
    )  # fmt: skip
    shutil.copytree(root, target, ignore=ignore)
    return target


def _environment(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree) + os.pathsep + env.get("PYTHONPATH", "")
    # Mutant and original can share a size and an mtime second: no stale bytecode.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.setdefault("HYPOTHESIS_PROFILE", "project")
    return env


class Runner:
    """Runs test subsets in the copy at `tree` through one fork server (`mutation_worker`)."""

    def __init__(self, tree: Path, python: str) -> None:
        self.tree = tree
        self.process = subprocess.Popen(
            [python, str(Path(__file__).resolve().parent / "mutation_worker.py"), str(tree)],
            cwd=tree,
            env=_environment(tree),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self, tests: Sequence[str], timeout: float) -> str:
        """One of "passed", "failed" or "timeout" (the run was killed)."""
        return self._ask({"tests": list(tests), "timeout": timeout})

    def check_imported(self, module: str) -> None:
        """Fail unless a test run imports the copy's `module`, not the worktree's."""
        name = module.removesuffix(".py").replace("/", ".")
        if self._ask({"module": name, "timeout": 120.0}) != "passed":
            raise CampaignError(f"a test run would not import the copy of {module}")

    def _ask(self, request: dict[str, object]) -> str:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise CampaignError("the test runner stopped unexpectedly")
        return str(json.loads(answer)["outcome"])

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()  # it kills a test run still going
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def run_module(
    runner: Runner,
    module: str,
    tests: Sequence[str],
    mutants: Sequence[Mutant],
    *,
    timeout: float | None,
    equivalent: set[str],
    progress: Callable[[int, int, int], None] = lambda _done, _total, _killed: None,
    clean_seconds: float | None = None,
) -> ModuleReport:
    """Each mutant of `module` against `tests`, in the copy at `tree` (restored after).
    `clean_seconds`: how long `tests` took on the unmutated tree in this campaign (another
    module with the same subset ran them); None runs them clean first."""
    path = runner.tree / module
    original = path.read_text()
    report = ModuleReport(module, tuple(tests), len(mutants))
    if not mutants:
        return report  # (`--matching` found none here): nothing to run, clean or not
    if clean_seconds is None:
        started = time.monotonic()
        if runner.run(tests, 3600.0) != "passed":
            raise CampaignError(f"the tests of {module} fail without any mutant: {' '.join(tests)}")
        clean_seconds = time.monotonic() - started
    report.clean_seconds = clean_seconds
    limit = timeout if timeout is not None else TIMEOUT_FACTOR * clean_seconds + TIMEOUT_MARGIN
    try:
        for done, mutant in enumerate(mutants, 1):
            path.write_text(mutate_source(original, mutant))
            outcome = runner.run(tests, limit)
            result = MutantResult(
                mutant,
                {"passed": "survived", "failed": "killed", "timeout": "timeout"}[outcome],
                equivalent=outcome == "passed" and is_listed(mutant, equivalent),
            )
            report.results.append(result)
            progress(done, len(mutants), report.killed)
    finally:
        path.write_text(original)
    return report


# --- output -------------------------------------------------------------------------------


def _bar(done: int, total: int, width: int = 30) -> str:
    filled = width * done // max(total, 1)
    return "[" + "#" * filled + "." * (width - filled) + "]"


def _progress_printer(module: str, stream: TextIO) -> Callable[[int, int, int], None]:
    interactive = stream.isatty()

    def show(done: int, total: int, killed: int) -> None:
        text = f"{module} {_bar(done, total)} {done}/{total} mutants, {killed} killed"
        if interactive:
            stream.write("\r" + text + ("\n" if done == total else ""))
        elif done == total or done % 10 == 0:
            stream.write(text + "\n")
        stream.flush()

    return show


def report_text(reports: Sequence[ModuleReport], seed: int) -> str:
    out = [f"mutation campaign, seed {seed}"]
    out.append(f"{'module':34} {'mutants':>7} {'killed':>6} {'equiv':>5} {'score':>7} {'raw':>7}")
    for r in reports:
        out.append(
            f"{r.module:34} {len(r.results):>7} {r.killed:>6} {r.equivalent:>5} "
            f"{r.score:>6.1f}% {r.raw_score:>6.1f}%"
        )
    survivors = [res for r in reports for res in r.results if not res.killed]
    if survivors:
        out.append("")
        out.append("surviving mutants (score counts those not marked equivalent):")
        for res in survivors:
            m = res.mutant
            mark = " [equivalent]" if res.equivalent else ""
            where = f" ({m.function})" if m.function else ""
            out.append(f"  {m.module}:{m.line}{where}: {m.description}{mark}")
            out.append(f"      {m.original}")
    return "\n".join(out)


def report_json(reports: Sequence[ModuleReport], seed: int) -> str:
    return json.dumps(
        {
            "seed": seed,
            "modules": [
                {
                    "module": r.module,
                    "tests": list(r.tests),
                    "candidates": r.candidates,
                    "mutants": len(r.results),
                    "killed": r.killed,
                    "equivalent": r.equivalent,
                    "score": round(r.score, 1),
                    "raw_score": round(r.raw_score, 1),
                    "survivors": [
                        {**asdict(res.mutant), "equivalent": res.equivalent}
                        for res in r.results
                        if not res.killed
                    ],
                }
                for r in reports
            ],
        },
        indent=2,
    )


# --- the command --------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tools.mutate",
        description="Mutation testing of the core modules against their test subsets.",
    )
    parser.add_argument(
        "--module",
        action="append",
        metavar="PATH",
        help="a core module (repeatable; default: all of them): " + ", ".join(TEST_SUBSETS),
    )
    parser.add_argument(
        "--tests",
        action="append",
        metavar="PATH",
        help="run these tests instead of the module's subset (repeatable)",
    )
    parser.add_argument("--sample", type=int, metavar="N", help="at most N mutants per module")
    parser.add_argument("--seed", type=int, default=1, help="which sample (default 1)")
    parser.add_argument(
        "--timeout", type=float, metavar="SECONDS", help="per mutant (default: from a clean run)"
    )
    parser.add_argument(
        "--fail-under",
        type=float,
        default=95.0,
        metavar="PCT",
        help="exit 1 if a module kills fewer of its non-equivalent mutants (default 95)",
    )
    parser.add_argument(
        "--matching",
        action="append",
        metavar="TEXT",
        help="only mutants whose 'module | line | mutation' contains TEXT (to recheck one; "
        "repeatable: any of the texts)",
    )
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    return parser


def _usage_error(parser: argparse.ArgumentParser, message: str) -> int:
    parser.print_usage(sys.stderr)
    print(f"{parser.prog}: error: {message}", file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return 0 if exit_.code == 0 else 2
    root: Path = args.root.resolve()
    modules: list[str] = args.module or list(TEST_SUBSETS)
    for module in modules:
        if not (root / module).is_file():
            return _usage_error(parser, f"no such module: {module}")
        if module not in TEST_SUBSETS and not args.tests:
            return _usage_error(parser, f"{module} has no test subset: name its tests with --tests")
    for test in args.tests or ():
        if not (root / test.split("::")[0]).exists():
            return _usage_error(parser, f"no such test path: {test}")
    if args.sample is not None and args.sample < 1:
        return _usage_error(parser, "--sample must be at least 1")
    if args.timeout is not None and args.timeout <= 0:
        return _usage_error(parser, "--timeout must be positive")

    chosen: dict[str, list[Mutant]] = {}
    candidates: dict[str, int] = {}
    for module in modules:
        source = (root / module).read_text()
        try:
            candidates[module] = len(mutation_points(source, module))
        except SyntaxError as error:
            return _usage_error(parser, f"{module} is not valid Python: {error}")
        # One generator per module: a module's sample does not depend on the others chosen.
        rng = random.Random(f"{args.seed}/{module}")
        chosen[module] = generate_mutants(
            source, module, sample=args.sample, rng=rng, matching=args.matching
        )

    if args.list:
        try:
            _print_list(chosen, as_json=args.json)
        except BrokenPipeError:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    try:
        reports = _campaign(root, modules, chosen, candidates, args)
        print(report_json(reports, args.seed) if args.json else report_text(reports, args.seed))
        sys.stdout.flush()
    except CampaignError as error:
        print(f"mutation campaign failed: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted: the worktree was never mutated", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # `| head -1`: the reader left; say nothing more.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return 0 if all(r.score >= args.fail_under for r in reports) else 1


def _interrupt(_signal: int, _frame: object) -> None:
    raise KeyboardInterrupt


def _print_list(chosen: dict[str, list[Mutant]], *, as_json: bool) -> None:
    if as_json:
        print(json.dumps({m: [asdict(x) for x in ms] for m, ms in chosen.items()}, indent=2))
        return
    for mutants in chosen.values():
        for m in mutants:
            print(f"{m.module}:{m.line}: [{m.operator}] {m.description}: {m.original}")


def _campaign(
    root: Path,
    modules: Sequence[str],
    chosen: dict[str, list[Mutant]],
    candidates: dict[str, int],
    args: argparse.Namespace,
) -> list[ModuleReport]:
    python = sys.executable
    equivalent = load_equivalent(EQUIVALENT_FILE)
    with tempfile.TemporaryDirectory(prefix="nerts-mutate-") as scratch:
        tree = _copy_tree(root, Path(scratch))
        with Runner(tree, python) as runner:
            reports = _run_modules(runner, modules, chosen, candidates, args, equivalent)
    return reports


def _run_modules(
    runner: Runner,
    modules: Sequence[str],
    chosen: dict[str, list[Mutant]],
    candidates: dict[str, int],
    args: argparse.Namespace,
    equivalent: set[str],
) -> list[ModuleReport]:
    reports = []
    # Modules that share a subset (the concept modules one big module was split into) run
    # it clean once: the tree is the same unmutated tree for each of them.
    clean: dict[tuple[str, ...], float] = {}
    for module in modules:
        runner.check_imported(module)
        tests = tuple(args.tests) if args.tests else TEST_SUBSETS[module]
        report = run_module(
            runner,
            module,
            tests,
            chosen[module],
            timeout=args.timeout,
            equivalent=equivalent,
            progress=_progress_printer(module, sys.stderr),
            clean_seconds=clean.get(tests),
        )
        if report.clean_seconds:
            clean[tests] = report.clean_seconds
        report.candidates = candidates[module]
        reports.append(report)
    return reports


if __name__ == "__main__":
    # A campaign stopped by `kill` cleans up like one stopped by Ctrl-C (only as a program:
    # `main` called from a test must not take over its process's SIGTERM).
    signal.signal(signal.SIGTERM, _interrupt)
    sys.exit(main())
