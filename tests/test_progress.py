"""The progress line of the long commands (`nerts-p2p bench ...`): on a terminal, a bar that
is redrawn in place; anywhere else, nothing (a log or a pipe gets the results alone)."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

from tools.progress import LABEL_WIDTH, ProgressLine

ROOT = Path(__file__).resolve().parent.parent


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class GoneTerminal(Terminal):
    def write(self, text: str) -> int:
        raise BrokenPipeError("the terminal closed")


def test_on_a_terminal_the_line_is_redrawn_in_place_and_ends_with_the_run() -> None:
    screen = Terminal()
    line = ProgressLine(screen)
    line.expect(2)
    line.step("the first measure")
    assert screen.getvalue().startswith("\r[" + "#" * 14 + "-" * 14 + "] 1/2 the first measure")
    assert "\n" not in screen.getvalue()
    line.step("the second")
    last = screen.getvalue().split("\r")[-1]
    assert last.startswith("[" + "#" * 28 + "] 2/2 the second")
    assert last.endswith("\n")


def test_a_long_label_is_cut_visibly_and_the_count_never_passes_the_total() -> None:
    screen = Terminal()
    line = ProgressLine(screen)
    line.expect(1)
    line.step("x" * 100)
    line.step("one step too many")
    first = screen.getvalue().split("\r")[1]
    assert "x" * (LABEL_WIDTH - 3) + "..." in first
    assert "x" * (LABEL_WIDTH - 2) not in first
    assert screen.getvalue().split("\r")[-1].startswith("[" + "#" * 28 + "] 1/1 ")


def test_off_a_terminal_it_says_nothing() -> None:
    log = io.StringIO()
    line = ProgressLine(log)
    line.expect(3)
    for n in range(3):
        line.step(f"step {n}")
    assert log.getvalue() == ""


def test_a_terminal_that_went_away_does_not_stop_the_run() -> None:
    line = ProgressLine(GoneTerminal())
    line.expect(2)
    line.step("one")  # raises inside, quietly
    line.step("two")
    assert line.done == 2


def test_a_bench_on_a_terminal_shows_how_far_it_is_and_its_results_stay_clean() -> None:
    controller, terminal = pty.openpty()
    bench = [sys.executable, "-m", "client.cli", "bench", "bots", "--rounds", "1", "--json"]
    done = subprocess.run(bench, stdout=subprocess.PIPE, stderr=terminal, cwd=ROOT, timeout=120)
    os.close(terminal)
    shown = b""
    while select.select([controller], [], [], 0.2)[0]:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the terminal's last reader is gone
            break
        if not chunk:
            break
        shown += chunk
    os.close(controller)
    assert done.returncode == 0
    assert b"] 4/4 expert vs 3 casual" in shown
    assert done.stdout.startswith(b"{")  # --json's document alone on stdout
