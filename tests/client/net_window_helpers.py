"""A window in the test's own trio program, beside `nerts-p2p` processes on 127.0.0.1.

The frame loop is the window's (`WindowApp.frame` at about 60 Hz, its tasks in the test's
nursery), so the node, discovery and the screens run exactly as in `nerts-p2p window`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import pygame
import trio

from client.window.app import WindowApp
from client.window.settings import Settings

LO = "127.0.0.1"
SIZE = (1280, 800)
#: Bounds of the waits below: a broken test fails rather than hangs (not a speed check).
WAIT = 90.0


def network_app(nursery: trio.Nursery, name: str = "Ann") -> WindowApp:
    app = WindowApp(Settings(name=name, sound=False), size=SIZE, interface=LO)
    # Each window its own data directory (its own key), as two machines would have.
    app.data_dir = Path(tempfile.mkdtemp(prefix="nerts-window-data-"))
    app.nursery = nursery
    return app


async def frames_until(app: WindowApp, done: Callable[[], bool], what: str) -> None:
    """Run the window's frames until `done()` (at most WAIT seconds, then fail saying `what`)."""
    with trio.move_on_after(WAIT) as scope:
        while not done():
            app.frame(trio.current_time())
            await trio.sleep(1 / 60)
    if scope.cancelled_caught:
        raise AssertionError(f"the window never got to: {what}")


async def frames_for(app: WindowApp, seconds: float) -> None:
    end = trio.current_time() + seconds
    while trio.current_time() < end:
        app.frame(trio.current_time())
        await trio.sleep(1 / 60)


async def close_window(app: WindowApp) -> None:
    """What closing the window does: the screen leaves its table, the farewells finish."""
    app.close()
    await app.wind_down()


def click(app: WindowApp, at: tuple[int, int]) -> None:
    event = pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=at)
    app.screen.handle(event, trio.current_time())


def press(app: WindowApp, key: int, text: str = "") -> None:
    event = pygame.event.Event(pygame.KEYDOWN, key=key, unicode=text, mod=0, scancode=0)
    app.screen.handle(event, trio.current_time())


class Peer:
    """A `nerts-p2p` process whose output goes to files (a pipe could fill and stall it)."""

    def __init__(self, args: Sequence[str]) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="nerts-window-test-"))
        args = list(args)
        if args[0] in ("host", "join", "spectate"):
            args += ["--data-dir", str(self.dir / "data")]
        self.out = self.dir / "stdout"
        self.err = self.dir / "stderr"
        with self.out.open("w") as out, self.err.open("w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "client.cli", *args],
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )

    def ended(self) -> bool:
        return self.proc.poll() is not None

    def output(self) -> str:
        return self.out.read_text()

    def errors(self) -> str:
        return self.err.read_text()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
