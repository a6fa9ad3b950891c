"""The start screen, the settings screen and the list of saved replays."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pygame
import trio

from nerts_p2p.game.bots import LEVELS, level_named
from protocol.messages import PLAYER, SPECTATOR

from .replay_file import ReplayError, load_replay
from .screen import App
from .settings import (
    COLOUR_NAMES,
    SEAT_COLOURS,
    UI_SCALES,
    WINDOW_SIZES,
    Settings,
    replays_dir,
)
from .signed_replay import SUFFIX, load_signed_replay
from .widgets import Button, button_at, column, menu_column, screen_title, text_lines

if TYPE_CHECKING:
    from .netsession import NetworkTable

LEVEL_ORDER = list(LEVELS)


async def sit_at(app: App, came_from: object, table: NetworkTable) -> None:
    """Show a table that has just opened and serve it, unless the player went elsewhere
    while it opened (then it is left at once)."""
    from .table_screen import TableScreen

    if app.screen is not came_from:
        table.leave()
        return
    app.show(TableScreen(app, table))
    await table.serve()


def open_practice(app: App, seats: int, level: str, seed: int | None = None) -> None:
    """You and `seats - 1` bots at a table on 127.0.0.1 (`net_open.loopback_practice`): the
    table screen shows once the table is open; a table that cannot open is said on the
    start screen in plain words."""
    from .net_open import loopback_practice

    came_from = app.screen

    async def opening() -> None:
        table = await loopback_practice(
            seats, level_named(level), name=app.settings.name, seed=seed
        )
        await sit_at(app, came_from, table)

    def failed(problem: str) -> None:
        app.message = f"The practice table could not be opened: {problem}"

    app.spawn(opening, failed)


def open_watch(app: App, seats: int, level: str, seed: int | None = None) -> None:
    """Bots at every seat of a table on 127.0.0.1 that they host in their own process
    (`net_open.watched_bots`), and us watching it: the table screen shows once we are in."""
    from .net_open import watch_bots, watched_bots

    came_from = app.screen

    async def opening() -> None:
        bots = watched_bots(seats, level_named(level), seed=seed)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(bots.run)
            try:
                table = await watch_bots(bots, name=app.settings.name)
            except BaseException:
                bots.close()
                raise
            await sit_at(app, came_from, table)

    def failed(problem: str) -> None:
        app.message = f"The bots' table could not be opened: {problem}"

    app.spawn(opening, failed)


class StartScreen:
    """Practice against bots, watch bots, replays, settings, quit."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.seats = 4
        self.level = "casual"

    def buttons(self) -> list[Button]:
        width, height = self.app.size
        items = [
            ("practice", f"Practice: you and {self.seats - 1} bots  (P)"),
            ("seats", f"Seats: {self.seats}   (click to change)"),
            ("level", f"Bots: {self.level}   (click to change)"),
            ("watch", "Watch the bots play  (W)"),
            ("host", "Host a table  (O)"),
            ("join", "Join a table  (J)"),
            ("spectate", "Spectate a table  (V)"),
            ("replays", "Replays  (R)"),
            ("settings", "Settings  (S)"),
            ("quit", "Quit  (Esc)"),
        ]
        return menu_column(
            items, (width, height), self.app.scale, top=0.24, max_width=520, max_height=52
        )

    def handle(self, event: pygame.event.Event, now: float) -> None:
        name = None
        if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            button = button_at(self.buttons(), event.pos)
            name = button.name if button else None
        elif event.type == pygame.KEYDOWN:
            name = {
                "p": "practice",
                "w": "watch",
                "o": "host",
                "j": "join",
                "v": "spectate",
                "r": "replays",
                "s": "settings",
                "escape": "quit",
                "return": "practice",
            }.get(pygame.key.name(event.key))
        if name is not None:
            self.choose(name, now)

    def choose(self, name: str, now: float) -> None:
        app = self.app

        if name == "practice":
            open_practice(app, self.seats, self.level)
        elif name == "watch":
            open_watch(app, self.seats, self.level)
        elif name == "seats":
            self.seats = self.seats + 1 if self.seats < 8 else 2
        elif name == "level":
            self.level = LEVEL_ORDER[(LEVEL_ORDER.index(self.level) + 1) % len(LEVEL_ORDER)]
        elif name == "host":
            from .host_screen import HostScreen

            app.show(HostScreen(app))
        elif name in ("join", "spectate"):
            from .tables_screen import TablesScreen

            app.show(TablesScreen(app, PLAYER if name == "join" else SPECTATOR))
        elif name == "replays":
            app.show(ReplayListScreen(app))
        elif name == "settings":
            app.show(SettingsScreen(app))
        elif name == "quit":
            app.quit()

    def update(self, now: float) -> None:
        pass

    def draw(self, surface: pygame.Surface, now: float) -> None:
        app = self.app
        theme, fonts = app.theme, app.fonts
        width, height = app.size
        surface.fill(theme.felt)
        title = screen_title(surface, fonts, theme, "Nerts", height * 0.1, height * 0.05)
        sub = fonts.text(
            f"Welcome, {app.settings.name}. Practice is local; network tables play on "
            f"{app.interface}.",
            height * 0.03,
            theme.dim_text,
        )
        surface.blit(sub, sub.get_rect(midtop=(width / 2, height * 0.05 + title.get_height() + 4)))
        for button in self.buttons():
            button.draw(surface, fonts, theme)
        if app.message:
            image = fonts.text(app.message, height * 0.028, theme.warn)
            surface.blit(image, image.get_rect(midbottom=(width / 2, height - 12)))

    def close(self) -> None:
        pass


