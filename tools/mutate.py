"""Mutation testing of the core: does the suite notice when the code is subtly wrong?

    .venv/bin/python -m tools.mutate [--module nerts_p2p/game/engine.py ...] [--sample N]
                                     [--seed S] [--timeout SECONDS] [--fail-under PCT]
                                     [--jobs N] [--no-coverage] [--json]

Each mutant is one small change to one core module (a comparison, boolean or arithmetic
operator swapped, a constant off by one, a condition negated, a returned value replaced, a
statement deleted). The module's own test subset (`TEST_SUBSETS`) runs against it with `-x`;
the mutant is *killed* if a test fails (or errors, or runs past the per-mutant timeout: an
infinite loop is caught that way) and *survives* if every test passes.

Only the tests of the subset that run one of the mutant's lines run (fastest first): which
test runs which line is recorded once for the modules sharing a subset, under a line tracer
in a forked run, and cached in `.mutation-cache/` until a source file changes. A mutant on a
line run at import runs the whole subset; one no test runs survives without a run ("no test
runs this line"). `--no-coverage` runs the whole subset for every mutant. `--jobs N` runs N
fork servers, each on its own copy of the tree.

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
import contextlib
import fnmatch
import functools
import hashlib
import json
import os
import posixpath
import queue
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final, TextIO, TypeVar

from tools.mutants import (
    Mutant,
    generate_mutants,
    mutate_source,
    mutation_lines,
    mutation_points,
)

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
    "tests/replication/test_nonce_memo.py",
    "tests/replication/test_start_announced_stable.py",
    # Seed 804's: our own move handed to the shell as it is signed, a departure reported by
    # the tick whose vote settles it.
    "tests/replication/test_shell_hears_at_once.py",
    # Seed 901's: a departed player's last move that every voter held; the presence
    # watch's edges.
    "tests/replication/test_departure_cut.py",
    "tests/replication/test_presence_edges.py",
    # A participant proven to cheat voted out at once, its seat frozen (2026-12-02).
    "tests/replication/test_expelled_seat.py",
    "tests/replication/test_heir_start_waits.py",
    "tests/replication/test_restart_after_reveal.py",
    "tests/replication/test_start_edges.py",
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
    "tests/replication/test_lobby_op_horizon.py",
    "tests/replication/test_relayed_acknowledgment.py",
    # Authenticity by voucher: one signature per run of an author's ops, and relaying an op
    # whose own signature was never checked (the fuzzer's oracle judges the same rule).
    "tests/protocol/test_vouchers.py",
    "tests/fuzz/test_oracle_vouchers.py",
    # A whole log (a replay file) confirms the STARTs its departures did not void.
    "tests/replication/test_closed_log.py",
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
    "departures": (
        "tests/replication/test_departures.py",
        "tests/replication/test_expelled_seat.py",
    ),
    "start_race": ("tests/replication/test_start_race.py",),
}
_SYNC_EXTRA: dict[str, tuple[str, ...]] = {
    "sync": ("restart", "departures"),
    "sync_parking": (),
    # Delivery of an heir's ops signed before its own START (seed 16: only the START
    # race's tables deliver one).
    "sync_delivery": ("start_race",),
    # Judging an heir's op signed before its own START (seed 18: only the START race's
    # tables sign one).
    "sync_checks": ("start_race",),
    "sync_lamport": (),
    "sync_membership": ("departures", "start_race"),
    "sync_starters": ("departures", "start_race"),
    "sync_heartbeats": (),
    "sync_requests": (),
    # A restarted peer's own heartbeat coming back (seed 16: only the restart tables).
    "sync_evidence": ("lies", "restart"),
    "sync_restart": ("restart",),
    "sync_events": (),
    "sync_limits": ("catch_up",),
    "sync_vouchers": ("catch_up",),
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
        "tests/engine/test_rejection_reasons.py",
        "tests/engine/test_engine_edges.py",
        "tests/engine/test_engine_api.py",
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
        "tests/engine/test_joker_faces.py",
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
        "tests/protocol/test_schema_edges.py",
        "tests/protocol/test_schema_bounds.py",
        "tests/protocol/test_schema_words.py",
        "tests/protocol/test_schema.py",
        "tests/protocol/test_hostile.py",
    ),
    **dict.fromkeys(REPLICA_MODULES, REPLICA_TESTS),
    # The shells' questions between rounds: no replica test asks them (seed 701 drew eight
    # mutants of status.py and the replica subset killed none), their own tests do, and
    # the departures' (who the lobby stops waiting for).
    "nerts_p2p/table/status.py": (
        "tests/replication/test_lobby_question_edges.py",
        "tests/replication/test_lobby_questions.py",
        "tests/replication/test_departures.py",
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
#: Recording which test runs which line traces every call: its timeout is this many times
#: the clean runs of the subsets recorded, plus a margin.
RECORD_FACTOR = 10.0
RECORD_MARGIN = 60.0
#: At the root of the tree: recordings kept between campaigns (in .gitignore).
CACHE_DIR = ".mutation-cache"
#: Seconds a runner has to exit after SIGTERM before it is killed (`Runner.close`).
CLOSE_GRACE = 5.0


# --- running them -------------------------------------------------------------------------


@dataclass
class MutantResult:
    mutant: Mutant
    outcome: str  # "killed", "timeout" (counts as killed) or "survived"
    equivalent: bool = False
    no_test: bool = False  # survived because no test runs a line of it (nothing was run)

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


#: Never copied into the mutants' tree, nor part of the digest the coverage cache is keyed by.
_NOT_COPIED = (
    ".venv", ".git", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    ".hypothesis", "*.egg-info", CACHE_DIR,
)  # fmt: skip


def _copy_tree(root: Path, into: Path, name: str = "tree") -> Path:
    target = into / name
    shutil.copytree(root, target, ignore=shutil.ignore_patterns(*_NOT_COPIED))
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

    def run(self, tests: Sequence[str], timeout: float, select: Sequence[str] = ()) -> str:
        """One of "passed", "failed" or "timeout" (the run was killed). `select`: only
        these node ids of `tests`, in this order (a node id not collected fails the run)."""
        request: dict[str, object] = {"tests": list(tests), "timeout": timeout}
        if select:
            request["select"] = list(select)
        return str(self._ask(request)["outcome"])

    def record(self, tests: Sequence[str], files: Sequence[str], timeout: float) -> Recording:
        """Run `tests` (without -x) and record which test runs which line of `files`."""
        answer = self._ask({"coverage": list(tests), "files": list(files), "timeout": timeout})
        path = Path(str(answer.get("path", "")))
        try:
            if answer["outcome"] != "passed":
                raise CampaignError(
                    f"recording the lines run by {' '.join(tests)}: {answer['outcome']} "
                    "(--no-coverage runs every mutant against its whole subset instead)"
                )
            return Recording.from_json(json.loads(path.read_text()))
        finally:
            if answer.get("path"):
                path.unlink(missing_ok=True)

    def check_imported(self, module: str) -> None:
        """Fail unless a test run imports the copy's `module`, not the worktree's."""
        name = module.removesuffix(".py").replace("/", ".")
        if self._ask({"module": name, "timeout": 120.0})["outcome"] != "passed":
            raise CampaignError(f"a test run would not import the copy of {module}")

    def _ask(self, request: dict[str, object]) -> dict[str, object]:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise CampaignError("the test runner stopped unexpectedly")
        decoded: dict[str, object] = json.loads(answer)
        return decoded

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()  # it kills a test run still going
        try:
            self.process.wait(timeout=CLOSE_GRACE)
        except subprocess.TimeoutExpired:
            # A SIGTERM that reached the worker between its fork and its exec was taken by
            # the handler it inherited, and is lost with it: the worker then sits reading
            # its stdin for ever (a campaign that closed a runner just started hung so).
            self.process.kill()
            self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError, ValueError):  # a job thread may hold it
                    pipe.close()

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


# --- which tests run which lines ----------------------------------------------------------


@dataclass
class Recording:
    """Which test runs which line, from one recorded run of a subset (or several merged)."""

    tests: list[str]  # node ids, in the order run
    seconds: list[float]  # each test's setup, call and teardown, while recorded
    failed: set[int]  # tests that failed while recorded (they run for every mutant)
    outside: dict[str, set[int]]  # file -> lines run outside any test (at import...)
    lines: dict[str, dict[int, list[int]]]  # file -> line -> the tests that run it

    @classmethod
    def from_json(cls, data: Any) -> Recording:
        files: dict[str, Any] = data["files"]
        return cls(
            tests=[str(t) for t in data["tests"]],
            seconds=[float(s) for s in data["seconds"]],
            failed={int(i) for i in data["failed"]},
            outside={f: {int(n) for n in d["outside"]} for f, d in files.items()},
            lines={
                f: {int(n): [int(t) for t in ts] for n, ts in d["lines"].items()}
                for f, d in files.items()
            },
        )

    def to_json(self) -> dict[str, object]:
        return {
            "tests": self.tests,
            "seconds": self.seconds,
            "failed": sorted(self.failed),
            "files": {
                f: {
                    "outside": sorted(self.outside[f]),
                    "lines": {str(n): ts for n, ts in sorted(self.lines[f].items())},
                }
                for f in self.lines
            },
        }

    @classmethod
    def merge(cls, parts: Sequence[Recording]) -> Recording:
        """Runs of disjoint tests over the same files, as one."""
        merged = cls([], [], set(), {}, {})
        for part in parts:
            offset = len(merged.tests)
            merged.tests += part.tests
            merged.seconds += part.seconds
            merged.failed |= {offset + i for i in part.failed}
            for f, lines in part.lines.items():
                merged.outside.setdefault(f, set()).update(part.outside.get(f, ()))
                into = merged.lines.setdefault(f, {})
                for line, tests in lines.items():
                    into.setdefault(line, []).extend(offset + t for t in tests)
        return merged


def _covers(outer: str, inner: str) -> bool:
    """Test path or node id `outer` (`tests/x`, `tests/x/a.py`, `tests/x/a.py::test_f`)
    includes `inner` (a node id, or another such path)."""
    outer_path, _, outer_node = outer.partition("::")
    inner_path, _, inner_node = inner.partition("::")
    outer_path, inner_path = posixpath.normpath(outer_path), posixpath.normpath(inner_path)
    if not (outer_path in (".", inner_path) or inner_path.startswith(outer_path.rstrip("/") + "/")):
        return False
    if not outer_node:
        return True
    return inner_path == outer_path and (
        inner_node == outer_node or inner_node.startswith((outer_node + "::", outer_node + "["))
    )


def _union(subsets: Iterable[Sequence[str]]) -> tuple[str, ...]:
    """The test paths of several subsets, each test once (in the order first named)."""
    entries = list(dict.fromkeys(e for subset in subsets for e in subset))
    return tuple(e for e in entries if not any(o != e and _covers(o, e) for o in entries))


def _groups(subsets: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """The modules whose subsets share a test, together (one recording serves them all)."""
    groups: list[tuple[list[str], list[str]]] = []  # (modules, their test paths)
    for module, tests in subsets.items():
        joined = ([module], list(tests))
        for group in [g for g in groups if _overlap(g[1], tests)]:
            groups.remove(group)
            joined = (group[0] + joined[0], group[1] + joined[1])
        groups.append(joined)
    order = list(subsets)
    return sorted((sorted(g[0], key=order.index) for g in groups), key=lambda g: order.index(g[0]))


def _overlap(some: Sequence[str], others: Sequence[str]) -> bool:
    return any(_covers(a, b) or _covers(b, a) for a in some for b in others)


@dataclass(frozen=True)
class Plan:
    """What a mutant runs: `tests` (node ids, fastest first), or the whole subset (None)."""

    tests: tuple[str, ...] | None
    seconds: float = 0.0  # how long `tests` took while recorded

    @property
    def files(self) -> list[str]:
        return list(dict.fromkeys(t.split("::")[0] for t in self.tests or ()))


class ModuleCoverage:
    """A recording, seen from one module and its subset: which of its tests run a line."""

    def __init__(self, recording: Recording, module: str, subset: Sequence[str]) -> None:
        if module not in recording.lines:
            raise CampaignError(f"the recording has no lines of {module}")
        for entry in subset:
            if not any(_covers(entry, test) for test in recording.tests):
                raise CampaignError(f"the recording has no test of {entry} (try --no-coverage)")
        self.recording = recording
        self.mine = {i for i, t in enumerate(recording.tests) if any(_covers(e, t) for e in subset)}
        self.outside = recording.outside[module]
        self.by_line = recording.lines[module]
        # A test that failed while recorded may have stopped before its lines: run it always.
        self.always = recording.failed & self.mine

    def plan(self, lines: Iterable[int]) -> Plan:
        lines = list(lines)
        if any(line in self.outside for line in lines):
            return Plan(None)  # run at import (a constant, a default...): every test
        chosen = set(self.always)
        for line in lines:
            chosen.update(t for t in self.by_line.get(line, ()) if t in self.mine)
        seconds = self.recording.seconds
        order = sorted(chosen, key=lambda t: (seconds[t], t))
        return Plan(tuple(self.recording.tests[t] for t in order), sum(seconds[t] for t in order))


class CoverageCache:
    """Recordings on disk (`.mutation-cache/coverage/` at the root), keyed by the test paths,
    the files recorded and a digest of the tree's sources: any edit records again."""

    KEEP = 3  # trees' recordings kept (the newest): the others are removed

    def __init__(self, root: Path, digest: str) -> None:
        self.directory = root / CACHE_DIR / "coverage" / digest

    @staticmethod
    def _key(tests: Sequence[str], files: Sequence[str]) -> dict[str, object]:
        profile = os.environ.get("HYPOTHESIS_PROFILE", "project")
        return {"tests": list(tests), "files": list(files), "python": sys.version,
                "hypothesis_profile": profile}  # fmt: skip

    def find(self, tests: Sequence[str], files: Sequence[str]) -> Recording | None:
        """A recording of these tests and files, or of more (one of a bigger campaign)."""
        wanted = self._key(tests, files)
        if not self.directory.is_dir():
            return None
        for key_file in sorted(self.directory.glob("*.key.json")):
            try:
                key = json.loads(key_file.read_text())
                if not (
                    {k: v for k, v in key.items() if k not in ("tests", "files")}
                    == {k: v for k, v in wanted.items() if k not in ("tests", "files")}
                    and set(files) <= set(key["files"])
                    and all(any(_covers(o, t) for o in key["tests"]) for t in tests)
                ):
                    continue
                data = key_file.with_name(key_file.name.replace(".key.json", ".json"))
                return Recording.from_json(json.loads(data.read_text()))
            except (OSError, ValueError, KeyError, TypeError):
                continue  # half written, or from an older format: record again
        return None

    def store(self, tests: Sequence[str], files: Sequence[str], recording: Recording) -> None:
        key = self._key(tests, files)
        name = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            # The data before the key that names it, each written whole: a reader never
            # finds a key whose data is half there.
            for path, content in (
                (self.directory / f"{name}.json", recording.to_json()),
                (self.directory / f"{name}.key.json", key),
            ):
                temporary = path.with_suffix(".tmp")
                temporary.write_text(json.dumps(content))
                os.replace(temporary, path)
            trees = sorted(self.directory.parent.iterdir(), key=lambda p: p.stat().st_mtime)
            for old in trees[: -self.KEEP]:
                shutil.rmtree(old, ignore_errors=True)
        except OSError as error:  # a read-only checkout: the campaign goes on without
            print(f"coverage cache not written: {error}", file=sys.stderr)


