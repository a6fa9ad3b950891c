"""Drawing a table: felt, every seat's layout, the foundations, moving cards.

The renderer reads a `TableView` and a `TableLayout` and draws; it keeps only what the eye
needs between frames: where each card was last drawn (so a card that moves, a bot's or a
lost race's, glides to its new place), and which of our cards just settled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import ClassVar

import pygame

from nerts_p2p.game.cards import CARD_MASK, face_of
from nerts_p2p.game.state import GameState, SeatState

from .art import HIGH_CONTRAST, NORMAL, ArtCache, CardArt, Colour, Fonts, Theme
from .intents import Drag, Selection
from .layout import (
    CardPlace,
    Rect,
    SeatLayout,
    TableLayout,
    foundation_order,
)
from .session import TableView
from .widgets import translucent

GLIDE = 0.14  # seconds a moved card takes to reach its new place
RACE_BACK = 0.45  # a card that lost a race goes back slowly enough to be seen
SETTLE_FLASH = 0.5


def _rect(r: Rect) -> pygame.Rect:
    return pygame.Rect(round(r.x), round(r.y), round(r.w), round(r.h))


def cover(r: Rect) -> pygame.Rect:
    """The whole pixels `r` touches (so boxes side by side leave no pixel between them)."""
    x, y = math.floor(r.x), math.floor(r.y)
    return pygame.Rect(x, y, math.ceil(r.right) - x, math.ceil(r.bottom) - y)


def felt_regions(layout: TableLayout) -> list[pygame.Rect]:
    """The parts of the window outside every seat's box: the centre, the status line, and
    (playing) the column of buttons beside our own layout. With the seats' boxes they
    cover the whole window."""
    screen = pygame.Rect(0, 0, layout.width, layout.height)
    regions = [cover(layout.centre), cover(layout.status)]
    if layout.my_seat is not None:
        own = layout.seats[layout.my_seat].box
        regions.append(cover(Rect(own.right, own.y, layout.width - own.right, own.h)))
    return [r.clip(screen) for r in regions]


@dataclass
class Glide:
    start: tuple[float, float]
    began: float
    seconds: float


@dataclass
class TableRenderer:
    fonts: Fonts
    arts: ArtCache
    four_colour: bool = False
    high_contrast: bool = False
    _last_at: dict[int, tuple[float, float]] = field(default_factory=dict)
    _glides: dict[int, Glide] = field(default_factory=dict)
    _slow: dict[int, float] = field(default_factory=dict)  # card -> glide seconds next time
    _pending_before: frozenset[int] = frozenset()
    _settled: dict[int, float] = field(default_factory=dict)
    _background: tuple[tuple[int, int, bool], pygame.Surface] | None = None
    #: seat -> (its state, colour, name, its picture) while the seat holds still.
    _seats: dict[int, tuple[SeatState, Colour, str, pygame.Surface]] = field(default_factory=dict)

    @property
    def theme(self) -> Theme:
        return HIGH_CONTRAST if self.high_contrast else NORMAL

    def art(self, w: float, h: float) -> CardArt:
        return self.arts.get(w, h, four_colour=self.four_colour, high_contrast=self.high_contrast)

    def send_back(self, card: int) -> None:
        """The next move of `card` is a lost race going back: glide slowly."""
        self._slow[card & CARD_MASK] = RACE_BACK

    def new_layout(self) -> None:
        """The window was laid out anew (a resize): cards jump to their new places, they
        do not glide across the table."""
        self._last_at.clear()
        self._glides.clear()
        self._seats.clear()

    def dropped_at(self, card: int, x: float, y: float) -> None:
        """A card was let go at (x, y): if it does not go anywhere, it glides back from there."""
        self._last_at[card & CARD_MASK] = (x, y)

    # --- the frame ---------------------------------------------------------------------

    def draw(
        self,
        surface: pygame.Surface,
        layout: TableLayout,
        view: TableView,
        places: list[CardPlace],
        colours: list[Colour],
        now: float,
        *,
        selection: Selection | None = None,
        drag: Drag | None = None,
    ) -> None:
        state = view.state
        felt = self._felt(layout)
        if state is None:
            surface.blit(felt, (0, 0))
            return
        # Every pixel is painted each frame: the felt between the seats here, and each
        # seat's box below (from its cached picture, or felt and cards drawn live).
        for region in felt_regions(layout):
            surface.blit(felt, region.topleft, region)
        self._note_settled(view.pending, now)
        self._foundation_slots(surface, layout, state)
        held = drag.selection if drag is not None else None
        by_seat: dict[int, list[CardPlace]] = {}
        for place in places:
            by_seat.setdefault(place.pile.seat, []).append(place)
        drawn: dict[int, tuple[float, float]] = {}
        dragged: list[CardPlace] = []
        for sl in layout.seats:
            if sl.seat >= len(state.seats):
                continue
            seat_places = by_seat.get(sl.seat, [])
            at = [self._glide_to(place, now) for place in seat_places]
            for place in seat_places:
                if place.face_up:
                    drawn[place.entry & CARD_MASK] = (place.rect.x, place.rect.y)
            box = cover(sl.box)
            if self._still(sl.seat, seat_places, at, view, selection, held):
                # Nothing moves or is marked in this seat: its picture from the cache.
                image = self._seat_image(layout, sl, view, state, seat_places, colours)
                surface.blit(image, box.topleft)
                continue
            surface.blit(felt, box.topleft, box)
            self._label(surface, sl, view, state, colours)
            for place, (x, y) in zip(seat_places, at, strict=True):
                if _takes(held, place):
                    dragged.append(place)
                    continue
                self._card_marked(surface, place, x, y, view, colours, now, selection)
            self._seat_counts(surface, sl, state)
        bases = foundation_order(state)
        for place in by_seat.get(-1, []):
            if _takes(held, place):
                dragged.append(place)
                continue
            x, y = self._glide_to(place, now)
            drawn[place.entry & CARD_MASK] = (place.rect.x, place.rect.y)
            rect = self._card_marked(surface, place, x, y, view, colours, now, selection)
            if state.foundations[bases[place.pile.number]].complete:
                self._done(surface, rect)
        if drag is not None and drag.moving and dragged:
            ox, oy = drag.card_origin
            first = dragged[0].rect
            for place in dragged:
                x = ox + place.rect.x - first.x
                y = oy + place.rect.y - first.y
                self._card(surface, place, x, y, colours)
                drawn[place.entry & CARD_MASK] = (x, y)
        elif dragged:
            for place in dragged:
                self._card(surface, place, place.rect.x, place.rect.y, colours)
                drawn[place.entry & CARD_MASK] = (place.rect.x, place.rect.y)
        self._last_at = {**self._last_at, **drawn} if len(self._last_at) < 2000 else drawn

    def _card_marked(
        self,
        surface: pygame.Surface,
        place: CardPlace,
        x: float,
        y: float,
        view: TableView,
        colours: list[Colour],
        now: float,
        selection: Selection | None,
    ) -> pygame.Rect:
        """A card with its frame: pending (pulsing), just settled, or selected."""
        theme = self.theme
        self._card(surface, place, x, y, colours)
        rect = pygame.Rect(round(x), round(y), round(place.rect.w), round(place.rect.h))
        card = place.entry & CARD_MASK
        if place.face_up and card in view.pending:
            self._pending_mark(surface, rect, now)
        elif place.face_up and card in self._settled:
            pygame.draw.rect(surface, theme.settled, rect.inflate(4, 4), 3, border_radius=6)
        if _takes(selection, place):
            pygame.draw.rect(surface, theme.select, rect.inflate(4, 4), 3, border_radius=6)
        return rect

    def _still(
        self,
        seat: int,
        places: list[CardPlace],
        at: list[tuple[float, float]],
        view: TableView,
        selection: Selection | None,
        held: Selection | None,
    ) -> bool:
        """Whether the seat looks as a still picture this frame: no card on its way, none
        pending or just settled, nothing of it selected or dragged."""
        if (selection is not None and selection.pile.seat == seat) or (
            held is not None and held.pile.seat == seat
        ):
            return False
        for place, (x, y) in zip(places, at, strict=True):
            if x != place.rect.x or y != place.rect.y:
                return False
            if place.face_up:
                card = place.entry & CARD_MASK
                if card in view.pending or card in self._settled:
                    return False
        return True

    def _seat_image(
        self,
        layout: TableLayout,
        sl: SeatLayout,
        view: TableView,
        state: GameState,
        places: list[CardPlace],
        colours: list[Colour],
    ) -> pygame.Surface:
        """The seat's box as drawn (felt, label, cards, counts), kept while it holds."""
        seat = state.seats[sl.seat]
        colour = colours[sl.seat % len(colours)]
        name = self._seat_name(sl.seat, view)
        cached = self._seats.get(sl.seat)
        if (
            cached is not None
            and (cached[0] is seat or cached[0] == seat)
            and cached[1:3] == (colour, name)
        ):
            return cached[3]
        box = cover(sl.box)
        image = self._felt(layout).subsurface(box).copy()
        dx, dy = -box.x, -box.y
        moved = _moved_layout(sl, dx, dy)
        self._label(image, moved, view, state, colours)
        for place in places:
            self._card(image, place, place.rect.x + dx, place.rect.y + dy, colours)
        self._seat_counts(image, moved, state)
        self._seats[sl.seat] = (seat, colour, name, image)
        return image

    def _glide_to(self, place: CardPlace, now: float) -> tuple[float, float]:
        """Where to draw a card this frame: on its way from where it was last seen."""
        target = (place.rect.x, place.rect.y)
        if not place.face_up:
            return target
        card = place.entry & CARD_MASK
        glide = self._glides.get(card)
        last = self._last_at.get(card)
        moved = last is not None and (abs(last[0] - target[0]) > 1 or abs(last[1] - target[1]) > 1)
        if moved and last is not None:
            # The card is somewhere new: it glides there from where it is on screen now.
            start = self._position(glide, target, now) if glide else last
            glide = Glide(start, now, self._slow.pop(card, GLIDE))
            self._glides[card] = glide
        if glide is None:
            return target
        at = self._position(glide, target, now)
        if now - glide.began >= glide.seconds:
            del self._glides[card]
        return at

    @staticmethod
    def _position(glide: Glide, target: tuple[float, float], now: float) -> tuple[float, float]:
        t = min(1.0, (now - glide.began) / glide.seconds) if glide.seconds > 0 else 1.0
        ease = 1 - (1 - t) ** 3
        sx, sy = glide.start
        return sx + (target[0] - sx) * ease, sy + (target[1] - sy) * ease

    def _note_settled(self, pending: frozenset[int], now: float) -> None:
        for card in self._pending_before - pending:
            self._settled[card] = now
        self._pending_before = pending
        for card, at in list(self._settled.items()):
            if now - at > SETTLE_FLASH:
                del self._settled[card]

    # --- pieces --------------------------------------------------------------------------

    def _felt(self, layout: TableLayout) -> pygame.Surface:
        key = (layout.width, layout.height, self.high_contrast)
        if self._background is not None and self._background[0] == key:
            return self._background[1]
        theme = self.theme
        surface = pygame.Surface((layout.width, layout.height))
        surface.fill(theme.felt)
        pygame.draw.rect(surface, theme.felt_dark, _rect(layout.centre))
        for sl in layout.seats:
            pygame.draw.rect(
                surface, theme.felt_dark, _rect(sl.box).inflate(-4, -4), 1, border_radius=8
            )
            for rect in (sl.nerts, sl.stock, Rect(sl.waste.x, sl.waste.y, sl.card_w, sl.card_h)):
                self._slot(surface, _rect(rect))
            for region in sl.work:
                self._slot(surface, _rect(Rect(region.x, region.y, sl.card_w, sl.card_h)))
        for rect in layout.foundation_slots:
            self._slot(surface, _rect(rect), faint=True)
        for name, rect in layout.buttons.items():
            self._button(surface, _rect(rect), name)
        if pygame.display.get_surface() is not None:
            surface = surface.convert()
        self._background = (key, surface)
        return surface

    def _slot(self, surface: pygame.Surface, rect: pygame.Rect, faint: bool = False) -> None:
        colour = self.theme.slot if not faint else self.theme.felt
        if faint:
            colour = tuple(min(255, c + 18) for c in self.theme.felt_dark)  # type: ignore[assignment]
        pygame.draw.rect(surface, colour, rect, 2, border_radius=max(2, rect.w // 10))

    BUTTON_LABELS: ClassVar[dict[str, str]] = {
        "nerts": "Nerts! (C)",
        "stuck": "Stuck (S)",
        "help": "Keys (H)",
        "leave": "Leave (Q)",
    }

    def _button(self, surface: pygame.Surface, rect: pygame.Rect, name: str) -> None:
        theme = self.theme
        pygame.draw.rect(surface, theme.button, rect, border_radius=8)
        label = self.fonts.text(
            self.BUTTON_LABELS.get(name, name), rect.h * 0.46, theme.button_text, True
        )
        surface.blit(label, label.get_rect(center=rect.center))

    def _card(
        self, surface: pygame.Surface, place: CardPlace, x: float, y: float, colours: list[Colour]
    ) -> None:
        art = self.art(place.rect.w, place.rect.h)
        if place.face_up:
            image = art.face(face_of(place.entry))
        else:
            owner = max(0, place.pile.seat)
            image = art.back(colours[owner % len(colours)])
        surface.blit(image, (round(x), round(y)))

    def _pending_mark(self, surface: pygame.Surface, rect: pygame.Rect, now: float) -> None:
        # A pending card pulses: it is played here, but a race could still send it back.
        pulse = 2 + int(2 * (1 + ((now * 4) % 2 - 1) ** 2))
        pygame.draw.rect(surface, self.theme.pending, rect.inflate(4, 4), pulse, border_radius=6)

    def _done(self, surface: pygame.Surface, rect: pygame.Rect) -> None:
        surface.blit(translucent(rect.size, (0, 0, 0), 110), rect.topleft)
        w, h = rect.w, rect.h
        points = [
            (rect.x + w * 0.25, rect.y + h * 0.55),
            (rect.x + w * 0.43, rect.y + h * 0.72),
            (rect.x + w * 0.78, rect.y + h * 0.32),
        ]
        pygame.draw.lines(surface, self.theme.settled, False, points, max(2, w // 12))

    @staticmethod
    def _seat_name(seat: int, view: TableView) -> str:
        name = view.names[seat] if seat < len(view.names) else f"seat {seat}"
        return name + " (you)" if seat == view.my_seat else name

    def _label(
        self,
        surface: pygame.Surface,
        sl: SeatLayout,
        view: TableView,
        state: GameState,
        colours: list[Colour],
    ) -> None:
        """The seat's colour, name, live Nerts count and STUCK tag."""
        theme = self.theme
        seat = sl.seat
        s = state.seats[seat]
        label = _rect(sl.label)
        swatch = pygame.Rect(label.x + 6, label.y + 3, label.h - 6, label.h - 6)
        pygame.draw.rect(surface, colours[seat % len(colours)], swatch, border_radius=3)
        size = label.h * 0.9
        text = self.fonts.text(self._seat_name(seat, view), size, theme.text, True)
        surface.blit(text, (swatch.right + 6, label.y + (label.h - text.get_height()) / 2))
        x = swatch.right + 14 + text.get_width()
        info = self.fonts.text(f"Nerts {s.nerts_count}", size, theme.dim_text)
        surface.blit(info, (x, label.y + (label.h - info.get_height()) / 2))
        if s.stuck:
            tag = self.fonts.text("STUCK", size, theme.warn, True)
            surface.blit(
                tag, (x + info.get_width() + 12, label.y + (label.h - tag.get_height()) / 2)
            )

    def _seat_counts(self, surface: pygame.Surface, sl: SeatLayout, state: GameState) -> None:
        """Badges: cards in the seat's Nerts pile and stock (the big layout's are larger)."""
        theme = self.theme
        s = state.seats[sl.seat]
        size = max(12.0, sl.card_h * (0.2 if sl.big else 0.3))
        for rect, count in ((sl.nerts, s.nerts_count), (sl.stock, len(s.stock))):
            text = self.fonts.text(str(count), size, theme.text, True)
            box = text.get_rect()
            box.midtop = (round(rect.x + rect.w / 2), round(rect.bottom + 2))
            if sl.big:
                pad = box.inflate(10, 2)
                pygame.draw.rect(surface, theme.panel, pad, border_radius=6)
            surface.blit(text, box)

    def _foundation_slots(
        self, surface: pygame.Surface, layout: TableLayout, state: GameState
    ) -> None:
        if not state.foundations:
            theme = self.theme
            text = self.fonts.text(
                "Foundations: play an Ace here to start one", layout.centre.h * 0.12, theme.dim_text
            )
            surface.blit(
                text,
                text.get_rect(
                    center=(round(layout.centre.center[0]), round(layout.centre.center[1]))
                ),
            )


def _takes(selection: Selection | None, place: CardPlace) -> bool:
    """Whether `place` is one of the selected cards (a work pile run: the card and those on it)."""
    return selection is not None and place.pile == selection.pile and place.depth >= selection.depth


def _moved_layout(sl: SeatLayout, dx: float, dy: float) -> SeatLayout:
    """The seat's layout shifted by (dx, dy): to draw it into a picture of its own box."""
    return replace(
        sl,
        box=sl.box.moved(dx, dy),
        label=sl.label.moved(dx, dy),
        nerts=sl.nerts.moved(dx, dy),
        stock=sl.stock.moved(dx, dy),
        waste=sl.waste.moved(dx, dy),
        work=tuple(r.moved(dx, dy) for r in sl.work),
    )
