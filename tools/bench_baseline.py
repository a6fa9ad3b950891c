"""Whole simulated rounds measured in child processes, this checkout's engine and an old one.

`bench engine` compares 4-seat rounds per second of this code with the commit before the
bots' fast move search (`BASELINE_COMMIT`). The old `nerts_p2p` package is taken from git
(`git archive`, which leaves the repository and its worktrees untouched) into a temporary
directory. Both versions run the same measuring script, each in a fresh child process of
its own (so they never share a module, and neither carries the other's heap or the parent's
warm-up), and measure on request, one repeat at a time, so that old and new repeats
interleave and host load falls on both alike.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

BASELINE_COMMIT = "a82ec0c"
ROOT = Path(__file__).resolve().parent.parent

#: Rounds per measured repeat, in both versions: the same seeds, rules and bot levels on
#: both sides. A round takes a few milliseconds, so a repeat must be long enough for host
#: noise (another process taking the core for a while) to average out within it.
ROUNDS = 40

#: A repeat is measured in turns of this many rounds, one version then the other, so that
#: a burst of host load falls on both versions' share of the repeat rather than on one.
CHUNK = 5

#: Run in each child: reads a bot level, a seed and a span of round numbers per line,
#: answers the process CPU seconds those 4-seat rounds took. Dealing, every decision, every
#: move and the scoring of each round are inside the timed span (all of `simulate_round`).
_CHILD = """
import json, sys, time
from nerts_p2p.game.bots import LEVELS
from nerts_p2p.game.deck import seat_seed
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.simulate import simulate_round

rules = Rules(seats=4)
print(json.dumps({"ready": __import__("nerts_p2p").__file__}), flush=True)
for line in sys.stdin:
    level, seed, first, count = line.split()
    start = time.process_time()
    for r in range(int(first), int(first) + int(count)):
        seeds = [seat_seed(int(seed), r + 2, s) for s in range(4)]
        simulate_round(rules, seeds, [LEVELS[level]] * 4, match_seed=int(seed))
    print(json.dumps({"cpu": time.process_time() - start}), flush=True)
"""


class EngineChild:
    """One version of the engine in a child process."""

    def __init__(self, child: subprocess.Popen[str]) -> None:
        self.child = child

    def cpu_seconds(self, level: str, seed: int, first: int, count: int) -> float:
        """CPU seconds of `count` 4-seat rounds of `level` bots, rounds `first`... of the
        match `seed`."""
        assert self.child.stdin is not None
        assert self.child.stdout is not None
        self.child.stdin.write(f"{level} {seed} {first} {count}\n")
        self.child.stdin.flush()
        return float(json.loads(self.child.stdout.readline())["cpu"])


def rounds_per_second(
    engines: Sequence[EngineChild], level: str, seed: int, rounds: int = ROUNDS
) -> list[float]:
    """One repeat: each engine's 4-seat rounds per CPU second over the same `rounds` seeded
    rounds, played in turns of `CHUNK` rounds, engine after engine."""
    cpu = [0.0] * len(engines)
    for first in range(0, rounds, CHUNK):
        count = min(CHUNK, rounds - first)
        for i, engine in enumerate(engines):
            cpu[i] += engine.cpu_seconds(level, seed, first, count)
    return [rounds / seconds for seconds in cpu]


def _extract(commit: str, into: Path) -> bool:
    """The commit's `nerts_p2p` package under `into`; False if git cannot give it."""
    try:
        tar = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", commit, "nerts_p2p"],
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        archive.extractall(into, filter="data")
    return True


@contextmanager
def engine_child(source: Path) -> Iterator[EngineChild]:
    """The `nerts_p2p` package found under `source`, running in a child process."""
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD],
        cwd=source,
        env={"PYTHONPATH": str(source), "PATH": "/usr/bin:/bin"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        ready = json.loads(child.stdout.readline())["ready"]
        # The child must run the package under `source`, not an installed one.
        assert Path(ready).resolve().is_relative_to(source.resolve()), ready
        yield EngineChild(child)
    finally:
        for pipe in (child.stdin, child.stdout):
            if pipe is not None:
                pipe.close()
        child.wait(timeout=30)


@contextmanager
def current() -> Iterator[EngineChild]:
    """This checkout's engine in a child process."""
    with engine_child(ROOT) as child:
        yield child


@contextmanager
def baseline(commit: str = BASELINE_COMMIT) -> Iterator[EngineChild | None]:
    """The old engine, or None where the commit is not at hand (a shallow clone)."""
    with tempfile.TemporaryDirectory(prefix="nerts-baseline-") as tmp:
        if not _extract(commit, Path(tmp)):
            yield None
            return
        with engine_child(Path(tmp)) as child:
            yield child
