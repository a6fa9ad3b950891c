"""A LAN of three hosts in network namespaces (tools/lan.py): discovery across hosts, a
match, a spectator joining mid-round, and one host's cable pulled and put back mid-round."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tools.lan import Lan, LanHost, lan_available

from .procs import PROCESS_TIMEOUT, finish, table_name

WHY_NOT = lan_available()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")
ROOT = Path(__file__).resolve().parents[2]


#: A `nerts-p2p` command that imports everything first, then waits for a line on stdin
#: before it runs: at a load of 12 the imports alone take seconds.
PRIMED = (
    "import sys, client.cli, client.netplay; sys.stdin.readline(); "
    "sys.exit(client.cli.main(sys.argv[1:]))"
)


def _on(
    host: LanHost, args: list[str], data: Path, *, primed: bool = False, silence: int = 60
) -> subprocess.Popen[str]:
    program = ["-c", PRIMED] if primed else ["-m", "client.cli"]
    argv = [sys.executable, *program, *args, "--interface", host.address]
    if args[0] != "list":
        argv += ["--data-dir", str(data), "--silence", str(silence), "--json"]
    return subprocess.Popen(
        host.command(argv),
        stdin=subprocess.PIPE if primed else None,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )


FAST = ["--bot-pace", "0.03"]


def _host(on: LanHost, name: str, data: Path, *rules: str) -> subprocess.Popen[str]:
    """A headless 3-seat host of a 2-round match on `on`, given a moment to announce."""
    argv = ["host", "--name", name, "--seats", "3", "--rounds", "2", "--headless", *FAST]
    host = _on(on, [*argv, *rules], data)
    time.sleep(0.5)
    return host


def _go(process: subprocess.Popen[str]) -> None:
    assert process.stdin is not None
    process.stdin.write("go\n")
    process.stdin.flush()  # left open: `communicate` closes it


def test_three_hosts_play_with_a_late_spectator_and_a_pulled_cable(tmp_path: Path) -> None:
    name = table_name("lan")
    fast = FAST
    with Lan() as lan:
        h1, h2, h3 = lan.hosts
        host = _host(h1, name, tmp_path / "h1", "--nerts-size", "6")
        # Discovery across hosts: h3 sees the table h1 announces.
        code, out, err = finish(_on(h3, ["list", "--timeout", "4"], tmp_path), timeout=60)
        assert code == 0, err
        assert name in out
        ann = _on(h2, ["join", name, "--as", "ann", "--headless", *fast], tmp_path / "h2")
        bob = _on(h3, ["join", name, "--as", "bob", "--headless", *fast], tmp_path / "h3")
        watcher = _on(h2, ["spectate", name, "--as", "late"], tmp_path / "h2-watch", primed=True)
        assert host.stdout is not None
        first = host.stdout.readline()
        assert first.startswith('{"round":1'), host.stderr.read() if host.stderr else ""
        # Round 2 is being played. The late spectator looks for the table now, and Bob's
        # cable is pulled now: round 2 cannot end without him, so the table is still
        # announced while the spectator looks. (Started only now, a spectator on a loaded
        # host spent seconds importing, the match ended meanwhile and its table was
        # withdrawn: "no table found".)
        _go(watcher)
        lan.unplug(h3)
        time.sleep(3.0)
        lan.plug(h3)
        results = [finish(p, PROCESS_TIMEOUT) for p in (ann, bob, watcher)]
        code, rest, err = finish(host, PROCESS_TIMEOUT)
        assert code == 0, err
        host_lines = [first.strip(), *rest.splitlines()]
        assert len(host_lines) == 3
        for who, (code, out, err) in zip(
            ("ann", "bob", "the late spectator"), results, strict=True
        ):
            assert code == 0, f"{who}: {err}"
            assert out.splitlines() == host_lines, who
        # Three seconds without a cable cost Bob nothing: nobody was voted out of a round
        # (they once voted him out the moment he was back, owing what he had missed).
        for line in host_lines[:2]:
            assert '"departed":[]' in line, line


def test_a_player_whose_cable_stays_out_is_told_to_look_at_his_own_network(
    tmp_path: Path,
) -> None:
    """Bob's cable is pulled for good mid-match. Bob hears nobody: he is told, in words,
    that the others have all gone or his machine is off the network (not that the host or
    Ann went silent, which is what he used to read: whoever fell quiet first was named).
    The two others vote him out and finish the match."""
    name = table_name("lan")
    fast = FAST
    with Lan() as lan:
        h1, h2, h3 = lan.hosts
        host = _host(h1, name, tmp_path / "h1")
        ann = _on(h2, ["join", name, "--as", "ann", "--headless", *fast], tmp_path / "h2")
        bob = _on(
            h3,
            ["join", name, "--as", "bob", "--headless", *fast],
            tmp_path / "h3",
            silence=4,
        )
        assert host.stdout is not None
        first = host.stdout.readline()
        assert first.startswith('{"round":1'), host.stderr.read() if host.stderr else ""
        lan.unplug(h3)  # round 2 is being played
        code, _, err = finish(bob, PROCESS_TIMEOUT)
        assert code == 1
        assert "or this machine is off the network" in err, err
        assert "went silent" not in err, err
        code, rest, err = finish(host, PROCESS_TIMEOUT)
        assert code == 0, err
        host_lines = [first.strip(), *rest.splitlines()]
        assert len(host_lines) == 3  # two rounds, then the match
        code, out, err = finish(ann, PROCESS_TIMEOUT)
        assert code == 0, f"ann: {err}"
        assert out.splitlines() == host_lines