#: The campaign's own code: no core test imports it, so editing it keeps the recordings.
_NOT_DIGESTED: Final = frozenset(
    {"tools/mutate.py", "tools/mutants.py", "tools/mutation_worker.py", "tests/test_mutate.py"}
)


def _tree_digest(tree: Path) -> str:
    """A digest of every source file of `tree` (Python, and the JSON and TOML the tests read)
    but the campaign's own."""
    digest = hashlib.sha256()
    for directory, subdirectories, names in os.walk(tree):
        subdirectories[:] = sorted(
            d for d in subdirectories if not any(fnmatch.fnmatch(d, p) for p in _NOT_COPIED)
        )
        for name in sorted(names):
            if name.endswith((".py", ".json", ".toml")):
                path = Path(directory, name)
                relative = path.relative_to(tree).as_posix()
                if relative in _NOT_DIGESTED:
                    continue
                digest.update(relative.encode() + b"\0")
                digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:32]


# --- the runners at work ------------------------------------------------------------------

T = TypeVar("T")


class Pool:
    """Fork servers on copies of the tree, each run by a thread that takes the next task."""

    def __init__(self, runners: Sequence[Runner]) -> None:
        self.runners = list(runners)
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []

    def each(self, task: Callable[[Runner], T]) -> list[T]:
        """`task` on every runner (on its own tree), at once."""
        return self._run([task] * len(self.runners), pinned=True)

    def map(
        self,
        tasks: Sequence[Callable[[Runner], T]],
        done: Callable[[int, T], None] = lambda _index, _result: None,
    ) -> list[T]:
        """Every task on the first runner free; `done` in this thread as each one ends.
        The results in the order of `tasks`."""
        return self._run(tasks, done=done)

    def _run(
        self,
        tasks: Sequence[Callable[[Runner], T]],
        done: Callable[[int, T], None] = lambda _index, _result: None,
        *,
        pinned: bool = False,
    ) -> list[T]:
        results: dict[int, T] = {}
        pending = iter(range(len(tasks)))
        lock = threading.Lock()
        finished: queue.Queue[tuple[int, T | BaseException]] = queue.Queue()

        def work(runner: Runner, mine: int | None) -> None:
            while not self.stopping.is_set():
                with lock:
                    index = mine if mine is not None else next(pending, None)
                if index is None:
                    return
                try:
                    finished.put((index, tasks[index](runner)))
                except BaseException as error:  # handed to the main thread, raised there
                    finished.put((index, error))
                    return
                if mine is not None:
                    return

        workers = self.runners[: len(tasks)]
        threads = [
            threading.Thread(target=work, args=(r, i if pinned else None), daemon=True)
            for i, r in enumerate(workers)
        ]
        self.threads += threads
        for thread in threads:
            thread.start()
        while len(results) < len(tasks):
            try:
                index, result = finished.get(timeout=0.5)  # a timeout: Ctrl-C gets through
            except queue.Empty:
                continue
            if isinstance(result, BaseException):
                self.stopping.set()
                raise result
            results[index] = result
            done(index, result)
        return [results[i] for i in range(len(tasks))]

    def close(self) -> None:
        """Stop the runners (a test run still going is killed) and wait for the threads."""
        self.stopping.set()
        for runner in self.runners:
            runner.close()
        for thread in self.threads:
            thread.join(timeout=30)


def _run_mutant(
    runner: Runner,
    module: str,
    original: str,
    mutant: Mutant,
    tests: Sequence[str],
    plan: Plan,
    *,
    limit: float,
    fixed_limit: bool,
    equivalent: set[str],
) -> MutantResult:
    """`mutant` written into the runner's copy of `module`, its tests run, the copy restored.
    `plan`: which tests (none: the mutant survives, nothing is run); `limit`: the timeout of
    the whole subset (lowered to the tests' recorded time unless `fixed_limit`)."""
    if plan.tests == ():
        return MutantResult(mutant, "survived", is_listed(mutant, equivalent), no_test=True)
    path = runner.tree / module
    path.write_text(mutate_source(original, mutant))
    try:
        if plan.tests is None:
            outcome = runner.run(tests, limit)
        else:
            if not fixed_limit:
                limit = min(limit, TIMEOUT_FACTOR * plan.seconds + TIMEOUT_MARGIN)
            outcome = runner.run(plan.files, limit, select=plan.tests)
    finally:
        path.write_text(original)
    return MutantResult(
        mutant,
        {"passed": "survived", "failed": "killed", "timeout": "timeout"}[outcome],
        equivalent=outcome == "passed" and is_listed(mutant, equivalent),
    )


def _clean_run(runner: Runner, module: str, tests: Sequence[str]) -> float:
    """How long `tests` take on the unmutated tree (they must pass)."""
    started = time.monotonic()
    if runner.run(tests, 3600.0) != "passed":
        raise CampaignError(f"the tests of {module} fail without any mutant: {' '.join(tests)}")
    return time.monotonic() - started


