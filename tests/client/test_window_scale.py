"""High-DPI: the UI scale. Pure geometry first (no window): a table laid out at scale 2 on
a window twice as large is the scale-1 table with every place doubled, so text, buttons
and cards are as large to the eye; hit-testing follows; every pixel is painted each frame.
Then one headless frame at scale 2 checked pixel by pixel, and the setting itself."""

from __future__ import annotations

import json
from pathlib import Path

import pygame
import pytest

from client.window.app import WindowApp
from client.window.art import NORMAL
from client.window.layout import (
    CardPlace,
    Rect,
    SeatLayout,
    TableLayout,
    card_places,
    hit,
    table_layout,
)
from client.window.session import PLAYING, TableView
from client.window.settings import Settings, auto_ui_scale, load_settings
from client.window.table_render import cover, felt_regions
from client.window.table_screen import TableScreen

from .test_window_render import SCREENS, assert_card_face, settle
from .window_helpers import StaticSession, two_seat_state, visible_point


def _doubled(rect: Rect, k: float) -> Rect:
    return Rect(rect.x * k, rect.y * k, rect.w * k, rect.h * k)


def _close(a: Rect, b: Rect) -> bool:
    return all(abs(p - q) < 1e-6 for p, q in zip(a, b, strict=True))


def _rects(sl: SeatLayout) -> list[Rect]:
    return [sl.box, sl.label, sl.nerts, sl.stock, sl.waste, *sl.work]


def _all_rects(layout: TableLayout) -> list[Rect]:
    out = [layout.centre, layout.status, *layout.foundation_slots, *layout.buttons.values()]
    for sl in layout.seats:
        out.extend(_rects(sl))
    return out


@pytest.mark.parametrize("seats", range(2, 9))
@pytest.mark.parametrize("me", [0, None])
@pytest.mark.parametrize("k", [1.5, 2.0, 3.0])
def test_a_scaled_table_is_the_same_table_with_every_place_scaled(
    seats: int, me: int | None, k: float
) -> None:
    one = table_layout(1280, 800, seats, me)
    scaled = table_layout(round(1280 * k), round(800 * k), seats, me, scale=k)
    assert (scaled.width, scaled.height) == (round(1280 * k), round(800 * k))
    assert len(_all_rects(one)) == len(_all_rects(scaled))
    for a, b in zip(_all_rects(one), _all_rects(scaled), strict=True):
        assert _close(_doubled(a, k), b), (a, b)
    for a_seat, b_seat in zip(one.seats, scaled.seats, strict=True):
        assert b_seat.card_w == pytest.approx(a_seat.card_w * k)
        assert b_seat.fan == pytest.approx(a_seat.fan * k)
    assert scaled.buttons.keys() == one.buttons.keys()


def test_without_the_scale_a_big_window_keeps_small_labels() -> None:
    """Why the scale is needed: at scale 1 a 2560x1600 window keeps the label strip and
    buttons at their pixel caps (tiny on a 2x display); at scale 2 they double."""
    plain = table_layout(2560, 1600, 8, 0)
    scaled = table_layout(2560, 1600, 8, 0, scale=2)
    reference = table_layout(1280, 800, 8, 0)
    assert plain.seats[1].label.h <= 26
    assert scaled.seats[1].label.h == pytest.approx(2 * reference.seats[1].label.h)
    assert plain.buttons["nerts"].h <= 48
    assert scaled.buttons["nerts"].h == pytest.approx(2 * reference.buttons["nerts"].h)


def test_hit_testing_at_scale_2_finds_the_same_cards() -> None:
    state = two_seat_state()
    one = table_layout(1280, 800, 2, 0)
    two = table_layout(2560, 1600, 2, 0, scale=2)
    places_one = card_places(one, state)
    places_two = card_places(two, state)
    assert len(places_one) == len(places_two)
    for place in places_one:
        x, y = visible_point(one, state, place)
        found = hit(two, state, x * 2, y * 2, places_two)
        assert found is not None
        assert (found.pile, found.depth) == (place.pile, place.depth)
    button = one.buttons["stuck"]
    found = hit(two, state, button.center[0] * 2, button.center[1] * 2)
    assert found is not None
    assert found.pile.name == "stuck"


@pytest.mark.parametrize(
    ("size", "k"),
    [
        ((1280, 800), 1.0),
        ((1281, 799), 1.0),
        ((2560, 1600), 2.0),
        ((2561, 1601), 2.0),
        ((1919, 1201), 1.5),
        ((1000, 700), 1.25),
    ],
)
@pytest.mark.parametrize("me", [0, None])
def test_every_pixel_is_painted_each_frame(size: tuple[int, int], k: float, me: int | None) -> None:
    """The renderer paints the felt between the seats and each seat's box: together they
    must cover the window, or a card dragged over a gap would leave a trail."""
    layout = table_layout(size[0], size[1], 8, me, scale=k)
    regions = felt_regions(layout) + [cover(sl.box) for sl in layout.seats]
    width, height = layout.width, layout.height
    assert (width, height) == size
    step = 1 if width * height < 1_200_000 else 2
    for y in range(0, height, step):
        row = [r for r in regions if r.top <= y < r.bottom]
        spans = sorted((r.left, r.right) for r in row)
        x = 0
        for left, right in spans:
            assert left <= x, f"pixels {x}..{left} of row {y} are never painted"
            x = max(x, right)
        assert x >= width, f"pixels {x}..{width} of row {y} are never painted"


def test_auto_scale_follows_the_display() -> None:
    assert auto_ui_scale((2560, 1600), (1280, 800), 2560) == 2.0  # the system reports 2x
    assert auto_ui_scale((1920, 1200), (1280, 800), 1920) == 1.5
    assert auto_ui_scale((1280, 800), (1280, 800), 3840) == 2.0  # a 4K panel
    assert auto_ui_scale((1280, 800), (1280, 800), 1920) == 1.0
    assert auto_ui_scale((1280, 800), (0, 0), 0) == 1.0  # nothing known


def test_the_scale_setting_is_kept_and_kept_in_range(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"ui_scale": 2}))
    assert load_settings(path)[0].ui_scale == 2.0
    path.write_text(json.dumps({"ui_scale": 9.5}))
    assert load_settings(path)[0].ui_scale == 3.0
    path.write_text(json.dumps({"ui_scale": -1.0}))
    assert load_settings(path)[0].ui_scale == 0.0  # auto
    path.write_text(json.dumps({"ui_scale": "big"}))
    assert load_settings(path)[0].ui_scale == 0.0


def test_a_table_at_scale_2_shows_every_card_in_its_place(headless: None) -> None:
    app = WindowApp(Settings(sound=False, ui_scale=2.0), size=(2560, 1600))
    assert app.scale == 2.0
    state = two_seat_state()
    view = TableView(PLAYING, state.rules, ("Ann", "Bob"), 0, 1, state, elapsed=3.0)
    screen = TableScreen(app, StaticSession(view))
    app.show(screen)
    screen.update(1.0)
    settle(app, screen, 1.0)
    SCREENS.mkdir(parents=True, exist_ok=True)
    pygame.image.save(app.surface, str(SCREENS / "table-scale-2.png"))
    assert screen.layout is not None
    reference = table_layout(1280, 800, 2, 0)
    assert screen.layout.seats[0].card_w == pytest.approx(2 * reference.seats[0].card_w)
    faces: list[CardPlace] = [p for p in screen.places if p.face_up]
    assert faces
    for place in faces:
        assert_card_face(app.surface, screen, place, NORMAL)
