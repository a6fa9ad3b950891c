"""End to end: a real window under Xvfb, driven by real mouse and key events (xdotool).

`make test` installs `xvfb` and `xdotool` (Debian packages) before the suite enters its
network namespace; the test starts its own X server (`-nolisten tcp`: a local socket, no
network) and skips, saying why, only where they are not installed. What the window did is
read back from the replay it saves when the table is left.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import trio

from client.window.layout import NERTS, WASTE, WORK, PileRef, pile_rect, table_layout
from client.window.net_open import loopback_practice
from client.window.replay_file import load_replay
from client.window.session import PLAYING
from nerts_p2p.game.bots import NOVICE
from nerts_p2p.game.legal import legal_moves
from nerts_p2p.game.moves import FROM_NERTS, FROM_WASTE, PLAY, RECYCLE, TO_WORK, TURN, Move
from nerts_p2p.game.state import GameState

pytestmark = pytest.mark.skipif(
    not (shutil.which("Xvfb") and shutil.which("xdotool")),
    reason="Xvfb and xdotool are not installed (`make test` installs them with apt-get)",
)

SIZE = (1280, 800)
#: display -> the folder where its Xvfb keeps the screen as a file.
FRAMEBUFFERS: dict[str, Path] = {}
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def xserver(tmp_path: Path) -> Iterator[str]:
    # -displayfd: Xvfb picks a free display itself and says which. Choosing one by looking
    # at /tmp/.X11-unix races with other test runs on this machine (the socket folder is
    # shared across network namespaces), and a window could open on someone else's server.
    # -fbdir: the screen is also a file (XWD), so the test can read what the window shows.
    framebuffer = tmp_path / "framebuffer"
    framebuffer.mkdir()
    read_end, write_end = os.pipe()
    server = subprocess.Popen(
        [
            "Xvfb",
            "-displayfd",
            str(write_end),
            "-screen",
            "0",
            "1400x900x24",
            "-nolisten",
            "tcp",
            "-fbdir",
            str(framebuffer),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        pass_fds=(write_end,),
    )
    os.close(write_end)
    try:
        with os.fdopen(read_end) as said:
            line = said.readline().strip()  # the display number, once Xvfb accepts clients
        if not line.isdigit():
            raise AssertionError("Xvfb did not start")
        number = int(line)
        FRAMEBUFFERS[f":{number}"] = framebuffer
        yield f":{number}"
    finally:
        server.terminate()
        server.wait(timeout=10)


def _xdotool(display: str, *args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["xdotool", *args],
        env={**os.environ, "DISPLAY": display},
        capture_output=True,
        text=True,
        timeout=20,
        check=check,
    )


def _xdo(display: str, *args: str) -> str:
    return _xdotool(display, *args, check=True).stdout.strip()


def screen_pixel(display: str, x: int, y: int) -> tuple[int, int, int]:
    """The colour Xvfb shows at (x, y) of its screen, read from its XWD framebuffer file."""
    data = (FRAMEBUFFERS[display] / "Xvfb_screen0").read_bytes()
    header = struct.unpack(">25I", data[:100])
    header_size, byte_order, bits, bytes_per_line, ncolors = (
        header[0],
        header[7],
        header[11],
        header[12],
        header[19],
    )
    assert bits == 32, f"a 24-bit screen is stored 32 bits a pixel, not {bits}"
    at = header_size + ncolors * 12 + y * bytes_per_line + x * 4
    b0, b1, b2, b3 = data[at : at + 4]
    return (b2, b1, b0) if byte_order == 0 else (b1, b2, b3)


#: The window's own command, as the e2e tests open it unless they say another.
WINDOW = ("window", "--players", "4", "--level", "novice")


def _start_window(
    display: str, home: Path, *extra: str, command: Sequence[str] = WINDOW
) -> tuple[subprocess.Popen[str], str]:
    config = home / "config"
    config.mkdir(parents=True)
    (config / "settings.json").write_text(
        json.dumps({"name": "Ann", "sound": False, "width": SIZE[0], "height": SIZE[1]})
    )
    env = {
        **os.environ,
        "DISPLAY": display,
        "SDL_AUDIODRIVER": "dummy",
        "NERTS_P2P_CONFIG_DIR": str(config),
        "NERTS_P2P_DATA_DIR": str(home / "data"),
    }
    env.pop("SDL_VIDEODRIVER", None)
    printed_to = (home / "stdout.txt").open("w")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "client.cli",
            *command,
            *extra,
        ],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        # A file, not a pipe: nothing the program prints can fill a pipe and stall it.
        stdout=printed_to,
        stderr=subprocess.PIPE,
        text=True,
    )
    printed_to.close()  # the child has its own copy
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            _, stderr = process.communicate()
            printed = (home / "stdout.txt").read_text()
            raise AssertionError(f"the window program ended at once: {printed} {stderr}")
        found = _program_windows(display)
        if found:
            return process, found[0]
        time.sleep(0.2)
    # What the display shows instead, for the report: it failed once under load with
    # nothing said, and a window by another class or name, or no display, tells why.
    seen = _xdotool(display, "search", "--onlyvisible", "--name", ".")
    names = [_xdotool(display, "getwindowname", w).stdout.strip() for w in seen.stdout.split()[:10]]
    process.kill()
    printed = (home / "stdout.txt").read_text()
    raise AssertionError(
        f"no window of class nerts-p2p appeared in 90 s; windows on {display}: {names} "
        f"(xdotool: {seen.stderr.strip()!r}); the program printed: {printed} "
        f"{process.communicate()[1]}"
    )


def _program_windows(display: str) -> list[str]:
    """The ids of the windows of our program's class on `display` (none yet: empty)."""
    return _xdotool(display, "search", "--class", "nerts-p2p").stdout.split()


