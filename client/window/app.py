"""The window: one pygame display, a screen at a time, a fixed-rate frame loop in trio.

`run_window` is the loop DESIGN.md section 5 asks for: each frame handles input, lets the
screen (and its table session) run to now, draws and flips, then waits with
`trio.sleep_until(next_frame)`. Network tables run their node, announcement and bots in
the same nursery (`WindowApp.spawn`). Closing the window closes the screen, which leaves
its table cleanly: the loop then waits (at most `FAREWELL_MAX` seconds) for every table to
have said goodbye before the program ends.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path

import pygame
import trio

from nerts_p2p.game.errors import NertsError

from .art import HIGH_CONTRAST, NORMAL, ArtCache, Fonts, Theme
from .screen import Screen
from .settings import Settings, auto_ui_scale, data_dir, load_settings, save_settings
from .sound import Sounds

FPS = 60
#: The longest the window waits, once closed, for its tables to say goodbye (seconds).
FAREWELL_MAX = 3.0


class Task:
    """A piece of async work a screen started (browsing, opening a table, serving one)."""

    def __init__(self) -> None:
        self.scope = trio.CancelScope()
        self.done = trio.Event()

    def cancel(self) -> None:
        self.scope.cancel()


class NoDisplayError(Exception):
    """There is no display to open a window on (the message says why, in one line)."""


def display_problem() -> str | None:
    """Why no window can open here, or None if one probably can."""
    driver = os.environ.get("SDL_VIDEODRIVER", "")
    if driver in ("dummy", "offscreen"):
        return None
    if (
        os.name == "posix"
        and os.uname().sysname != "Darwin"  # macOS windows need no DISPLAY
        and not os.environ.get("DISPLAY")
        and not os.environ.get("WAYLAND_DISPLAY")
    ):
        return "no display (DISPLAY and WAYLAND_DISPLAY are unset)"
    return None


class WindowApp:
    def __init__(
        self,
        settings: Settings | None = None,
        *,
        size: tuple[int, int] | None = None,
        interface: str = "0.0.0.0",
    ) -> None:
        problem = display_problem()
        if problem is not None:
            raise NoDisplayError(problem)
        loaded, message = load_settings() if settings is None else (settings, "")
        self.settings = loaded
        self.message = message
        #: The IPv4 address network tables play and announce on (`--interface`).
        self.interface = interface
        self.data_dir: Path | None = data_dir()
        #: Where screens start async work: the frame loop's nursery (`run_window` sets it).
        self.nursery: trio.Nursery | None = None
        self._tasks: set[Task] = set()
        #: What to start once the frame loop (and its nursery) runs.
        self.when_running: list[Callable[[], None]] = []
        try:
            pygame.display.init()
            pygame.font.init()
            self.scale = self._scale(self.settings)
            if size is not None:
                width, height = size
            else:
                width, height = self._window_size(self.settings)
            self.surface = pygame.display.set_mode((width, height), pygame.RESIZABLE)
            if self.settings.ui_scale == 0 and size is None:
                self.scale = self._scale(self.settings)  # the window now says its pixels
        except pygame.error as exc:
            pygame.quit()
            raise NoDisplayError(f"no window could be opened ({exc})") from exc
        pygame.display.set_caption("Nerts")
        pygame.key.set_repeat(0)
        self.fonts = Fonts()
        self.arts = ArtCache(self.fonts)
        self.sounds = Sounds(self.settings.sound)
        self.running = True
        self.screen: Screen = self.start_screen()
        self.frames = 0

    @staticmethod
    def _scale(settings: Settings) -> float:
        """The UI scale: the player's, or (auto) what the display says."""
        if settings.ui_scale > 0:
            return settings.ui_scale
        try:
            desktops = pygame.display.get_desktop_sizes()
            surface = pygame.display.get_surface()
            points = pygame.display.get_window_size() if surface is not None else (0, 0)
            pixels = surface.get_size() if surface is not None else (0, 0)
        except pygame.error:
            return 1.0
        return auto_ui_scale(pixels, points, desktops[0][0] if desktops else 0)

    def _window_size(self, settings: Settings) -> tuple[int, int]:
        """The window in pixels: the chosen size, times the UI scale, within the desktop."""
        return self._fit(round(settings.width * self.scale), round(settings.height * self.scale))

    @staticmethod
    def _fit(width: int, height: int) -> tuple[int, int]:
        """The wanted size, shrunk to the desktop if the desktop is smaller."""
        try:
            desktops = pygame.display.get_desktop_sizes()
        except pygame.error:
            desktops = []
        if desktops:
            dw, dh = desktops[0]
            if dw > 0 and dh > 0:
                width, height = min(width, dw - 40), min(height, dh - 80)
        return max(640, width), max(400, height)

    # --- what screens use ---------------------------------------------------------------

    @property
    def size(self) -> tuple[int, int]:
        return self.surface.get_size()

    @property
    def theme(self) -> Theme:
        return HIGH_CONTRAST if self.settings.high_contrast else NORMAL

    def show(self, screen: Screen) -> None:
        if screen is not self.screen:
            self.screen.close()
        self.screen = screen

    def start_screen(self) -> Screen:
        from .menus import StartScreen

        return StartScreen(self)

    def quit(self) -> None:
        self.running = False

    def spawn(
        self,
        work: Callable[[], Awaitable[None]],
        on_error: Callable[[str], None] | None = None,
    ) -> Task:
        """Run `work` beside the frame loop. What a user must be told (a `NertsError` or an
        `OSError`) goes to `on_error` as one plain sentence, never as a traceback."""
        if self.nursery is None:
            raise RuntimeError("the window's frame loop is not running")
        task = Task()

        async def run() -> None:
            try:
                with task.scope:
                    await work()
            except (NertsError, OSError) as exc:
                if on_error is not None:
                    on_error(str(exc))
            finally:
                task.done.set()
                self._tasks.discard(task)

        self._tasks.add(task)
        self.nursery.start_soon(run)
        return task

    def started(self) -> None:
        """The frame loop runs (`nursery` is set): start what waited for it."""
        waiting, self.when_running = self.when_running, []
        for start in waiting:
            start()

    async def wind_down(self, seconds: float = FAREWELL_MAX) -> None:
        """Wait until every task started by a screen has ended (tables said goodbye)."""
        with trio.move_on_after(seconds):
            while self._tasks:
                await next(iter(self._tasks)).done.wait()

    def apply_settings(self, settings: Settings) -> None:
        settings = settings.cleaned()
        old = self.settings
        self.settings = settings
        self.message = save_settings(settings)
        self.scale = self._scale(settings)
        if (old.width, old.height, old.ui_scale) != (
            settings.width,
            settings.height,
            settings.ui_scale,
        ):
            self.surface = pygame.display.set_mode(self._window_size(settings), pygame.RESIZABLE)
        if old.sound != settings.sound:
            self.sounds = Sounds(settings.sound)

    # --- one frame ----------------------------------------------------------------------

    def frame(self, now: float) -> None:
        for event in pygame.event.get():
            if event.type == pygame.QUIT:
                self.running = False
            elif event.type == pygame.VIDEORESIZE:
                # pygame-ce keeps the display surface in step with the window by itself.
                self.surface = pygame.display.get_surface() or self.surface
            else:
                self.screen.handle(event, now)
        if not self.running:
            return
        screen = self.screen
        screen.update(now)
        if self.screen is not screen:  # the update handed over to another screen
            self.screen.update(now)
        self.screen.draw(self.surface, now)
        pygame.display.flip()
        self.frames += 1

    def close(self) -> None:
        self.screen.close()
        pygame.quit()


