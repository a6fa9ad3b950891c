"""Where everything goes on screen: pure geometry, no pygame, tested without a window.

`table_layout` places every seat's layout for a window size: our own large at the bottom,
the others smaller in rows at the top (or, watching, every seat at one size above and below
the centre), and the shared foundations in the centre. `card_places` lists where each card
of a state is drawn, and the same list answers hit-testing (`hit`), so what is under the
mouse is exactly what was drawn there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from nerts_p2p.game.state import GameState, SeatState

CARD_RATIO = 1.4  # height / width

NERTS = "nerts"
STOCK = "stock"
WASTE = "waste"
WORK = "work"
FOUNDATION = "foundation"
CENTRE = "centre"  # the empty part of the centre: a new foundation goes here
BUTTON = "button"


class Rect(NamedTuple):
    x: float
    y: float
    w: float
    h: float

    def contains(self, px: float, py: float) -> bool:
        return self.x <= px < self.x + self.w and self.y <= py < self.y + self.h

    @property
    def right(self) -> float:
        return self.x + self.w

    @property
    def bottom(self) -> float:
        return self.y + self.h

    @property
    def center(self) -> tuple[float, float]:
        return self.x + self.w / 2, self.y + self.h / 2

    def moved(self, dx: float, dy: float) -> Rect:
        return Rect(self.x + dx, self.y + dy, self.w, self.h)


class PileRef(NamedTuple):
    """A pile on the table: a seat's nerts/stock/waste/work pile, a foundation slot (seat
    -1), the empty centre, or a button (its name in `name`)."""

    seat: int
    kind: str
    number: int = 0
    name: str = ""


class CardPlace(NamedTuple):
    entry: int  # the pile entry (a card, a joker with its face), or a slot when face down
    face_up: bool
    rect: Rect
    pile: PileRef
    depth: int  # position in its pile, 0 = bottom


@dataclass(frozen=True)
class SeatLayout:
    seat: int
    box: Rect
    card_w: float
    card_h: float
    big: bool
    label: Rect
    nerts: Rect
    stock: Rect
    waste: Rect
    work: tuple[Rect, ...]  # each pile's region: cards fan downwards inside it
    fan: float  # the ideal vertical step between the cards of a work pile
    waste_step: float  # horizontal step between the turned cards shown on the waste

    def work_step(self, pile: int, count: int) -> float:
        """The fan step that keeps `count` cards inside the pile's region."""
        if count <= 1:
            return self.fan
        region = self.work[pile]
        return max(2.0, min(self.fan, (region.h - self.card_h) / (count - 1)))


@dataclass(frozen=True)
class TableLayout:
    width: int
    height: int
    my_seat: int | None
    seats: tuple[SeatLayout, ...]  # by seat number
    centre: Rect
    foundation_slots: tuple[Rect, ...]
    foundation_w: float
    foundation_h: float
    buttons: dict[str, Rect]
    status: Rect  # a line for the clock, round and announcements

    def seat_layout(self, seat: int) -> SeatLayout:
        return self.seats[seat]


def _seat_in_box(seat: int, box: Rect, work_piles: int, *, big: bool) -> SeatLayout:
    """One seat's layout inside `box`: Nerts pile, work piles, then stock and waste."""
    label_h = max(14.0, min(26.0, box.h * 0.11))
    units = 1 + 0.3 + work_piles * 1.12 + 0.3 + 1 + 0.15 + 1.5
    # The work piles need room to fan: a card and about 1.1 more card heights.
    fan_room = 2.15 if big else 1.75
    card_w = min(box.w / (units + 0.2), (box.h - label_h - 6) / (CARD_RATIO * fan_room))
    card_w = max(12.0, card_w)
    card_h = card_w * CARD_RATIO
    pad = card_w * 0.1
    x = box.x + pad
    y = box.y + label_h + 4
    label = Rect(box.x, box.y, box.w, label_h)
    nerts = Rect(x, y, card_w, card_h)
    x += card_w * 1.3
    region_h = box.bottom - y - 2
    work = []
    for _ in range(work_piles):
        work.append(Rect(x, y, card_w, region_h))
        x += card_w * 1.12
    x += card_w * 0.18
    stock = Rect(x, y, card_w, card_h)
    x += card_w * 1.15
    waste = Rect(x, y, card_w * 1.5, card_h)
    fan = card_h * (0.24 if big else 0.2)
    return SeatLayout(
        seat, box, card_w, card_h, big, label, nerts, stock, waste, tuple(work), fan, card_w * 0.25
    )