def _wait_for_title(display: str, window: str, title: str, *, ending: str = "") -> str:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            shown = _xdo(display, "getwindowname", window)
        except subprocess.CalledProcessError:
            # The id found a moment ago is gone (it failed so under load: SDL may make its
            # window again while it opens): look the program's window up again by class.
            found = _program_windows(display)
            window = found[-1] if found else window
            time.sleep(0.2)
            continue
        if shown.startswith(title) and shown.endswith(ending):
            return shown
        time.sleep(0.1)
    raise AssertionError(f"the window never showed {title!r}")


def _key_to_program(display: str, window: str, process: subprocess.Popen[str], key: str) -> str:
    """Press `key` in the program's window; if that window id is gone while the program
    runs (it failed once in CI: xdotool refused the id it had used a second before), the
    program's window is looked up again by its class and the key pressed there. Returns
    the window id used."""
    for _ in range(3):
        try:
            _xdo(display, "key", "--window", window, key)
            return window
        except subprocess.CalledProcessError:
            if process.poll() is not None:
                break
            found = _program_windows(display)
            window = found[-1] if found else window
            time.sleep(0.5)
    if process.poll() is None:
        process.kill()
    _, stderr = process.communicate(timeout=30)
    raise AssertionError(f"the window was gone before it was closed: {stderr}")


def _finish(display: str, window: str, process: subprocess.Popen[str]) -> str:
    """Leave the table (Q), quit from the start screen (Esc); the program ends cleanly."""
    window = _key_to_program(display, window, process, "q")
    time.sleep(0.6)
    _key_to_program(display, window, process, "Escape")
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
    assert "Traceback" not in stderr
    return stderr


def _opening_move(state: GameState, seat: int) -> Move:
    """A move of our own layout that no bot can take away: onto one of our work piles."""
    for move in legal_moves(state, seat):
        if move.action == PLAY and move.dest_kind == TO_WORK:
            return move
    raise LookupError


def _seed_with_a_work_move() -> tuple[int, int, Move]:
    """A seed whose practice deal gives our seat a work-pile move: found by opening the
    same practice table the window opens (`--practice --seed N`: our node here, the bots in
    their process, on 127.0.0.1), which deals the same game for the same seed."""

    async def deal(seed: int) -> tuple[GameState, int]:
        table = await loopback_practice(4, NOVICE, name="Ann", seed=seed)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(table.serve)
            with trio.fail_after(60):
                while table.view().phase != PLAYING:
                    table.advance(trio.current_time())
                    await trio.sleep(1 / 60)
            view = table.view()
            table.leave()
        assert view.state is not None
        assert view.my_seat is not None
        return view.state, view.my_seat

    for seed in range(1, 40):
        state, seat = trio.run(deal, seed)
        try:
            return seed, seat, _opening_move(state, seat)
        except LookupError:
            continue
    raise AssertionError("no seed deals a work-pile move")


def _centre(pile: PileRef, seat: int, depth_offset: float = 0.0) -> tuple[int, int]:
    layout = table_layout(SIZE[0], SIZE[1], 4, seat)
    rect = pile_rect(layout, pile)
    assert rect is not None
    return round(rect.x + rect.w / 2), round(rect.y + rect.h / 2 + depth_offset)


def test_a_few_moves_of_a_practice_round_with_mouse_and_keys(xserver: str, tmp_path: Path) -> None:
    seed, seat, move = _seed_with_a_work_move()
    process, window = _start_window(xserver, tmp_path, "--practice", "--seed", str(seed))
    try:
        _wait_for_title(xserver, window, "Nerts - round 1")  # the deal is on the table
        time.sleep(0.5)  # a loaded host: the window's frames may lag its title a little
        if move.source == FROM_NERTS:
            source = PileRef(seat, NERTS)
        elif move.source == FROM_WASTE:
            source = PileRef(seat, WASTE)
        else:
            source = PileRef(seat, WORK, move.source)
        sx, sy = _centre(source, seat)
        tx, ty = _centre(PileRef(seat, WORK, move.dest), seat, 30)
        _xdo(xserver, "mousemove", "--window", window, str(sx), str(sy))
        _xdo(xserver, "mousedown", "1")
        for step in range(1, 9):
            x = sx + (tx - sx) * step // 8
            y = sy + (ty - sy) * step // 8
            _xdo(xserver, "mousemove", "--window", window, str(x), str(y))
            time.sleep(0.02)
        _xdo(xserver, "mouseup", "1")
        time.sleep(0.3)
        window = _key_to_program(xserver, window, process, "space")  # turn the stock with a key
        time.sleep(0.3)
        stock = _centre(PileRef(seat, "stock"), seat)
        _xdo(xserver, "mousemove", "--window", window, str(stock[0]), str(stock[1]))
        _xdo(xserver, "click", "1")  # and with a click
        time.sleep(0.8)
    finally:
        stderr = _finish(xserver, window, process)
    saved = list((tmp_path / "data" / "replays").glob("*.json"))
    assert len(saved) == 1, "leaving the table saves the match"
    replay = load_replay(saved[0])
    ours = [m.move for m in replay.rounds[0].moves if m.move.seat == seat]
    assert ours, (
        f"no move of our seat {seat} in {replay.names}: {replay.rounds[0].moves[:3]} {stderr}"
    )
    assert ours[0].without_reveals() == move, "the drag played the move the test aimed at"
    turns = [m for m in ours[1:] if m.action in (TURN, RECYCLE)]
    assert len(turns) == 2, ours
    assert replay.names[seat] == "Ann"


def test_a_spectator_window_follows_the_bots(xserver: str, tmp_path: Path) -> None:
    process, window = _start_window(xserver, tmp_path, "--watch", "--seed", "4")
    try:
        _wait_for_title(xserver, window, "Nerts - round 1 (watching)")
        geometry = _xdo(xserver, "getwindowgeometry", "--shell", window)
        where = dict(line.split("=") for line in geometry.splitlines())
        x0, y0 = int(where["X"]), int(where["Y"])
        layout = table_layout(SIZE[0], SIZE[1], 4, None)
        wastes = []
        for seat in range(4):
            rect = pile_rect(layout, PileRef(seat, WASTE))
            assert rect is not None
            wastes.append((x0 + round(rect.x + rect.w / 2), y0 + round(rect.y + rect.h * 0.1)))
        # The bots play (in their own process): a turned card shows on some seat's waste.
        # Looked at for up to 30 s: a loaded host may give their process little time.
        deadline = time.monotonic() + 30.0
        while not any(all(c >= 200 for c in screen_pixel(xserver, x, y)) for x, y in wastes):
            assert time.monotonic() < deadline, "no bot turned its stock while we watched"
            time.sleep(0.5)
        window = _key_to_program(
            xserver, window, process, "space"
        )  # a spectator's keys move nothing
    finally:
        _finish(xserver, window, process)
    saved = list((tmp_path / "data" / "replays").glob("*.json"))
    replay = load_replay(saved[0])
    moves = replay.rounds[0].moves
    assert any(m.move.action == TURN for m in moves), "the bots played while we watched"
    assert {m.move.seat for m in moves} <= set(range(4))
    assert "Ann" not in replay.names  # we watched; every seat is a bot


