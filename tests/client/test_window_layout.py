"""Layout and hit-testing as pure geometry: no window is opened."""

from __future__ import annotations

import itertools

import pytest

from client.window.layout import (
    BUTTON,
    CENTRE,
    FOUNDATION,
    NERTS,
    STOCK,
    WASTE,
    WORK,
    PileRef,
    Rect,
    card_places,
    hit,
    table_layout,
)
from nerts_p2p.game.deck import seat_seed
from nerts_p2p.game.engine import omniscient_start
from nerts_p2p.game.rules import Rules

from .window_helpers import layout_for, place_of, two_seat_state, visible_point

SIZES = [(1280, 800), (1024, 640), (1920, 1200), (800, 500)]


def _inside(inner: Rect, outer: Rect, slack: float = 0.5) -> bool:
    return (
        inner.x >= outer.x - slack
        and inner.y >= outer.y - slack
        and inner.right <= outer.right + slack
        and inner.bottom <= outer.bottom + slack
    )


def _overlap(a: Rect, b: Rect) -> bool:
    return (
        a.x < b.right - 0.5
        and b.x < a.right - 0.5
        and a.y < b.bottom - 0.5
        and b.y < a.bottom - 0.5
    )


def _cases() -> list[tuple[int, int | None, tuple[int, int]]]:
    out = []
    for seats in range(2, 9):
        for me in {0, seats - 1, None}:
            for size in SIZES:
                out.append((seats, me, size))
    return out


@pytest.mark.parametrize(("seats", "me", "size"), _cases())
def test_every_pile_fits_its_seat_and_nothing_overlaps(
    seats: int, me: int | None, size: tuple[int, int]
) -> None:
    layout = table_layout(size[0], size[1], seats, me, work_piles=4)
    window = Rect(0, 0, *size)
    assert len(layout.seats) == seats
    for one, other in itertools.combinations(layout.seats, 2):
        assert not _overlap(one.box, other.box), (one.seat, other.seat)
    for sl in layout.seats:
        assert _inside(sl.box, window)
        assert not _overlap(sl.box, layout.centre)
        piles = [sl.nerts, sl.stock, Rect(sl.waste.x, sl.waste.y, sl.waste.w, sl.card_h), *sl.work]
        for rect in piles:
            assert _inside(rect, sl.box), (sl.seat, rect, sl.box)
        for pile, other_pile in itertools.combinations(piles, 2):
            assert not _overlap(pile, other_pile)
        assert sl.card_h == pytest.approx(sl.card_w * 1.4)
    assert len(layout.foundation_slots) == 4 * seats
    for slot in layout.foundation_slots:
        assert _inside(slot, layout.centre)
    for slot, other_slot in itertools.combinations(layout.foundation_slots, 2):
        assert not _overlap(slot, other_slot)
    for rect in layout.buttons.values():
        assert _inside(rect, window)
        assert all(not _overlap(rect, sl.box) for sl in layout.seats)


@pytest.mark.parametrize("seats", range(2, 9))
def test_own_layout_is_the_largest_and_others_stay_readable(seats: int) -> None:
    layout = table_layout(1280, 800, seats, 1, work_piles=4)
    mine = layout.seats[1].card_w
    others = [sl.card_w for sl in layout.seats if sl.seat != 1]
    assert all(mine > w * 1.5 for w in others)
    # "Smaller but readable": a card of another seat is at least 28 pixels wide at 1280x800.
    assert min(others) >= 28


def test_spectator_shows_every_seat_at_one_size() -> None:
    layout = table_layout(1280, 800, 6, None, work_piles=4)
    widths = {round(sl.card_w, 3) for sl in layout.seats}
    assert len(widths) == 1
    assert layout.buttons == {}


def test_a_long_work_pile_fans_inside_its_column() -> None:
    layout = table_layout(1280, 800, 4, 0, work_piles=4)
    sl = layout.seats[0]
    for count in (1, 5, 13, 20):
        step = sl.work_step(0, count)
        bottom = sl.work[0].y + step * (count - 1) + sl.card_h
        assert bottom <= sl.work[0].bottom + 0.5
        assert step <= sl.fan


@pytest.mark.parametrize(("seats", "seed", "me"), [(2, 1, 0), (4, 2, 3), (8, 3, 5), (6, 4, None)])
def test_hit_finds_every_drawn_card_at_its_visible_part(
    seats: int, seed: int, me: int | None
) -> None:
    rules = Rules(seats=seats)
    state = omniscient_start(rules, [seat_seed(seed, 1, s) for s in range(seats)])
    layout = layout_for(state, me)
    places = card_places(layout, state)
    assert places, "a dealt table shows cards"
    for place in places:
        x, y = visible_point(layout, state, place)
        found = hit(layout, state, x, y)
        assert found is not None
        assert (found.pile, found.depth) == (place.pile, place.depth)


def test_hit_on_places_without_cards() -> None:
    state = two_seat_state()
    layout = layout_for(state)
    sl = layout.seats[0]
    empty_pile = sl.work[3]
    found = hit(layout, state, empty_pile.x + 5, empty_pile.y + 5)
    assert found is not None
    assert found.pile == PileRef(0, WORK, 3)
    assert found.depth is None
    # Below a pile's cards, in its column: still that pile (a drop target).
    column = sl.work[1]
    found = hit(layout, state, column.x + 5, column.bottom - 3)
    assert found is not None
    assert found.pile == PileRef(0, WORK, 1)
    assert found.depth is None
    slot = layout.foundation_slots[5]
    found = hit(layout, state, slot.x + 3, slot.y + 3)
    assert found is not None
    assert found.pile == PileRef(-1, FOUNDATION, 5)
    centre = layout.centre
    found = hit(layout, state, centre.x + 2, centre.y + 2)
    assert found is not None
    assert found.pile.kind == CENTRE
    nerts = layout.seats[1].nerts
    # The Nerts top is the pile's last card: seat 1 has 13 in its pile.
    assert hit(layout, state, nerts.x + 4, nerts.y + 4) == (PileRef(1, NERTS), 12)


def test_hit_names_buttons_and_the_top_waste_card() -> None:
    state = two_seat_state()
    layout = layout_for(state)
    for name, rect in layout.buttons.items():
        found = hit(layout, state, *rect.center)
        assert found is not None
        assert found.pile == PileRef(-1, BUTTON, 0, name)
    places = card_places(layout, state)
    top = place_of(places, PileRef(0, WASTE), 2)
    found = hit(layout, state, top.rect.right - 3, top.rect.y + 10)
    assert found == (PileRef(0, WASTE), 2)
    stock = place_of(places, PileRef(0, STOCK), 0)
    assert not stock.face_up


def test_foundations_keep_their_places_as_more_are_started() -> None:
    state = two_seat_state()
    layout = layout_for(state)
    before = place_of(card_places(layout, state), PileRef(-1, FOUNDATION, 0), 1)
    from nerts_p2p.game.engine import play
    from nerts_p2p.game.moves import parse_move

    after = play(play(state, parse_move("0 AS d-f")), parse_move("0 3C w1-w3"))
    places = card_places(layout, after)
    assert place_of(places, PileRef(-1, FOUNDATION, 0), 1).rect == before.rect
    new = place_of(places, PileRef(-1, FOUNDATION, 1), 0)
    assert new.rect == layout.foundation_slots[1]
