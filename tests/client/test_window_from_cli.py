"""`nerts-p2p host`, `join`, `spectate` and `play --bots N` without --headless: the window
opens straight at the table the command names, and a person plays the seat there (run
in the suite's network namespace, on 127.0.0.1; the window on SDL's dummy driver).

Each test runs the real command (`client.cli.main`) with the window's frame loop wrapped
so that the test can look at each frame and press keys, as a person at the window would."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import cast

import pygame
import pytest

import client.window.from_cli as from_cli
from client.cli import main
from client.window.app import WindowApp, run_window
from client.window.lobby_screen import LobbyScreen
from client.window.table_screen import TableScreen
from nerts_p2p.game.rules import Rules

from ..net.procs import table_name
from .net_window_helpers import LO, Peer

FAST_BOTS = ["--bot-pace", "0.05"]
PATIENT = ["--silence", "60"]
#: The window's frames before it gives up by itself (about 90 s at 60 Hz): a bound on a
#: broken test, not a speed check.
FRAMES = ["--frames", "5400"]


Step = Callable[[WindowApp], bool]


def watch_frames(monkeypatch: pytest.MonkeyPatch, step: Step) -> list[WindowApp]:
    """After each frame of the window the command opens, `step(app)` looks (and may press
    keys); once it says True the window is closed, as a person closes it."""
    real = run_window
    apps: list[WindowApp] = []

    async def looked_at(app: WindowApp, *, max_frames: int | None = None) -> None:
        apps.append(app)
        frame = app.frame

        def frame_and_look(now: float) -> None:
            frame(now)
            if app.running and step(app):
                app.running = False

        app.frame = frame_and_look  # type: ignore[method-assign]
        await real(app, max_frames=max_frames)

    monkeypatch.setattr(from_cli, "run_window", looked_at)
    return apps


def run_beside(monkeypatch: pytest.MonkeyPatch, step: Step, argv: list[str], peer: Peer) -> int:
    """The command `argv`, its window looked at by `step`, beside `peer` (a headless peer
    of the table, stopped afterwards): its exit code."""
    watch_frames(monkeypatch, step)
    try:
        return main(argv)
    finally:
        peer.stop()


def press(app: WindowApp, key: int) -> None:
    event = pygame.event.Event(pygame.KEYDOWN, key=key, unicode="", mod=0, scancode=0)
    app.screen.handle(event, time.monotonic())


def test_join_by_hand_opens_the_window_at_the_named_table_and_plays_there(
    headless: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    name = table_name("byhand")
    host = Peer(["host", "--name", name, "--seats", "2", "--headless", "--json", "--interface",
                 LO, *FAST_BOTS, *PATIENT])  # fmt: skip
    seen: dict[str, object] = {}

    def step(app: WindowApp) -> bool:
        screen = app.screen
        if isinstance(screen, LobbyScreen) and screen.lobby.joined:
            seats = [(s.name, s.me, s.host) for s in screen.lobby.seats]
            seen["lobby"] = (screen.lobby.table_name, seats)
            if len(seats) == 2 and not screen.lobby.i_am_ready:
                press(app, pygame.K_RETURN)  # Ready: the headless host then deals
        if isinstance(screen, TableScreen):
            seen["table"] = screen.session.view().my_seat
            return True
        return False

    argv = ["join", name, "--as", "bob", "--interface", LO, "--data-dir", str(tmp_path / "bob")]
    assert run_beside(monkeypatch, step, [*argv, *PATIENT, *FRAMES], host) == 0
    assert seen["lobby"] == (name, [(name, False, True), ("bob", True, False)])
    assert seen.get("table") is not None, "the round was dealt with us at a seat"


def test_host_by_hand_opens_its_lobby_announced_and_starts_the_round(
    headless: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    name = table_name("byhost")
    joiners: list[Peer] = []
    seen: dict[str, object] = {}

    def step(app: WindowApp) -> bool:
        screen = app.screen
        if isinstance(screen, LobbyScreen) and screen.lobby.joined:
            if not joiners:
                # Announced: a headless joiner on this machine finds it by its name.
                joiners.append(Peer(["join", name, "--as", "eve", "--headless", "--json",
                                     "--interface", LO, *FAST_BOTS, *PATIENT]))  # fmt: skip
            lobby = screen.lobby
            seen["lobby"] = (lobby.rules, [(s.name, s.bot) for s in lobby.seats])
            seen["me"] = app.settings.name
            if lobby.can_start and len(lobby.seats) == 3:
                press(app, pygame.K_RETURN)  # Start, once the bot and eve sit
        if isinstance(screen, TableScreen):
            seen["seats"] = len(screen.session.view().state.seats)  # type: ignore[union-attr]
            return True
        return False

    watch_frames(monkeypatch, step)
    try:
        code = main(["host", "--name", name, "--seats", "3", "--bots", "1", "--rounds", "2",
                     "--draw", "1", "--interface", LO, "--data-dir", str(tmp_path / "ann"),
                     *FAST_BOTS, *PATIENT, *FRAMES])  # fmt: skip
    finally:
        for joiner in joiners:
            joiner.stop()
    assert code == 0
    rules, seats = cast(tuple[Rules, list[tuple[str, bool]]], seen["lobby"])
    # The command line's rules are the table's, --rounds its match length for every peer.
    assert (rules.seats, rules.draw, rules.match_rounds) == (3, 1, 2)
    assert sorted(seats) == sorted([(seen["me"], False), ("casual bot 1", True), ("eve", False)])
    assert seen["seats"] == 3


def test_spectate_without_headless_watches_the_named_table_in_the_window(
    headless: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    name = table_name("bywatch")
    host = Peer(["host", "--name", name, "--seats", "2", "--bots", "1", "--headless", "--json",
                 "--interface", LO, *FAST_BOTS, *PATIENT])  # fmt: skip
    seen: dict[str, object] = {}

    def step(app: WindowApp) -> bool:
        screen = app.screen
        if isinstance(screen, TableScreen):
            view = screen.session.view()
            if view.state is not None and view.state.foundations:  # moves folded live
                seen["watching"] = view.my_seat is None
                seen["players"] = len(view.state.seats)
                return True
        return False

    argv = ["spectate", name, "--as", "eve", "--interface", LO, "--data-dir", str(tmp_path / "eve")]
    assert run_beside(monkeypatch, step, [*argv, *PATIENT, *FRAMES], host) == 0
    # In the window (not as text): the table's two players at their moves, and no seat ours.
    assert seen == {"watching": True, "players": 2}


def test_play_with_bots_by_hand_opens_the_practice_table(
    headless: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, object] = {}

    def step(app: WindowApp) -> bool:
        screen = app.screen
        if isinstance(screen, TableScreen):
            view = screen.session.view()
            if view.state is not None:
                seen["seats"] = len(view.state.seats)
                seen["ours"] = view.my_seat is not None
                rules = screen.session.replica.rules  # type: ignore[attr-defined]
                seen["nerts size"] = rules.nerts_size
                return True
        return False

    watch_frames(monkeypatch, step)
    assert main(["play", "--bots", "2", "--nerts-size", "10", *FAST_BOTS, *FRAMES]) == 0
    # You and the two bots, dealt by the command line's rules.
    assert seen == {"seats": 3, "ours": True, "nerts size": 10}


def test_a_table_that_cannot_be_joined_ends_the_command_before_any_window(
    headless: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    apps = watch_frames(monkeypatch, lambda app: True)
    code = main(["join", table_name("none"), "--interface", LO, "--timeout", "1", *FRAMES])
    assert code == 1
    assert "no table named" in capsys.readouterr().err
    assert apps == [], "no window ran for a table that is not there"


def test_where_no_window_can_open_playing_by_hand_says_how_to_play_headless(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for variable in ("SDL_VIDEODRIVER", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(variable, raising=False)
    assert main(["join", "kitchen", "--interface", LO, "--timeout", "1"]) == 1
    err = capsys.readouterr().err
    assert "no display" in err
    assert "add --headless" in err
    assert main(["play", "--bots", "1"]) == 1
    assert "add --headless" in capsys.readouterr().err


def test_a_spectator_with_no_window_follows_the_table_as_text(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for variable in ("SDL_VIDEODRIVER", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(variable, raising=False)
    name = table_name("astext")
    host = Peer(["host", "--name", name, "--seats", "2", "--bots", "1", "--headless", "--json",
                 "--rounds", "1", "--interface", LO, *FAST_BOTS])  # fmt: skip
    try:
        code = main(["spectate", name, "--interface", LO, "--data-dir", str(tmp_path)])
    finally:
        host.stop()
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "no display" in err
    assert "following the table as text" in err
    assert "round 1" in out.lower()


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["join", "t", "--json"], "--json: only with --headless"),
        (["join", "t", "--bots", "1"], "--bots: only with --headless"),
        (["join", "t", "--rounds", "2"], "--rounds: only with --headless"),
        (["host", "--name", "t", "--json"], "--json: only with --headless"),
        (["host", "--name", "t", "--rounds", "2", "--match-rounds", "3"], "disagree"),
        (["play", "--bots", "1", "--json"], "--json: only with --headless"),
    ],
)
def test_options_of_a_headless_peer_are_refused_by_hand(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*argv, "--interface", LO] if argv[0] != "play" else argv) == 2
    assert words in capsys.readouterr().err
