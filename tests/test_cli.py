"""The `nerts-p2p` command as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from client.cli import _rules_from, build_parser, main
from nerts_p2p.game.deck import seat_seed
from nerts_p2p.game.engine import omniscient_start
from nerts_p2p.game.position import position_text
from nerts_p2p.game.rules import Rules

ROOT = Path(__file__).resolve().parent.parent


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_simulate_json_has_one_object_per_round_and_a_match_summary(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _run(
        capsys, "simulate", "--players", "3", "--rounds", "2", "--seed", "5", "--json"
    )
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    rounds, summary = records[:-1], records[-1]
    assert [r["round"] for r in rounds] == [1, 2]
    for r in rounds:
        assert r["ended_by"] in ("nerts", "stalemate")
        assert (r["called_by"] is None) == (r["ended_by"] == "stalemate")
        assert r["moves"] > 0
        assert r["rejected"] >= 0
        assert len(r["state_hash"]) == 32
        assert [s["seat"] for s in r["seats"]] == [0, 1, 2]
        for s in r["seats"]:
            assert s["score"] == s["foundation_cards"] - 2 * s["nerts_left"]
    totals = [sum(r["seats"][i]["score"] for r in rounds) for i in range(3)]
    assert summary["totals"] == totals == [s["total"] for s in rounds[-1]["seats"]]
    assert "match_winner" in summary


def test_simulate_is_byte_for_byte_repeatable(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("simulate", "--players", "4", "--rounds", "2", "--draw", "1", "--json", "--seed")
    first = _run(capsys, *args, "9")[1]
    second = _run(capsys, *args, "9")[1]
    other_seed = _run(capsys, *args, "11")[1]
    assert first == second
    assert first != other_seed


def test_simulate_full_match_reaches_the_target(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(
        capsys, "simulate", "--players", "2", "--seed", "1", "--target", "30", "--json"
    )
    summary = json.loads(out.splitlines()[-1])
    assert summary["finished"] is True
    assert summary["totals"][summary["match_winner"]] == max(summary["totals"]) >= 30


def test_simulate_rejects_bad_options_in_plain_words(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "simulate", "--players", "9")
    assert code == 2
    assert "seats must be 2..8" in err
    code, _, err = _run(capsys, "simulate", "--players", "2", "--bots", "wizard")
    assert code == 2
    assert "unknown bot level 'wizard'" in err


def test_position_lists_legal_moves_and_applies_one(capsys: pytest.CaptureFixture[str]) -> None:
    rules = Rules(seats=2)
    start = position_text(omniscient_start(rules, [seat_seed(1, 1, s) for s in range(2)]))
    code, out, _ = _run(capsys, "position", start)
    assert code == 0
    assert out.startswith("seat 0: ")
    assert "0 turn" in out
    assert "1 turn" in out
    # Nothing of seat 0's fits anywhere: it may declare itself stuck.
    stuck_able = (
        "nerts1 seats=2 play/0/0 - ?12:KS/5D,9C,QH,QD.JS/?34/-/- ?12:KH/5S,9D,QC,JD/?35/-/-"
    )
    code, out, _ = _run(capsys, "position", stuck_able, "0 stuck")
    assert code == 0
    assert out.strip().endswith("/-")
    assert "/s " in out


def test_position_explains_a_rejected_move(capsys: pytest.CaptureFixture[str]) -> None:
    start = position_text(omniscient_start(Rules(seats=2), [seat_seed(1, 1, s) for s in range(2)]))
    code, out, _ = _run(capsys, "position", start, "0 nerts")
    assert code == 1
    assert "rejected (nerts_not_empty)" in out
    assert "13 card(s) left" in out


def test_position_reports_unreadable_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "position", "nerts1 nonsense")
    assert code == 2
    assert "a position starts with 'nerts1'" in err


def test_practice_without_a_terminal_watches_a_round(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "play", "--practice", "--seed", "2", "--watch")
    assert code == 0
    assert "Round over after" in out
    assert out.count("seat ") >= 3


def test_bench_engine_prints_every_measure(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "bench", "engine", "--repeats", "1", "--json")
    assert code == 0
    results = json.loads(out)
    measures = {
        "moves_applied_per_s",
        "legal_move_generations_per_s",
        "rounds_4_seat_casual_per_s",
        "rounds_4_seat_expert_per_s",
    }
    # Side by side with the engine before the bots' move search (git has it in a clone).
    before = {
        f"{what}_{level}_{suffix}"
        for level in ("casual", "expert")
        for what, suffix in (("rounds_4_seat", "per_s_a82ec0c"), ("speedup_4_seat", "vs_a82ec0c"))
    }
    assert set(results) == measures | before
    assert all(r["median"] > 0 for r in results.values())


def test_bench_sync_reports_the_gate_the_wire_the_fold_and_the_heal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _run(capsys, "bench", "sync", "--repeats", "1", "--json")
    assert code == 0
    results = json.loads(out)
    assert {
        "raw_ed25519_verify_per_s",
        "decode_gate_cost_over_bare_verify",
        "full_receive_cost_over_bare_verify",
        "bytes_per_move_datagram",
        "ops_folded_per_s",
        "heal_in_heartbeat_intervals",
    } <= set(results)
    # A move with its signature, header and deps fits well inside one datagram.
    assert 100 < results["bytes_per_move_datagram"]["max"] < 1200


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["simulate", "--rounds", "0"], "argument --rounds: must be 1..1000, got 0"),
        (["simulate", "--rounds", "-1"], "argument --rounds: must be 1..1000, got -1"),
        (["simulate", "--rounds", "two"], "argument --rounds: must be a whole number, got 'two'"),
        (["simulate", "--players", "1"], "argument --players: must be 2..16, got 1"),
        (["simulate", "--players", "3", "--partnerships"], "even number of players, got 3"),
        (["play", "--bots", "2", "--partnerships", "--headless"], "even number of players, got 3"),
        (["play", "--bots", "0", "--headless"], "--bots must be at least 1"),
        (["play", "--watch", "--rounds", "2"], "--rounds: only with --bots N"),
        (["play", "--watch", "--json", "--data-dir", "d"], "--json, --data-dir: only with --bots"),
        (["play", "--watch", "--bot-pace", "0.1"], "--bot-pace: only with --bots N"),
        (["play", "--bots", "1", "--headless", "--seed", "3"], "--seed: only for the practice"),
        (["play", "--bots", "1", "--headless", "--watch"], "--watch/--interactive: only for"),
        (["simulate", "--seed", "1.5"], "argument --seed: must be a whole number"),
        (["simulate", "--draw", "2"], "argument --draw: invalid choice"),
        (["simulate", "--target", "0"], "target must be 1..10000, got 0"),
        (["simulate", "--nerts-size", "many"], "argument --nerts-size: must be a whole number"),
        (["simulate", "--match-rounds", "-3"], "match_rounds must be 0 (no limit) or 1..1000"),
        (["simulate", "--match-spread", "x"], "argument --match-spread: must be a whole number"),
        (["bench", "engine", "--repeats", "0"], "argument --repeats: must be 1..1000, got 0"),
        (["bench", "bots", "--rounds", "0"], "argument --rounds: must be 1..100000, got 0"),
        (["play", "--players", "0", "--watch"], "argument --players: must be 2..16, got 0"),
        (["play", "--level", "wizard", "--watch"], "unknown bot level 'wizard'"),
        (["position", "nerts1 - play/0/0 - a b"], "the rules say 4 seats"),
        (["position", "nerts1 seats=2 play/0/0 - ?12:4D/TD,3C,JH,2S/?35/-/- x", "0 fly"], "seat 1"),
        (["host", "--name", "x" * 33, "--headless"], "--name: a name is at most 32 bytes"),
        (["host", "--name", "é" * 17, "--headless"], "of UTF-8: 'ééééééééééééééééé' is 34"),
        (["host", "--name", "  ", "--headless"], "--name: a name must not be empty"),
        (["host", "--name", "evil\x1b[2J", "--headless"], "a name is printable text"),
        (["join", "t", "--as", "y" * 40, "--headless"], "--as: a name is at most 32 bytes"),
        (["host", "--name", "t", "--headless", "--silence", "0"], "--silence must be a positive"),
        (["join", "t", "--headless", "--timeout", "0"], "--timeout must be a positive number"),
        (["spectate", "t", "--timeout", "-1"], "--timeout must be a positive number"),
        (["host", "--name", "t", "--headless", "--bot-pace", "nan"], "positive number, got nan"),
        (["play", "--bots", "1", "--headless", "--bot-pace", "inf"], "positive number, got inf"),
        (["join", "t", "--headless", "--silence", "inf"], "--silence must be a positive number"),
        (["list", "--timeout", "nan"], "--timeout must be a positive number of seconds, got nan"),
        (["play", "--bots", "1", "--players", "3", "--headless"], "--players 3 and --bots 1"),
        (["play", "--practice", "--bots", "1", "--headless"], "give one of them"),
        (["join", " ", "--headless"], "the table's name must not be empty"),
        (["spectate", ""], "the table's name must not be empty"),
        (["join", "x" * 33, "--headless"], "no table has this name (a name is at most 32"),
        (["spectate", "é" * 17], "'ééééééééééééééééé' is 34); `nerts-p2p list` shows them"),
        (["host", "--name", "t", "--headless", "--silence", "0.5"], "at least 1 second"),
        (["host", "--name", "t", "--headless", "--data-dir", " "], "--data-dir must name a dir"),
    ],
)
def test_bad_counts_and_options_are_usage_errors_in_plain_words(
    capsys: pytest.CaptureFixture[str], argv: list[str], words: str
) -> None:
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse ends usage errors itself
        code = int(str(exit_.code))
    _, err = capsys.readouterr()
    assert code == 2
    assert words in err
    assert "Traceback" not in err


START = "nerts1 seats=2 play/0/0 - ?12:4D/TD,3C,JH,2S/?35/-/- ?12:8C/5H,AH,8S,2D/?35/-/-"


def _cli_writing_to(stdout: int, argv: list[str]) -> subprocess.CompletedProcess[bytes]:
    """`nerts-p2p ARGV` in a process of its own, its output into `stdout`."""
    return subprocess.run(
        [sys.executable, "-m", "client.cli", *argv],
        stdout=stdout,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "--rounds", "3", "--json"],
        ["simulate", "--rounds", "2"],
        ["position", START],
        ["position", START, "0 turn +7C+8H+5C"],
        ["bench", "bots", "--rounds", "1", "--json"],
        ["play", "--watch", "--seed", "1", "--players", "2"],
        ["--help"],
    ],
)
def test_a_closed_pipe_ends_the_command_quietly(argv: list[str]) -> None:
    # The reader is gone before the command writes a byte (like `| head -1` that already
    # has its line): every write fails with EPIPE.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = _cli_writing_to(write_end, argv)
    finally:
        os.close(write_end)
    assert done.stderr.decode() == ""
    assert done.returncode == 0


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
@pytest.mark.parametrize(
    "argv",
    [["simulate", "--rounds", "2", "--json"], ["position", START], ["--help"], ["host", "-h"]],
)
def test_output_to_a_full_disk_is_said_in_words(argv: list[str]) -> None:
    with open("/dev/full", "wb") as full:
        done = _cli_writing_to(full.fileno(), argv)
    assert done.stderr.decode() == (
        "nerts-p2p: could not write the output: No space left on device\n"
    )
    assert done.returncode == 1


def test_simulate_json_piped_to_head_prints_one_line_and_no_traceback() -> None:
    pipeline = subprocess.run(
        f"{sys.executable} -m client.cli simulate --rounds 50 --json | head -1",
        shell=True,
        capture_output=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert pipeline.returncode == 0
    assert json.loads(pipeline.stdout.decode())["round"] == 1
    assert pipeline.stderr.decode() == ""


def test_the_variant_presets_and_match_options_reach_the_rules(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = build_parser().parse_args(["simulate", "--norwegian", "--players", "2"])
    assert _rules_from(args, 2) == Rules.norwegian()
    args = build_parser().parse_args(
        ["simulate", "--stuck-ends-round", "--no-fill-from-work", "--match-spread", "40"]
    )
    rules = _rules_from(args, 4)
    assert (rules.stuck_ends_round, rules.fill_from_work, rules.match_spread) == (True, False, 40)
    code, out, _ = _run(
        capsys,
        "simulate", "--players", "2", "--match-rounds", "2", "--target", "10000", "--json",
    )  # fmt: skip
    summary = json.loads(out.splitlines()[-1])
    assert code == 0
    assert summary["finished"] is True
    assert summary["rounds"] >= 2


#: Runs the command's entry point with a Ctrl-C arriving while `MODULE` is being imported
#: (the first fraction of a second of every command, as a user may press it).
CTRL_C_WHILE_LOADING = """
import builtins, os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal, not a job
real, target = builtins.__import__, sys.argv[1]
def importing(name, *args, **kwargs):
    if name == target:
        builtins.__import__ = real
        os.kill(os.getpid(), signal.SIGINT)
    return real(name, *args, **kwargs)
builtins.__import__ = importing
from client.launch import main
sys.argv = ["nerts-p2p", "simulate", "--players", "2", "--rounds", "1"]
sys.exit(main())
"""


@pytest.mark.parametrize("module", ["client.cli", "nerts_p2p.game.bots", "tools.fuzz.cli"])
def test_ctrl_c_while_the_program_loads_ends_it_quietly(module: str) -> None:
    # It printed a traceback through the imports for the first ~0.25 s of any command.
    done = subprocess.run(
        [sys.executable, "-c", CTRL_C_WHILE_LOADING, module],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr
