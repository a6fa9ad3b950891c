"""The engine as it was before the bots' fast move search, for side-by-side measures.

`bench engine` compares 4-seat rounds per second of this code with the commit before that
work (`BASELINE_COMMIT`). The old `nerts_p2p` package is taken from git (`git archive`,
which leaves the repository and its worktrees untouched) into a temporary directory and run
in a child process, so the two versions never share a module. The child measures on
request, one repeat at a time, so that old and new repeats interleave and host load falls
on both alike.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BASELINE_COMMIT = "a82ec0c"
ROOT = Path(__file__).resolve().parent.parent

#: Run in the child: reads a bot level name per line, answers 4-seat rounds per second.
_CHILD = """
import json, sys, time
from nerts_p2p.game.bots import LEVELS
from nerts_p2p.game.deck import seat_seed
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.simulate import simulate_round

rules = Rules(seats=4)
print(json.dumps({"ready": __import__("nerts_p2p").__file__}), flush=True)
for line in sys.stdin:
    level, seed = line.split()
    start = time.perf_counter()
    for r in range(3):
        seeds = [seat_seed(int(seed), r + 2, s) for s in range(4)]
        simulate_round(rules, seeds, [LEVELS[level]] * 4, match_seed=int(seed))
    print(json.dumps({"rate": 3 / (time.perf_counter() - start)}), flush=True)
"""


class Baseline:
    """The old engine in a child process."""

    def __init__(self, child: subprocess.Popen[str]) -> None:
        self.child = child

    def rounds_per_second(self, level: str, seed: int) -> float:
        assert self.child.stdin is not None
        assert self.child.stdout is not None
        self.child.stdin.write(f"{level} {seed}\n")
        self.child.stdin.flush()
        return float(json.loads(self.child.stdout.readline())["rate"])


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
def baseline(commit: str = BASELINE_COMMIT) -> Iterator[Baseline | None]:
    """The old engine, or None where the commit is not at hand (a shallow clone)."""
    with tempfile.TemporaryDirectory(prefix="nerts-baseline-") as tmp:
        if not _extract(commit, Path(tmp)):
            yield None
            return
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD],
            cwd=tmp,
            env={"PYTHONPATH": tmp, "PATH": "/usr/bin:/bin"},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert child.stdout is not None
            ready = json.loads(child.stdout.readline())["ready"]
            # The child must run the old package, not this checkout's.
            assert ready.startswith(tmp), ready
            yield Baseline(child)
        finally:
            if child.stdin is not None:
                child.stdin.close()
            child.wait(timeout=30)