class SettingsScreen:
    """Name, seat colour, card style, sound and window size; saved as they change."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.editing = False
        self.draft = app.settings.name

    def buttons(self) -> list[Button]:
        s = self.app.settings
        app_scale = self.app.scale
        width, height = self.app.size
        k = self.app.scale
        bh = int(max(36 * k, min(50 * k, height // 16)))
        name = f"Name: {self.draft}{'_' if self.editing else ''}" + (
            "" if self.editing else "   (click to type)"
        )
        items = [
            ("name", name),
            ("colour", f"Seat colour: {COLOUR_NAMES[s.colour]}"),
            ("four", f"Four-colour deck: {'on' if s.four_colour else 'off'}"),
            ("contrast", f"High contrast: {'on' if s.high_contrast else 'off'}"),
            ("sound", f"Sound: {'on' if s.sound else 'off'}"),
            ("size", f"Window size: {s.width} x {s.height}"),
            (
                "scale",
                "UI scale: " + (f"auto ({app_scale:g})" if not s.ui_scale else f"{s.ui_scale:g}"),
            ),
            ("back", "Back  (Esc)"),
        ]
        return column(
            items, width // 2, int(height * 0.16), int(min(560 * k, width - 40)), bh, bh // 4
        )

    def handle(self, event: pygame.event.Event, now: float) -> None:
        app = self.app
        if self.editing and event.type == pygame.KEYDOWN:
            if event.key in (pygame.K_RETURN, pygame.K_KP_ENTER, pygame.K_ESCAPE):
                self.editing = False
                app.apply_settings(Settings(**{**app.settings.__dict__, "name": self.draft}))
                self.draft = app.settings.name
            elif event.key == pygame.K_BACKSPACE:
                self.draft = self.draft[:-1]
            elif event.unicode and event.unicode.isprintable() and len(self.draft) < 24:
                self.draft += event.unicode
            return
        name = None
        if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            button = button_at(self.buttons(), event.pos)
            name = button.name if button else None
        elif event.type == pygame.KEYDOWN and event.key == pygame.K_ESCAPE:
            name = "back"
        if name is None:
            return
        s = app.settings
        values = dict(s.__dict__)
        if name == "name":
            self.editing = True
            return
        if name == "colour":
            values["colour"] = (s.colour + 1) % len(SEAT_COLOURS)
        elif name == "four":
            values["four_colour"] = not s.four_colour
        elif name == "contrast":
            values["high_contrast"] = not s.high_contrast
        elif name == "sound":
            values["sound"] = not s.sound
        elif name == "size":
            sizes = list(WINDOW_SIZES)
            current = (s.width, s.height)
            nxt = sizes[(sizes.index(current) + 1) % len(sizes)] if current in sizes else sizes[1]
            values["width"], values["height"] = nxt
        elif name == "scale":
            scales = list(UI_SCALES)
            at = scales.index(s.ui_scale) if s.ui_scale in scales else 0
            values["ui_scale"] = scales[(at + 1) % len(scales)]
        elif name == "back":
            app.show(app.start_screen())
            return
        app.apply_settings(Settings(**values))

    def update(self, now: float) -> None:
        pass

    def draw(self, surface: pygame.Surface, now: float) -> None:
        app = self.app
        theme, fonts = app.theme, app.fonts
        width, height = app.size
        surface.fill(theme.felt)
        screen_title(surface, fonts, theme, "Settings", height * 0.07, height * 0.04)
        buttons = self.buttons()
        for button in buttons:
            button.draw(surface, fonts, theme, active=self.editing and button.name == "name")
        colour_button = next(b for b in buttons if b.name == "colour")
        swatch = pygame.Rect(
            colour_button.rect.right + 12,
            colour_button.rect.y + 6,
            colour_button.rect.h - 12,
            colour_button.rect.h - 12,
        )
        pygame.draw.rect(surface, SEAT_COLOURS[app.settings.colour], swatch, border_radius=4)
        if app.message:
            image = fonts.text(app.message, height * 0.028, theme.warn)
            surface.blit(image, image.get_rect(midbottom=(width / 2, height - 12)))

    def close(self) -> None:
        pass


def replay_label(path: Path) -> str:
    """A saved match as the list shows it: a practice match by its date, a network match
    (its signed log, `<date>-<time>-<table name>-<table id>.nrp`) by table and date."""
    if path.suffix != SUFFIX:
        return path.stem
    date, _, rest = path.stem.partition("-")
    clock, _, rest = rest.partition("-")
    name = rest.rpartition("-")[0] or rest
    if len(date) == 8 and len(clock) == 6:
        when = f"{date[:4]}-{date[4:6]}-{date[6:]} {clock[:2]}:{clock[2:4]}"
        return f"table {name}, {when}"
    return path.stem


class ReplayListScreen:
    """Saved matches, newest first; a click plays one back."""

    def __init__(self, app: App, folder: Path | None = None) -> None:
        self.app = app
        self.folder = folder or replays_dir()
        self.problem = ""
        try:
            found = [*self.folder.glob("*.json"), *self.folder.glob(f"*{SUFFIX}")]
            files = sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)
        except OSError:
            files = []
        self.files = files[:10]

    def buttons(self) -> list[Button]:
        width, height = self.app.size
        k = self.app.scale
        bh = int(max(34 * k, min(46 * k, height // 18)))
        items = [(str(i), replay_label(path)) for i, path in enumerate(self.files)] + [
            ("back", "Back  (Esc)")
        ]
        return column(
            items, width // 2, int(height * 0.16), int(min(640 * k, width - 40)), bh, bh // 5
        )

    def handle(self, event: pygame.event.Event, now: float) -> None:
        name = None
        if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            button = button_at(self.buttons(), event.pos)
            name = button.name if button else None
        elif event.type == pygame.KEYDOWN and event.key == pygame.K_ESCAPE:
            name = "back"
        if name == "back":
            self.app.show(self.app.start_screen())
        elif name is not None:
            path = self.files[int(name)]
            try:
                replay = load_signed_replay(path) if path.suffix == SUFFIX else load_replay(path)
            except ReplayError as exc:
                self.problem = f"{path.name}: {exc}"
                return
            from .replay_screen import ReplayScreen

            self.app.show(ReplayScreen(self.app, replay, now))

    def update(self, now: float) -> None:
        pass

    def draw(self, surface: pygame.Surface, now: float) -> None:
        app = self.app
        theme, fonts = app.theme, app.fonts
        width, height = app.size
        surface.fill(theme.felt)
        screen_title(surface, fonts, theme, "Replays", height * 0.07, height * 0.04)
        for button in self.buttons():
            button.draw(surface, fonts, theme)
        lines = (
            []
            if self.files
            else [f"No replays yet: every practice and network match is saved in {self.folder}."]
        )
        if self.problem:
            lines.append(self.problem)
        text_lines(
            surface,
            fonts,
            lines,
            width // 2,
            int(height * 0.8),
            height * 0.03,
            theme.warn if self.problem else theme.dim_text,
            centre=True,
        )

    def close(self) -> None:
        pass
