"""Planted bugs prove the fuzzer works: each deliberately broken peer is reported, with a
shrunk reproducer whose one-line command replays it (exit 1: the problem is still there)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from client.cli import main
from tools.fuzz.schedule import ScheduleShape, generate


def _campaign(argv: list[str], out: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    code = main(["fuzz", *argv, "--out", str(out), "--json", "--no-baseline"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1, report
    return report  # type: ignore[no-any-return]


def _replays(finding: dict[str, object], capsys: pytest.CaptureFixture[str]) -> list[str]:
    command = str(finding["replay"])
    assert command.startswith("nerts-p2p fuzz replay ")
    path = command.split(" ", 3)[3]
    assert Path(path).exists()
    assert Path(path).with_suffix(".history.jsonl").read_text().strip()
    assert main(["fuzz", "replay", path, "--json"]) == 1
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["reproduced"]
    return sorted({p["kind"] for p in replayed["problems"]})


def test_a_peer_that_accepts_bad_signatures_is_reported_with_the_datagram_that_got_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _campaign(
        ["mutate", "--planted", "bad-signature", "--datagrams", "400", "--no-order-attacks"],
        tmp_path,
        capsys,
    )
    findings = report["findings"]
    assert isinstance(findings, list)
    found = [f for f in findings if "bad_signature_accepted" in f["kinds"]]
    assert found
    injections = found[0]["case"]["injections"]
    assert 1 <= len(injections) < 400  # shrunk from the campaign's 400
    assert "bad_signature_accepted" in _replays(found[0], capsys)


def test_a_peer_that_folds_in_arrival_order_is_reported_with_a_shrunk_schedule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ops of different authors commute unless they race for one foundation place; a `lag`
    fault (one peer's link to others slow, in order) makes the bots race, and the peer that
    folds in arrival order gives a race to another winner than every other peer."""
    argv = ["link", "--planted", "arrival-order", "--players", "4", "--level", "expert"]
    argv += ["--faults", "lag", "--faults-per-case", "2", "--seed", "8", "--cases", "1"]
    report = _campaign(argv, tmp_path, capsys)
    findings = report["findings"]
    assert isinstance(findings, list)
    assert "race_winners" in findings[0]["kinds"]
    assert {"divergence", "disagreement"} & set(findings[0]["kinds"])
    faults = findings[0]["case"]["schedule"]["faults"]
    assert 1 <= len(faults) <= 2
    assert {f["kind"] for f in faults} == {"lag"}
    assert "race_winners" in _replays(findings[0], capsys)


def test_a_peer_that_reuses_a_seq_after_restart_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A seed whose one fault restarts the planted peer (peer 1).
    shape = ScheduleShape(peers=3, count=1, kinds=("restart",))
    seed = next(s for s in range(100) if generate(s, shape).faults[0].peers == (1,))
    argv = ["link", "--planted", "seq-reuse", "--faults", "restart", "--faults-per-case", "1"]
    report = _campaign([*argv, "--seed", str(seed), "--cases", "1"], tmp_path, capsys)
    findings = report["findings"]
    assert isinstance(findings, list)
    assert "seq_reuse" in findings[0]["kinds"]
    assert [f["kind"] for f in findings[0]["case"]["schedule"]["faults"]] == ["restart"]
    assert "seq_reuse" in _replays(findings[0], capsys)


def test_an_honest_restart_from_the_store_is_not_a_finding(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    shape = ScheduleShape(peers=3, count=1, kinds=("restart",))
    seed = next(s for s in range(100) if generate(s, shape).faults[0].peers == (1,))
    argv = ["fuzz", "link", "--faults", "restart", "--faults-per-case", "1", "--cases", "1"]
    assert main([*argv, "--seed", str(seed), "--out", str(tmp_path), "--no-baseline"]) == 0
    assert "0 finding(s)" in capsys.readouterr().out


def test_a_round_that_never_ends_when_a_player_vanishes_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Main ends such a round by departure (DEPART, kind 9), so the honest `kill` is clean;
    peers that never vote a silent player out (`never-departs`) are a liveness finding."""
    argv = ["link", "--faults", "kill", "--faults-per-case", "1", "--cases", "1"]
    honest = main(["fuzz", *argv, "--out", str(tmp_path / "honest"), "--no-baseline"])
    assert "0 finding(s)" in capsys.readouterr().out
    assert honest == 0
    report = _campaign([*argv, "--planted", "never-departs"], tmp_path / "planted", capsys)
    findings = report["findings"]
    assert isinstance(findings, list)
    assert "liveness" in findings[0]["kinds"]
    assert "liveness" in _replays(findings[0], capsys)
