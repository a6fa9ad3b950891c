"""Drawing cards, card backs and text, with every surface cached.

Faces are drawn once per size and style (two-times supersampled, then smoothed down) and
then only blitted, which is what keeps a frame with eight layouts well under budget. The
suit pips are polygons, not font glyphs, so they look the same on every machine.
"""

from __future__ import annotations

from dataclasses import dataclass

import pygame

from nerts_p2p.game.cards import RANKS

Colour = tuple[int, int, int]


@dataclass(frozen=True)
class Theme:
    felt: Colour
    felt_dark: Colour
    text: Colour
    dim_text: Colour
    card: Colour
    card_edge: Colour
    slot: Colour
    select: Colour
    pending: Colour
    settled: Colour
    panel: Colour
    button: Colour
    button_text: Colour
    warn: Colour
    edge_width: int


NORMAL = Theme(
    felt=(24, 96, 58),
    felt_dark=(16, 70, 42),
    text=(240, 240, 230),
    dim_text=(180, 205, 185),
    card=(252, 252, 246),
    card_edge=(60, 60, 60),
    slot=(60, 140, 95),
    select=(80, 200, 255),
    pending=(255, 196, 40),
    settled=(120, 240, 120),
    panel=(20, 30, 28),
    button=(235, 225, 190),
    button_text=(30, 30, 30),
    warn=(255, 120, 90),
    edge_width=1,
)
HIGH_CONTRAST = Theme(
    felt=(0, 0, 0),
    felt_dark=(30, 30, 30),
    text=(255, 255, 255),
    dim_text=(255, 255, 0),
    card=(255, 255, 255),
    card_edge=(255, 255, 0),
    slot=(200, 200, 200),
    select=(0, 255, 255),
    pending=(255, 170, 0),
    settled=(0, 255, 0),
    panel=(0, 0, 60),
    button=(255, 255, 0),
    button_text=(0, 0, 0),
    warn=(255, 80, 80),
    edge_width=2,
)

RED: Colour = (200, 20, 30)
BLACK: Colour = (20, 20, 20)
BLUE: Colour = (20, 70, 200)
GREEN: Colour = (10, 130, 40)


def suit_colour(suit: int, *, four_colour: bool, high_contrast: bool) -> Colour:
    """Spades, hearts, diamonds, clubs; the four-colour deck gives diamonds blue and clubs
    green so a glance tells all four suits apart."""
    if four_colour:
        return (BLACK, RED, BLUE, GREEN)[suit]
    red = (220, 0, 0) if high_contrast else RED
    return (BLACK, red, red, BLACK)[suit]


def draw_pip(
    surface: pygame.Surface, suit: int, cx: float, cy: float, s: float, colour: Colour
) -> None:
    """A suit symbol of half-height `s` centred at (cx, cy)."""

    def circle(x: float, y: float, r: float) -> None:
        pygame.draw.circle(surface, colour, (round(x), round(y)), max(1, round(r)))

    def poly(points: list[tuple[float, float]]) -> None:
        pygame.draw.polygon(surface, colour, [(round(x), round(y)) for x, y in points])

    if suit == 2:  # diamonds
        poly([(cx, cy - s), (cx + 0.72 * s, cy), (cx, cy + s), (cx - 0.72 * s, cy)])
    elif suit == 1:  # hearts
        circle(cx - 0.47 * s, cy - 0.32 * s, 0.52 * s)
        circle(cx + 0.47 * s, cy - 0.32 * s, 0.52 * s)
        poly([(cx - 0.98 * s, cy - 0.18 * s), (cx + 0.98 * s, cy - 0.18 * s), (cx, cy + s)])
    elif suit == 0:  # spades
        poly([(cx, cy - s), (cx + 0.98 * s, cy + 0.22 * s), (cx - 0.98 * s, cy + 0.22 * s)])
        circle(cx - 0.47 * s, cy + 0.26 * s, 0.5 * s)
        circle(cx + 0.47 * s, cy + 0.26 * s, 0.5 * s)
        poly([(cx, cy + 0.2 * s), (cx + 0.38 * s, cy + s), (cx - 0.38 * s, cy + s)])
    else:  # clubs
        circle(cx, cy - 0.45 * s, 0.42 * s)
        circle(cx - 0.48 * s, cy + 0.15 * s, 0.42 * s)
        circle(cx + 0.48 * s, cy + 0.15 * s, 0.42 * s)
        poly([(cx, cy - 0.1 * s), (cx + 0.38 * s, cy + s), (cx - 0.38 * s, cy + s)])


def _fast(surface: pygame.Surface) -> pygame.Surface:
    """The surface in the display's pixel format (several times faster to blit)."""
    if pygame.display.get_surface() is None:
        return surface
    return surface.convert_alpha()


def drawable(text: str) -> str:
    """`text` as pygame can draw it: other peers choose the names the window shows, and
    pygame refuses a NUL character (ValueError) and a lone surrogate; control characters
    it would draw as boxes. Each is left out."""
    return "".join(c for c in text if c.isprintable())


class Fonts:
    """pygame fonts by pixel size, and rendered text cached by (text, size, colour, bold)."""

    def __init__(self) -> None:
        self._fonts: dict[tuple[int, bool], pygame.font.Font] = {}
        self._text: dict[tuple[str, int, Colour, bool], pygame.Surface] = {}

    def font(self, size: int, bold: bool = False) -> pygame.font.Font:
        size = max(8, int(size))
        key = (size, bold)
        if key not in self._fonts:
            font = pygame.font.Font(None, size)
            font.bold = bold
            self._fonts[key] = font
        return self._fonts[key]

    def text(self, text: str, size: float, colour: Colour, bold: bool = False) -> pygame.Surface:
        key = (text, int(size), colour, bold)
        surface = self._text.get(key)
        if surface is None:
            if len(self._text) > 2000:
                self._text.clear()
            surface = self.font(int(size), bold).render(drawable(text), True, colour)
            self._text[key] = surface
        return surface