async def run_window(app: WindowApp, *, max_frames: int | None = None) -> None:
    """The fixed-rate frame loop. A frame that runs late is not made up for: the next one
    is scheduled from now, so a slow moment never turns into a burst of frames."""
    period = 1.0 / FPS
    async with trio.open_nursery() as nursery:
        app.nursery = nursery
        app.started()
        next_frame = trio.current_time()
        try:
            while app.running and (max_frames is None or app.frames < max_frames):
                app.frame(trio.current_time())
                next_frame += period
                now = trio.current_time()
                if next_frame < now:
                    next_frame = now
                await trio.sleep_until(next_frame)
        finally:
            app.close()  # the screen leaves its table: its LEAVE is on the way
            with trio.CancelScope(shield=True):
                await app.wind_down()
            nursery.cancel_scope.cancel()


def open_window(
    *,
    practice_seats: int | None = None,
    level: str = "casual",
    seed: int | None = None,
    watch: bool = False,
    size: tuple[int, int] | None = None,
    settings: Settings | None = None,
    interface: str = "0.0.0.0",
) -> WindowApp:
    """A window at its start screen, or straight at a practice table (`make play`)."""
    app = WindowApp(settings, size=size, interface=interface)
    if practice_seats is not None and not watch:
        from .menus import open_practice

        # The table opens (a socket, the bots' process) once the frame loop runs.
        app.when_running.append(lambda: open_practice(app, practice_seats, level, seed))
    elif practice_seats is not None:
        from nerts_p2p.game.bots import level_named

        from .practice import WINDOW_FRAME_BUDGET, practice_table
        from .table_screen import TableScreen

        table = practice_table(
            practice_seats,
            level_named(level),
            name=app.settings.name,
            seed=seed,
            watch=watch,
            frame_budget=WINDOW_FRAME_BUDGET,
        )
        app.show(TableScreen(app, table))
    return app


def play_window(
    *,
    practice_seats: int | None,
    level: str,
    seed: int | None,
    watch: bool = False,
    max_frames: int | None = None,
    interface: str = "0.0.0.0",
) -> None:
    """Open the window and run it until it is closed (raises `NoDisplayError` where it cannot)."""
    app = open_window(
        practice_seats=practice_seats, level=level, seed=seed, watch=watch, interface=interface
    )
    trio.run(lambda: run_window(app, max_frames=max_frames))


__all__ = ["FPS", "NoDisplayError", "WindowApp", "open_window", "play_window", "run_window"]