def _rows(count: int, per_row: int) -> list[int]:
    """How many boxes go in each row, as even as possible."""
    if count == 0:
        return []
    rows = math.ceil(count / per_row)
    base, extra = divmod(count, rows)
    return [base + (1 if r < extra else 0) for r in range(rows)]


def _boxes(area: Rect, count: int, per_row: int) -> list[Rect]:
    out: list[Rect] = []
    rows = _rows(count, per_row)
    if not rows:
        return out
    row_h = area.h / len(rows)
    for r, n in enumerate(rows):
        w = area.w / n
        out.extend(Rect(area.x + i * w, area.y + r * row_h, w, row_h) for i in range(n))
    return out


def _foundation_grid(band: Rect, seats: int) -> tuple[tuple[Rect, ...], float, float]:
    slots = 4 * seats
    rows = 2 if slots <= 16 else (3 if band.h > band.w / 6 else 2)
    cols = math.ceil(slots / rows)
    fw = min(band.w / (cols * 1.12 + 0.2), band.h / (rows * CARD_RATIO * 1.08 + 0.1))
    fh = fw * CARD_RATIO
    grid_w = cols * fw * 1.12 - fw * 0.12
    grid_h = rows * fh * 1.08 - fh * 0.08
    x0 = band.x + (band.w - grid_w) / 2
    y0 = band.y + (band.h - grid_h) / 2
    rects = [
        Rect(x0 + (i % cols) * fw * 1.12, y0 + (i // cols) * fh * 1.08, fw, fh)
        for i in range(slots)
    ]
    return tuple(rects), fw, fh


def table_layout(
    width: int,
    height: int,
    seats: int,
    my_seat: int | None,
    work_piles: int = 4,
    *,
    scale: float = 1.0,
) -> TableLayout:
    """The whole screen for `seats` seats. `my_seat` None: the spectator's view.

    `scale` is the UI scale (2 on a high-DPI display): the table is laid out for a window
    of `width / scale` by `height / scale` and every place multiplied by `scale`, so text
    sizes, buttons and the smallest cards are as large to the eye as at scale 1."""
    if scale <= 0:
        raise ValueError(f"the UI scale must be positive, got {scale}")
    if scale == 1:
        return _table_layout(width, height, seats, my_seat, work_piles)
    logical = _table_layout(width / scale, height / scale, seats, my_seat, work_piles)
    return scaled_layout(
        logical, scale, max(int(width), logical.width), max(int(height), logical.height)
    )


def scaled_layout(layout: TableLayout, scale: float, width: int, height: int) -> TableLayout:
    """`layout` with every place and size multiplied by `scale`."""

    def r(rect: Rect) -> Rect:
        return Rect(rect.x * scale, rect.y * scale, rect.w * scale, rect.h * scale)

    seats = tuple(
        SeatLayout(
            sl.seat,
            r(sl.box),
            sl.card_w * scale,
            sl.card_h * scale,
            sl.big,
            r(sl.label),
            r(sl.nerts),
            r(sl.stock),
            r(sl.waste),
            tuple(r(w) for w in sl.work),
            sl.fan * scale,
            sl.waste_step * scale,
        )
        for sl in layout.seats
    )
    return TableLayout(
        width,
        height,
        layout.my_seat,
        seats,
        r(layout.centre),
        tuple(r(f) for f in layout.foundation_slots),
        layout.foundation_w * scale,
        layout.foundation_h * scale,
        {name: r(b) for name, b in layout.buttons.items()},
        r(layout.status),
    )


def _table_layout(
    width: float, height: float, seats: int, my_seat: int | None, work_piles: int
) -> TableLayout:
    # Floats: at a UI scale the logical size need not be whole pixels.
    width, height = max(320.0, float(width)), max(240.0, float(height))
    status_h = max(18.0, height * 0.03)
    status = Rect(0, height - status_h, width, status_h)
    usable_h = height - status_h
    boxes: dict[int, Rect] = {}
    buttons: dict[str, Rect] = {}
    if my_seat is None:
        # Every seat at one size: half above the centre, half below.
        top_n = math.ceil(seats / 2)
        per_row = max(top_n, 1)
        band_h = usable_h * 0.36
        top = _boxes(Rect(0, 0, width, band_h), top_n, per_row)
        bottom = _boxes(Rect(0, usable_h - band_h, width, band_h), seats - top_n, per_row)
        for seat, box in enumerate(top + bottom):
            boxes[seat] = box
        centre = Rect(0, band_h, width, usable_h - 2 * band_h)
        big = False
    else:
        others = [s for s in range(seats) if s != my_seat]
        per_row = 4
        rows = len(_rows(len(others), per_row))
        own_h = usable_h * (0.44 if rows <= 1 else 0.4)
        top_h = usable_h * (0.25 if rows <= 1 else 0.38)
        button_w = max(90.0, width * 0.1)
        boxes[my_seat] = Rect(0, usable_h - own_h, width - button_w, own_h)
        for seat, box in zip(
            others, _boxes(Rect(0, 0, width, top_h), len(others), per_row), strict=True
        ):
            boxes[seat] = box
        centre = Rect(0, top_h, width, usable_h - own_h - top_h)
        bx = width - button_w + 6
        bh = min(48.0, own_h / 4.5)
        by = usable_h - own_h + 8
        for n, name in enumerate(("nerts", "stuck", "help", "leave")):
            buttons[name] = Rect(bx, by + n * (bh + 8), button_w - 14, bh)
        big = True
    layouts = tuple(
        _seat_in_box(s, boxes[s], work_piles, big=big and s == my_seat) for s in range(seats)
    )
    slots, fw, fh = _foundation_grid(
        Rect(centre.x + 8, centre.y + 4, centre.w - 16, centre.h - 8), seats
    )
    return TableLayout(
        round(width), round(height), my_seat, layouts, centre, slots, fw, fh, buttons, status
    )


# --- where the cards of a state are ---------------------------------------------------------


def foundation_order(state: GameState) -> list[int]:
    """Foundation bases in the order their piles were started (the state's dict keeps it),
    so a pile keeps its place in the centre while the round goes on."""
    return list(state.foundations)


def card_places(layout: TableLayout, state: GameState) -> list[CardPlace]:
    """Every card drawn on the table, bottom-most first (later ones are drawn on top)."""
    out: list[CardPlace] = []
    for seat_no, seat in enumerate(state.seats[: len(layout.seats)]):
        out.extend(seat_places(layout.seats[seat_no], seat))
    out.extend(foundation_places(layout, state))
    return out


def seat_places(sl: SeatLayout, seat: SeatState) -> list[CardPlace]:
    """The cards of one seat's layout, bottom-most first."""
    seat_no = sl.seat
    out: list[CardPlace] = []
    # The Nerts pile: only the top matters on screen; the count is drawn beside it.
    if seat.nerts_up:
        out.append(
            CardPlace(
                seat.nerts_up[-1], True, sl.nerts, PileRef(seat_no, NERTS), seat.nerts_count - 1
            )
        )
    elif seat.nerts_hidden:
        out.append(
            CardPlace(
                seat.nerts_hidden[-1],
                False,
                sl.nerts,
                PileRef(seat_no, NERTS),
                seat.nerts_count - 1,
            )
        )
    if seat.stock:
        out.append(CardPlace(seat.stock[0], False, sl.stock, PileRef(seat_no, STOCK), 0))
    shown = seat.waste[-3:]
    base = len(seat.waste) - len(shown)
    for i, entry in enumerate(shown):
        rect = Rect(sl.waste.x + i * sl.waste_step, sl.waste.y, sl.card_w, sl.card_h)
        out.append(CardPlace(entry, True, rect, PileRef(seat_no, WASTE), base + i))
    for k, pile in enumerate(seat.work):
        if k >= len(sl.work):
            break
        step = sl.work_step(k, len(pile))
        region = sl.work[k]
        for i, entry in enumerate(pile):
            rect = Rect(region.x, region.y + i * step, sl.card_w, sl.card_h)
            out.append(CardPlace(entry, True, rect, PileRef(seat_no, WORK, k), i))
    return out


def foundation_places(layout: TableLayout, state: GameState) -> list[CardPlace]:
    """The top card of each foundation, in its slot in the centre."""
    out: list[CardPlace] = []
    for slot, base in enumerate(foundation_order(state)):
        if slot >= len(layout.foundation_slots):
            break
        foundation = state.foundations[base]
        if foundation.cards:
            out.append(
                CardPlace(
                    foundation.cards[-1],
                    True,
                    layout.foundation_slots[slot],
                    PileRef(-1, FOUNDATION, slot),
                    len(foundation.cards) - 1,
                )
            )
    return out


class PlaceCache:
    """`card_places` for frame after frame: a seat whose layout did not change since the
    last frame keeps its places (a move changes one seat and the foundations)."""

    def __init__(self) -> None:
        self._layout: TableLayout | None = None
        self._seats: dict[int, tuple[SeatState, list[CardPlace]]] = {}

    def places(self, layout: TableLayout, state: GameState) -> list[CardPlace]:
        if layout is not self._layout:
            self._layout = layout
            self._seats.clear()
        out: list[CardPlace] = []
        for seat_no, seat in enumerate(state.seats[: len(layout.seats)]):
            cached = self._seats.get(seat_no)
            if cached is None or (cached[0] is not seat and cached[0] != seat):
                cached = (seat, seat_places(layout.seats[seat_no], seat))
                self._seats[seat_no] = cached
            out.extend(cached[1])
        out.extend(foundation_places(layout, state))
        return out


class Hit(NamedTuple):
    pile: PileRef
    depth: int | None  # which card of the pile (None: the pile's empty place or a button)


def pile_rect(layout: TableLayout, pile: PileRef) -> Rect | None:
    """The place of a pile (a work pile: its first card's place)."""
    if pile.kind == FOUNDATION:
        slots = layout.foundation_slots
        return slots[pile.number] if 0 <= pile.number < len(slots) else None
    if pile.kind == CENTRE:
        return layout.centre
    if pile.kind == BUTTON:
        return layout.buttons.get(pile.name)
    if not 0 <= pile.seat < len(layout.seats):
        return None
    sl = layout.seats[pile.seat]
    if pile.kind == WORK:
        if not 0 <= pile.number < len(sl.work):
            return None
        region = sl.work[pile.number]
        return Rect(region.x, region.y, sl.card_w, sl.card_h)
    return {NERTS: sl.nerts, STOCK: sl.stock, WASTE: sl.waste}.get(pile.kind)


def hit(
    layout: TableLayout,
    state: GameState | None,
    x: float,
    y: float,
    places: list[CardPlace] | None = None,
) -> Hit | None:
    """What is under the point: the top-most card drawn there, else an empty pile's place,
    a foundation slot, the centre, or a button."""
    for name, rect in layout.buttons.items():
        if rect.contains(x, y):
            return Hit(PileRef(-1, BUTTON, 0, name), None)
    if state is not None:
        if places is None:
            places = card_places(layout, state)
        for place in reversed(places):
            if place.rect.contains(x, y):
                return Hit(place.pile, place.depth)
    for seat_layout in layout.seats:
        seat = seat_layout.seat
        for kind, rect in (
            (NERTS, seat_layout.nerts),
            (STOCK, seat_layout.stock),
            (WASTE, seat_layout.waste),
        ):
            if rect.contains(x, y):
                return Hit(PileRef(seat, kind), None)
        for k, region in enumerate(seat_layout.work):
            if region.contains(x, y):
                return Hit(PileRef(seat, WORK, k), None)
    for slot, rect in enumerate(layout.foundation_slots):
        if rect.contains(x, y):
            return Hit(PileRef(-1, FOUNDATION, slot), None)
    if layout.centre.contains(x, y):
        return Hit(PileRef(-1, CENTRE), None)
    return None