RANK_LABELS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
assert len(RANK_LABELS) == len(RANKS)


class CardArt:
    """Card faces and backs of one size and style."""

    def __init__(
        self, fonts: Fonts, w: int, h: int, *, four_colour: bool, high_contrast: bool
    ) -> None:
        self.fonts = fonts
        self.w, self.h = max(8, w), max(11, h)
        self.four_colour = four_colour
        self.high_contrast = high_contrast
        self.theme = HIGH_CONTRAST if high_contrast else NORMAL
        self._faces: dict[int, pygame.Surface] = {}
        self._backs: dict[Colour, pygame.Surface] = {}

    def _blank(self, scale: int) -> tuple[pygame.Surface, int]:
        w, h = self.w * scale, self.h * scale
        surface = pygame.Surface((w, h), pygame.SRCALPHA)
        radius = max(2, min(w, h) // 10)
        pygame.draw.rect(surface, self.theme.card, (0, 0, w, h), border_radius=radius)
        edge = self.theme.edge_width * scale
        pygame.draw.rect(
            surface, self.theme.card_edge, (0, 0, w, h), width=edge, border_radius=radius
        )
        return surface, radius

    def face(self, face: int) -> pygame.Surface:
        """The face of `face` (0..51 ordinary, 52/53 jokers)."""
        cached = self._faces.get(face)
        if cached is not None:
            return cached
        scale = 2
        surface, _ = self._blank(scale)
        w, h = self.w * scale, self.h * scale
        if face >= 52:
            colour = (120, 40, 160)
            label = self.fonts.text("JOKER", h * 0.16, colour, True)
            surface.blit(label, label.get_rect(center=(w / 2, h / 2)))
            star = self.fonts.text(f"X{face - 51}", h * 0.2, colour, True)
            surface.blit(star, (w * 0.08, h * 0.04))
        else:
            suit, rank = face // 13, face % 13
            colour = suit_colour(
                suit, four_colour=self.four_colour, high_contrast=self.high_contrast
            )
            small = self.w < 44  # a small card shows rank and suit big, for reading at a glance
            rank_size = h * (0.36 if small else 0.25)
            label = self.fonts.text(RANK_LABELS[rank], rank_size, colour, True)
            surface.blit(label, (w * 0.08, h * 0.03))
            pip = w * (0.2 if small else 0.11)
            draw_pip(surface, suit, w * 0.08 + pip, h * 0.03 + rank_size * 0.82 + pip, pip, colour)
            if small:
                draw_pip(surface, suit, w * 0.62, h * 0.72, w * 0.28, colour)
            elif rank >= 10:
                letter = self.fonts.text(RANK_LABELS[rank], h * 0.5, colour, True)
                surface.blit(letter, letter.get_rect(center=(w * 0.56, h * 0.6)))
                draw_pip(surface, suit, w * 0.8, h * 0.84, w * 0.1, colour)
            else:
                draw_pip(surface, suit, w * 0.56, h * 0.6, w * 0.27, colour)
        out = _fast(pygame.transform.smoothscale(surface, (self.w, self.h)))
        self._faces[face] = out
        return out

    def warm(self) -> None:
        """Draw every face now, so no frame in play pays for drawing one."""
        for face in range(54):
            self.face(face)

    def back(self, colour: Colour) -> pygame.Surface:
        """A card back in a seat's colour: every deck has its own back (RULES.md)."""
        cached = self._backs.get(colour)
        if cached is not None:
            return cached
        surface = pygame.Surface((self.w, self.h), pygame.SRCALPHA)
        radius = max(2, min(self.w, self.h) // 10)
        pygame.draw.rect(surface, self.theme.card, (0, 0, self.w, self.h), border_radius=radius)
        inset = max(2, self.w // 14)
        inner = pygame.Rect(inset, inset, self.w - 2 * inset, self.h - 2 * inset)
        pygame.draw.rect(surface, colour, inner, border_radius=max(1, radius - 1))
        light = tuple(min(255, c + 50) for c in colour)
        step = max(4, self.w // 6)
        surface.set_clip(inner)
        for x in range(inner.left - inner.height, inner.right, step):
            pygame.draw.line(
                surface, light, (x, inner.bottom - 1), (x + inner.height, inner.top), 1
            )
        surface.set_clip(None)
        pygame.draw.rect(
            surface,
            self.theme.card_edge,
            (0, 0, self.w, self.h),
            width=self.theme.edge_width,
            border_radius=radius,
        )
        surface = _fast(surface)
        self._backs[colour] = surface
        return surface


class ArtCache:
    """CardArt by size and style (a window resize or a settings change makes new ones)."""

    def __init__(self, fonts: Fonts) -> None:
        self.fonts = fonts
        self._arts: dict[tuple[int, int, bool, bool], CardArt] = {}

    def get(self, w: float, h: float, *, four_colour: bool, high_contrast: bool) -> CardArt:
        key = (round(w), round(h), four_colour, high_contrast)
        art = self._arts.get(key)
        if art is None:
            if len(self._arts) > 24:
                self._arts.clear()
            art = CardArt(
                self.fonts, key[0], key[1], four_colour=four_colour, high_contrast=high_contrast
            )
            self._arts[key] = art
        return art
