"""Buttons, panels and text lines shared by the screens."""

from __future__ import annotations

from dataclasses import dataclass

import pygame

from .art import Colour, Fonts, Theme


@dataclass(frozen=True)
class Button:
    name: str
    label: str
    rect: pygame.Rect
    enabled: bool = True

    def draw(
        self, surface: pygame.Surface, fonts: Fonts, theme: Theme, *, active: bool = False
    ) -> None:
        fill = theme.button if self.enabled else theme.felt_dark
        pygame.draw.rect(surface, fill, self.rect, border_radius=10)
        if active:
            pygame.draw.rect(surface, theme.select, self.rect, 3, border_radius=10)
        colour = theme.button_text if self.enabled else theme.dim_text
        size = self.rect.h * 0.45
        text = fonts.text(self.label, size, colour, True)
        room = self.rect.w - self.rect.h * 0.5
        if text.get_width() > room:
            # A long label (a table's row with a long name and its notes) is set smaller
            # rather than spilling past the button's edges.
            text = fonts.text(self.label, size * room / text.get_width(), colour, True)
        surface.blit(text, text.get_rect(center=self.rect.center))


def button_at(buttons: list[Button], pos: tuple[int, int]) -> Button | None:
    for button in buttons:
        if button.enabled and button.rect.collidepoint(pos):
            return button
    return None


def column(
    names_labels: list[tuple[str, str]], centre_x: int, top: int, width: int, height: int, gap: int
) -> list[Button]:
    return [
        Button(
            name, label, pygame.Rect(centre_x - width // 2, top + i * (height + gap), width, height)
        )
        for i, (name, label) in enumerate(names_labels)
    ]


def menu_column(
    names_labels: list[tuple[str, str]],
    size: tuple[int, int],
    scale: float,
    *,
    top: float,
    max_width: int,
    max_height: int,
) -> list[Button]:
    """A centred column of buttons sharing 70% of the window's height: as tall as fits, at
    most `max_height` (and never under 28 points), at most `max_width` wide (points, times
    the UI scale)."""
    width, height = size
    per = height * 0.7 / len(names_labels)
    button_height = int(max(28 * scale, min(max_height * scale, per * 0.8)))
    gap = int(max(4, per - button_height))
    return column(
        names_labels,
        width // 2,
        int(height * top),
        int(min(max_width * scale, width - 40)),
        button_height,
        gap,
    )


def screen_title(
    surface: pygame.Surface, fonts: Fonts, theme: Theme, text: str, size: float, top: float
) -> pygame.Surface:
    """A screen's bold title, centred at the top; returned so what follows can sit below it."""
    title = fonts.text(text, size, theme.text, True)
    surface.blit(title, title.get_rect(midtop=(surface.get_width() / 2, top)))
    return title


_SHADES: dict[tuple[tuple[int, int], Colour, int], pygame.Surface] = {}


def translucent(size: tuple[int, int], colour: Colour, alpha: int) -> pygame.Surface:
    """A see-through rectangle, made once per size and colour (panels are drawn every frame)."""
    key = (size, colour, alpha)
    shade = _SHADES.get(key)
    if shade is None:
        if len(_SHADES) > 64:
            _SHADES.clear()
        shade = pygame.Surface(size, pygame.SRCALPHA)
        shade.fill((*colour, alpha))
        _SHADES[key] = shade
    return shade


def panel(surface: pygame.Surface, rect: pygame.Rect, colour: Colour, alpha: int = 225) -> None:
    surface.blit(translucent(rect.size, colour, alpha), rect.topleft)


def text_lines(
    surface: pygame.Surface,
    fonts: Fonts,
    lines: list[str],
    x: int,
    y: int,
    size: float,
    colour: Colour,
    *,
    centre: bool = False,
) -> int:
    """Draws lines down from y; returns the y below the last."""
    for line in lines:
        text = fonts.text(line, size, colour)
        if centre:
            surface.blit(text, text.get_rect(midtop=(x, y)))
        else:
            surface.blit(text, (x, y))
        y += int(size * 1.05)
    return y


@dataclass
class TextField:
    """A line of text typed into a button (click it, type, Enter or a click elsewhere ends)."""

    text: str
    max_len: int = 24
    digits_only: bool = False
    editing: bool = False
    #: A passphrase: shown as stars.
    secret: bool = False

    def key(self, event: pygame.event.Event) -> bool:
        """Take a key while editing; True if it was used."""
        if not self.editing or event.type != pygame.KEYDOWN:
            return False
        if event.key in (pygame.K_RETURN, pygame.K_KP_ENTER, pygame.K_ESCAPE, pygame.K_TAB):
            self.editing = False
        elif event.key == pygame.K_BACKSPACE:
            self.text = self.text[:-1]
        elif (
            event.unicode
            and event.unicode.isprintable()
            and len(self.text) < self.max_len
            and (event.unicode.isdigit() or not self.digits_only)
        ):
            self.text += event.unicode
        return True

    def shown(self) -> str:
        text = "*" * len(self.text) if self.secret else self.text
        return text + ("_" if self.editing else "")
