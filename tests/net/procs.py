"""Running `nerts-p2p` processes for the loopback and namespace tests."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Sequence

#: Long enough for a short round on a loaded two-core machine; a test that needs longer is
#: broken, not slow.
PROCESS_TIMEOUT = 240.0
FAST = ["--bot-pace", "0.03", "--nerts-size", "5"]
FAST_JOIN = ["--bot-pace", "0.03"]
PEER_COMMANDS = ("host", "join", "spectate")


def bot_table(name: str, rounds: int = 1) -> list[str]:
    """`host` options for a two-seat table whose other seat is the host's own bot: a match
    that needs no other process."""
    return ["host", "--name", name, "--seats", "2", "--bots", "1", "--rounds", str(rounds)]


def table_name(prefix: str = "t") -> str:
    """A table name no other test announces (tests may run side by side)."""
    return f"{prefix}{uuid.uuid4().hex[:8]}"


def nerts(args: Sequence[str], *, netns: str | None = None) -> subprocess.Popen[str]:
    """A `nerts-p2p` process. Peers get a data dir of their own unless the test gives one:
    two peers sharing one would share a key (the CLI refuses it), and tests never write to
    the user's real data directory."""
    args = list(args)
    keeps_files = args[:1] and (
        args[0] in PEER_COMMANDS or (args[0] == "play" and "--bots" in args)
    )
    if keeps_files and "--data-dir" not in args:
        args += ["--data-dir", tempfile.mkdtemp(prefix="nerts-test-")]
    command = [sys.executable, "-m", "client.cli", *args]
    if netns is not None:
        command = ["ip", "netns", "exec", netns, *command]
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def finish(proc: subprocess.Popen[str], timeout: float = PROCESS_TIMEOUT) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"process did not finish: {proc.args!r}\n{out}\n{err}") from None
    return proc.returncode, out, err