def _limit(timeout: float | None, clean_seconds: float) -> float:
    return timeout if timeout is not None else TIMEOUT_FACTOR * clean_seconds + TIMEOUT_MARGIN


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
    coverage: ModuleCoverage | None = None,
) -> ModuleReport:
    """Each mutant of `module` against `tests`, in the copy at `tree` (restored after), one
    after the other. `clean_seconds`: how long `tests` took on the unmutated tree in this
    campaign (another module with the same subset ran them); None runs them clean first.
    `coverage`: run only the tests that run a line of each mutant (None: all of them)."""
    report = ModuleReport(module, tuple(tests), len(mutants))
    if not mutants:
        return report  # (`--matching` found none here): nothing to run, clean or not
    if clean_seconds is None:
        clean_seconds = _clean_run(runner, module, tests)
    report.clean_seconds = clean_seconds
    original = (runner.tree / module).read_text()
    lines = mutation_lines(original)
    for done, mutant in enumerate(mutants, 1):
        plan = coverage.plan(lines[mutant.index]) if coverage else Plan(None)
        report.results.append(
            _run_mutant(
                runner,
                module,
                original,
                mutant,
                tests,
                plan,
                limit=_limit(timeout, clean_seconds),
                fixed_limit=timeout is not None,
                equivalent=equivalent,
            )
        )
        progress(done, len(mutants), report.killed)
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


