"""What every screen offers the frame loop, and what the app offers every screen."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import pygame

from .art import ArtCache, Fonts, Theme
from .settings import Settings
from .sound import Sounds

if TYPE_CHECKING:
    from .app import Task


class Screen(Protocol):
    def handle(self, event: pygame.event.Event, now: float) -> None: ...

    def update(self, now: float) -> None: ...

    def draw(self, surface: pygame.Surface, now: float) -> None: ...

    def close(self) -> None:
        """The screen is left (or the window closes): leave tables, save what is due."""


class App(Protocol):
    fonts: Fonts
    arts: ArtCache
    settings: Settings
    sounds: Sounds
    message: str
    interface: str
    #: Where network tables keep this machine's key, their crash stores and replays (the
    #: user's data directory; None keeps nothing).
    data_dir: Path | None
    #: The UI scale (2 on a high-DPI display): fixed pixel sizes are multiplied by it.
    scale: float
    #: The screen shown now.
    screen: Screen

    @property
    def size(self) -> tuple[int, int]: ...

    @property
    def theme(self) -> Theme: ...

    def show(self, screen: Screen) -> None: ...

    def quit(self) -> None: ...

    def apply_settings(self, settings: Settings) -> None: ...

    def start_screen(self) -> Screen: ...

    def spawn(
        self,
        work: Callable[[], Awaitable[None]],
        on_error: Callable[[str], None] | None = None,
    ) -> Task: ...