def test_a_spectator_window_follows_a_headless_match_over_the_network(
    xserver: str, tmp_path: Path
) -> None:
    """A headless `nerts-p2p host` match (a bot at each of 2 seats) on 127.0.0.1; the window
    finds it in its Spectate list, watches it mid-match, and follows it into later rounds."""
    name = f"e2e{os.getpid()}"
    match = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "client.cli",
            "host",
            "--name",
            name,
            "--seats",
            "2",
            "--bots",
            "1",
            "--headless",
            "--nerts-size",
            "6",
            "--bot-pace",
            "0.25",
            "--silence",
            "60",
            "--interface",
            "127.0.0.1",
            "--data-dir",
            str(tmp_path / "match"),
        ],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        process, window = _start_window(xserver, tmp_path / "home", "--interface", "127.0.0.1")
        try:
            window = _key_to_program(xserver, window, process, "v")  # Spectate a table
            time.sleep(3.0)  # the list fills from mDNS
            window = _key_to_program(xserver, window, process, "1")  # the first (only) table
            first = _wait_for_title(xserver, window, "Nerts - round", ending="(watching)")
            number = int(first.split()[3])
            _wait_for_title(xserver, window, f"Nerts - round {number + 1}", ending="(watching)")
            time.sleep(1.0)
            geometry = _xdo(xserver, "getwindowgeometry", "--shell", window)
            where = dict(line.split("=") for line in geometry.splitlines())
            x0, y0 = int(where["X"]), int(where["Y"])
            layout = table_layout(SIZE[0], SIZE[1], 2, None)
            for seat in layout.seats:
                # Every seat's Nerts top is drawn face up in its place (a card's white). A
                # loaded host may show the round late, when a fast bot is emptying its Nerts
                # pile, so a few looks a moment apart.
                cx = x0 + round(seat.nerts.x + seat.nerts.w * 0.5)
                cy = y0 + round(seat.nerts.y + seat.nerts.h * 0.08)
                seen = []
                for _ in range(5):
                    seen.append(screen_pixel(xserver, cx, cy))
                    if all(c >= 200 for c in seen[-1]):
                        break
                    time.sleep(0.1)
                assert all(c >= 200 for c in seen[-1]), f"seat {seat.seat}: {seen}"
            window = _key_to_program(
                xserver, window, process, "space"
            )  # a spectator's keys move nothing
        finally:
            _finish(xserver, window, process)
    finally:
        match.kill()
        match.wait(timeout=30)


def test_spectate_without_headless_opens_a_real_window_at_the_named_table(
    xserver: str, tmp_path: Path
) -> None:
    """`nerts-p2p spectate NAME` on a display: the window opens straight at that table (no
    menus on the way) and follows its rounds; leaving it goes to the start screen."""
    name = f"e2eby{os.getpid()}"
    match = subprocess.Popen(
        [sys.executable, "-m", "client.cli", "host", "--name", name, "--seats", "2", "--bots",
         "1", "--headless", "--nerts-size", "6", "--bot-pace", "0.25", "--silence", "60",
         "--interface", "127.0.0.1", "--data-dir", str(tmp_path / "match")],
        cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        command = ("spectate", name, "--interface", "127.0.0.1", "--silence", "60")
        process, window = _start_window(xserver, tmp_path / "home", command=command)
        try:
            first = _wait_for_title(xserver, window, "Nerts - round", ending="(watching)")
            number = int(first.split()[3])
            _wait_for_title(xserver, window, f"Nerts - round {number + 1}", ending="(watching)")
        finally:
            _finish(xserver, window, process)
    finally:
        match.kill()
        match.wait(timeout=30)