NO_TEST = "no test runs this line"


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
            mark = (f" [{NO_TEST}]" if res.no_test else "") + (
                " [equivalent]" if res.equivalent else ""
            )
            where = f" ({m.function})" if m.function else ""
            out.append(f"  {m.module}:{m.line}{where}: {m.description}{mark}")
            out.append(f"      {m.original}")
    return "\n".join(out)


def _write_report(folder: Path, report: ModuleReport, seed: int) -> None:
    """One module's report, whole or not at all (a reader never finds half of it)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (report.module.replace("/", "_").removesuffix(".py") + ".json")
    temporary = path.with_suffix(".tmp")
    temporary.write_text(report_json([report], seed) + "\n")
    os.replace(temporary, path)


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
                        {**asdict(res.mutant), "equivalent": res.equivalent, "no_test": res.no_test}
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
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="test runners at once, each on its own copy of the tree (default 1)",
    )
    parser.add_argument(
        "--no-coverage",
        action="store_true",
        help="run each mutant against the whole subset, not only the tests that run its lines",
    )
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    parser.add_argument(
        "--reports",
        type=Path,
        metavar="DIR",
        help="also write each module's report (as --json prints it) to DIR/<module>.json the "
        "moment its last mutant is done: a long campaign's survivors can be worked on while "
        "it runs",
    )
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
    if args.jobs < 1:
        return _usage_error(parser, "--jobs must be at least 1")

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
        first = _copy_tree(root, Path(scratch))
        # The others copied from the first: every runner sees the same tree, even if the
        # worktree is edited meanwhile.
        trees = [first] + [
            _copy_tree(first, Path(scratch), f"tree-{i}") for i in range(2, args.jobs + 1)
        ]
        digest = _tree_digest(first)  # before any run leaves a file in the copy
        pool = Pool([])
        try:
            for tree in trees:
                pool.runners.append(Runner(tree, python))
            return _run_modules(pool, root, modules, chosen, candidates, args, equivalent, digest)
        finally:
            pool.close()  # before the copies go: no thread still writes a mutant there


def _run_modules(
    pool: Pool,
    root: Path,
    modules: Sequence[str],
    chosen: dict[str, list[Mutant]],
    candidates: dict[str, int],
    args: argparse.Namespace,
    equivalent: set[str],
    digest: str,
) -> list[ModuleReport]:
    subsets = {m: tuple(args.tests) if args.tests else TEST_SUBSETS[m] for m in modules}

    def check(runner: Runner) -> None:
        for module in modules:
            runner.check_imported(module)

    pool.each(check)
    active = [m for m in modules if chosen[m]]  # (`--matching` may find none in a module)
    # Modules that share a subset (the concept modules one big module was split into) run
    # it clean once: the tree is the same unmutated tree for each of them.
    distinct = list(dict.fromkeys(subsets[m] for m in active))
    first_of = {tests: next(m for m in active if subsets[m] == tests) for tests in distinct}
    # A recording in the cache is a clean run already (it knows each test's time, and which
    # failed): only the subsets without one are run clean, minutes each for the big ones.
    groups = _groups({m: subsets[m] for m in active})
    cached = {} if args.no_coverage else _cached_recordings(root, groups, subsets, digest)
    clean = _clean_from_recordings(groups, cached, subsets)
    todo = [t for t in distinct if t not in clean]
    seconds = pool.map([functools.partial(_clean_run, module=first_of[t], tests=t) for t in todo])
    clean.update(zip(todo, seconds, strict=True))
    coverage = (
        {} if args.no_coverage else _coverage(pool, root, groups, subsets, clean, digest, cached)
    )

    tree = pool.runners[0].tree
    tasks: list[Callable[[Runner], MutantResult]] = []
    owners: list[str] = []
    for module in active:
        original = (tree / module).read_text()
        lines = mutation_lines(original)
        cover = coverage.get(module)
        for mutant in chosen[module]:
            plan = cover.plan(lines[mutant.index]) if cover else Plan(None)
            tasks.append(
                functools.partial(
                    _run_mutant,
                    module=module,
                    original=original,
                    mutant=mutant,
                    tests=subsets[module],
                    plan=plan,
                    limit=_limit(args.timeout, clean[subsets[module]]),
                    fixed_limit=args.timeout is not None,
                    equivalent=equivalent,
                )
            )
            owners.append(module)
    reports = {
        m: ModuleReport(m, subsets[m], candidates[m], clean_seconds=clean.get(subsets[m], 0.0))
        for m in modules
    }
    shows = {m: _progress_printer(m, sys.stderr) for m in active}
    done: dict[str, list[MutantResult]] = {m: [] for m in active}

    def progress(index: int, result: MutantResult) -> None:
        module = owners[index]
        done[module].append(result)
        killed = sum(r.killed for r in done[module])
        shows[module](len(done[module]), len(chosen[module]), killed)
        if args.reports is not None and len(done[module]) == len(chosen[module]):
            order = {id(m): i for i, m in enumerate(chosen[module])}
            report = reports[module]
            finished = ModuleReport(
                module, report.tests, report.candidates, clean_seconds=report.clean_seconds
            )
            finished.results = sorted(done[module], key=lambda r: order[id(r.mutant)])
            _write_report(args.reports, finished, args.seed)

    results = pool.map(tasks, progress)
    for module, result in zip(owners, results, strict=True):
        reports[module].results.append(result)  # in the order of `chosen`, as run alone
    return [reports[m] for m in modules]


def _chunks(tests: Sequence[str], count: int) -> list[list[str]]:
    """`tests` dealt into at most `count` non-empty runs (slow ones are last in a subset:
    dealt in turn, each run gets some)."""
    return [chunk for chunk in (list(tests[i::count]) for i in range(count)) if chunk]


def _cached_recordings(
    root: Path, groups: Sequence[Sequence[str]], subsets: dict[str, tuple[str, ...]], digest: str
) -> dict[int, Recording]:
    """The recordings the cache holds, by index in `groups` (read once: they serve both the
    clean run's times and the coverage)."""
    cache = CoverageCache(root, digest)
    found: dict[int, Recording] = {}
    for g, group in enumerate(groups):
        recording = cache.find(_union(subsets[m] for m in group), group)
        if recording is not None:
            found[g] = recording
    return found


def _clean_from_recordings(
    groups: Sequence[Sequence[str]],
    recordings: Mapping[int, Recording],
    subsets: dict[str, tuple[str, ...]],
) -> dict[tuple[str, ...], float]:
    """Each subset's clean run as its group's recording saw it: the seconds of its tests
    (while traced, so more than a plain run takes: a generous timeout). Raises as a clean run
    does when one of its tests failed."""
    out: dict[tuple[str, ...], float] = {}
    for g, found in recordings.items():
        for module in groups[g]:
            tests = subsets[module]
            mine = [i for i, t in enumerate(found.tests) if any(_covers(e, t) for e in tests)]
            if found.failed & set(mine):
                raise CampaignError(
                    f"the tests of {module} fail without any mutant: {' '.join(tests)}"
                )
            out[tests] = sum(found.seconds[i] for i in mine)
    return out


def _coverage(
    pool: Pool,
    root: Path,
    groups: Sequence[Sequence[str]],
    subsets: dict[str, tuple[str, ...]],
    clean: dict[tuple[str, ...], float],
    digest: str,
    cached: Mapping[int, Recording],
) -> dict[str, ModuleCoverage]:
    """For each module, which of its tests run which of its lines: recorded once for every
    group of modules whose subsets share tests (dealt to all the runners), unless `cached`
    (`_cached_recordings`) holds the group's recording already."""
    cache = CoverageCache(root, digest)
    recordings: dict[int, Recording] = dict(cached)
    tasks: list[Callable[[Runner], Recording]] = []
    owners: list[int] = []
    for g, group in enumerate(groups):
        tests = _union(subsets[m] for m in group)
        if g in recordings:
            print(f"coverage of {', '.join(group)}: from the cache", file=sys.stderr)
            continue
        # Tracing slows the tests down: a margin far above the per-mutant one.
        limit = RECORD_FACTOR * sum(clean[s] for s in dict.fromkeys(subsets[m] for m in group))
        for chunk in _chunks(tests, len(pool.runners)):
            tasks.append(
                functools.partial(
                    Runner.record, tests=chunk, files=group, timeout=limit + RECORD_MARGIN
                )
            )
            owners.append(g)
    if tasks:
        print(
            f"coverage: recording which test runs which line, {len(tasks)} runs...", file=sys.stderr
        )
        started = time.monotonic()
        parts = pool.map(tasks)
        for g in dict.fromkeys(owners):
            tests = _union(subsets[m] for m in groups[g])
            recordings[g] = Recording.merge(
                [p for p, o in zip(parts, owners, strict=True) if o == g]
            )
            cache.store(tests, groups[g], recordings[g])
        print(f"coverage: recorded in {time.monotonic() - started:.0f} s", file=sys.stderr)
    coverage = {}
    for g, group in enumerate(groups):
        recording = recordings[g]
        if recording.failed:
            names = ", ".join(recording.tests[t] for t in sorted(recording.failed))
            print(
                f"coverage: failed while recorded, so run for every mutant: {names}",
                file=sys.stderr,
            )
        for module in group:
            coverage[module] = ModuleCoverage(recording, module, subsets[module])
    return coverage


if __name__ == "__main__":
    # A campaign stopped by `kill` cleans up like one stopped by Ctrl-C (only as a program:
    # `main` called from a test must not take over its process's SIGTERM).
    signal.signal(signal.SIGTERM, _interrupt)
    sys.exit(main())
