"""The bounded campaign of `make test`: every mode, on honest peers, must find nothing.

Every fault kind (the default schedules), mutated datagrams with the puppet's validly
signed ops out of protocol order and at every Lamport time up to the schema's 2^48, and
every hostile adversary. Nothing is exempt as known.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from client.cli import main
from tools.fuzz.adversaries import ADVERSARIES


def test_a_bounded_campaign_of_every_mode_finds_nothing_on_honest_peers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["fuzz", "all", "--cases", "3", "--datagrams", "4000", "--no-baseline"]
    code = main([*argv, "--out", str(tmp_path), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert [f["title"] for f in report["findings"]] == []
    assert report["known"] == []
    assert code == 0
    assert report["cases"] == {"link": 3, "mutate": 2, "hostile": len(ADVERSARIES)}
    mutate = report["mutate"]
    assert mutate["datagrams"] > 3500
    assert mutate["crashes"] == 0
    assert mutate["hangs"] == 0
    assert mutate["divergences"] == 0
    # The target's gate saw the whole range of bad input, each counted by its reason.
    for reason in ("oversize", "malformed", "schema", "wrong_table", "bad_signature"):
        assert mutate["target_drops"][reason] > 0, reason
    # The puppet's ops out of protocol order were signed and sent (and refused or expelled).
    assert mutate["by_mutator"]["order"] > 0
    for row in report["hostile"]:
        assert row["detected"] or row["contained"], row


def test_a_dealer_whose_reveal_lies_is_named_a_cheater_by_every_honest_peer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["fuzz", "hostile", "--adversaries", "reveal_cheat", "--out", str(tmp_path), "--json"]
    assert main(argv) == 0
    (row,) = json.loads(capsys.readouterr().out)["hostile"]
    assert row["detected"]
    assert row["contained"]
    assert row["detect_seconds"] is not None


def test_mutating_a_peer_on_a_loopback_udp_socket_reads_its_drop_counters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["fuzz", "mutate", "--target", "local", "--datagrams", "600", "--json", "--no-baseline"]
    assert main([*argv, "--out", str(tmp_path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["target"].startswith("127.0.0.1:")
    assert report["watchdog"] == "heartbeat probes"
    assert report["problems"] == []
    drops = report["target_drops"]
    # UDP may lose some on a busy host (a full socket buffer), even on loopback.
    assert 100 < drops["received"] <= 600 + 400  # the datagrams and the watchdog's probes
    assert drops["malformed"] > 0
    assert drops["schema"] > 0
    # Growth is watched in the target's own process: memory and the peer's queues.
    watch = report["watch"]
    assert watch["rss_max_mb"] >= watch["rss_start_mb"] > 0
    assert {"pending", "awaiting_key", "requests_in_flight"} <= set(watch["queues_max"])
