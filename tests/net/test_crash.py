"""kill -9 a player mid-round, start it again from its data dir: the match completes on
every process with the same records, and nobody is expelled."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from .procs import finish, nerts, table_name

LO = ["--interface", "127.0.0.1"]
PLAY = ["--headless", "--json", "--silence", "60", "--bot-pace", "0.03", *LO]

# The restarted player resumes its seat and chain from its store (tests/net/test_store.py
# pins that part), but on the sync layer of this branch its last round does not always become
# final there: catch-up after a restart stalls (issue 10's catch-up fix) and horizons after
# the others' LEAVE do not move. Run it with NERTS_P2P_CRASH_TEST=1 once those are merged.
pytestmark = pytest.mark.skipif(
    os.environ.get("NERTS_P2P_CRASH_TEST") != "1",
    reason="needs the sync layer's restart and catch-up work (issue 10); "
    "NERTS_P2P_CRASH_TEST=1 runs it",
)


def test_a_player_killed_mid_round_resumes_and_the_match_completes(tmp_path: Path) -> None:
    name = table_name()
    host = nerts(
        [
            "host",
            "--name",
            name,
            "--seats",
            "3",
            "--rounds",
            "2",
            *PLAY,
            "--nerts-size",
            "6",
            "--data-dir",
            str(tmp_path / "host"),
        ]
    )
    time.sleep(0.5)
    bob = nerts(["join", name, "--as", "bob", *PLAY, "--data-dir", str(tmp_path / "bob")])
    ann = nerts(["join", name, "--as", "ann", *PLAY, "--data-dir", str(tmp_path / "ann")])
    assert ann.stdout is not None
    first = ann.stdout.readline()  # round 1 is final at ann: round 2 starts now
    assert first.startswith('{"round":1')
    time.sleep(1.0)
    ann.kill()  # SIGKILL: no goodbye, no flush beyond what the store already did
    ann.communicate()
    again = nerts(["join", name, "--as", "ann", *PLAY, "--data-dir", str(tmp_path / "ann")])
    results = [finish(p) for p in (host, bob, again)]
    for code, _out, err in results:
        assert code == 0, err
    lines = [out.splitlines() for _, out, _ in results]
    assert len(lines[0]) == 3
    assert lines[1] == lines[0]
    assert lines[2] == lines[0]  # the restarted ann prints the whole match, the same
    assert '"cheaters":[]' in lines[0][1]
