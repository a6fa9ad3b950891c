"""Headless rendering (SDL_VIDEODRIVER=dummy) of every screen, checked pixel by pixel.

Each test saves its screenshot under test-output/window/ (look at them) and then checks
that the frame shows what the state says: a card's face at the place of that card, in its
suit's colour; backs in the seat's colour; empty piles as empty felt; pending cards framed.
"""

from __future__ import annotations

from pathlib import Path

import pygame
import pytest

from client.window.app import WindowApp
from client.window.art import BLUE, HIGH_CONTRAST, NORMAL, RED, Theme
from client.window.layout import FOUNDATION, NERTS, STOCK, WASTE, WORK, CardPlace, PileRef
from client.window.menus import ReplayListScreen, SettingsScreen, StartScreen
from client.window.practice import practice_table
from client.window.replay_file import save_replay
from client.window.replay_screen import ReplayScreen
from client.window.round_end import RoundEndScreen
from client.window.session import PLAYING, SCORED, RoundResult, TableView
from client.window.settings import SEAT_COLOURS, Settings, seat_colours
from client.window.table_screen import TableScreen
from nerts_p2p.game.bots import EXPERT
from nerts_p2p.game.cards import SUIT_OF, face_of, make_card, parse_face
from nerts_p2p.game.position import parse_position
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.scoring import SeatScore

from .window_helpers import StaticSession, two_seat_state, visible_point

SCREENS = Path(__file__).resolve().parents[2] / "test-output" / "window"
SIZE = (1280, 800)


def make_app(*, four_colour: bool = False, high_contrast: bool = False) -> WindowApp:
    settings = Settings(sound=False, four_colour=four_colour, high_contrast=high_contrast)
    return WindowApp(settings, size=SIZE)


def shot(app: WindowApp, name: str) -> pygame.Surface:
    SCREENS.mkdir(parents=True, exist_ok=True)
    pygame.image.save(app.surface, str(SCREENS / f"{name}.png"))
    assert (SCREENS / f"{name}.png").stat().st_size > 10_000
    return app.surface


def static_table(
    app: WindowApp,
    *,
    pending: frozenset[int] = frozenset(),
    phase: str = PLAYING,
    names: tuple[str, str] = ("Ann", "Bob"),
) -> TableScreen:
    state = two_seat_state()
    view = TableView(phase, state.rules, names, 0, 1, state, pending, elapsed=42.0)
    screen = TableScreen(app, StaticSession(view))
    app.show(screen)
    return screen


def frame(app: WindowApp, now: float = 1.0) -> None:
    app.screen.update(now)
    app.screen.draw(app.surface, now)


def settle(app: WindowApp, screen: TableScreen, now: float) -> None:
    """Draw the same view until every moving card has arrived and announcements are gone."""
    screen.draw(app.surface, now + 5.0)
    screen.draw(app.surface, now + 6.0)


def colours_in(
    surface: pygame.Surface, rect: tuple[float, float, float, float]
) -> list[tuple[int, int, int]]:
    x, y, w, h = (round(v) for v in rect)
    out = []
    for py in range(max(0, y), min(surface.get_height(), y + h)):
        for px in range(max(0, x), min(surface.get_width(), x + w)):
            c = surface.get_at((px, py))
            out.append((c.r, c.g, c.b))
    return out


def pixel(surface: pygame.Surface, at: tuple[float, float]) -> tuple[int, int, int]:
    c = surface.get_at((round(at[0]), round(at[1])))
    return c.r, c.g, c.b


def near(a: tuple[int, int, int], b: tuple[int, int, int], tolerance: int = 40) -> bool:
    return all(abs(x - y) <= tolerance for x, y in zip(a, b, strict=True))


def visible_strip(screen: TableScreen, place: CardPlace) -> tuple[float, float, float, float]:
    """The part of a card that no later card covers (top-left corner region)."""
    assert screen.layout is not None
    state = screen.view.state
    assert state is not None
    later = screen.places[screen.places.index(place) + 1 :]
    rect = place.rect
    h = rect.h * 0.42
    w = rect.w * 0.5
    for other in later:
        o = other.rect
        if not (o.x < rect.x + w and rect.x < o.right and o.y < rect.y + h and rect.y < o.bottom):
            continue  # it does not cover the corner we look at
        if o.y > rect.y + 1:
            h = min(h, o.y - rect.y)
        elif o.x > rect.x + 1:
            w = min(w, o.x - rect.x)
    return rect.x + 2, rect.y + 2, max(2.0, w - 3), max(2.0, h - 3)


def assert_card_face(
    surface: pygame.Surface, screen: TableScreen, place: CardPlace, theme: Theme
) -> None:
    pixels = colours_in(surface, visible_strip(screen, place))
    assert any(near(p, theme.card, 10) for p in pixels), f"no card face at {place}"
    suit = SUIT_OF[face_of(place.entry)]
    reds = sum(near(p, RED, 60) for p in pixels)
    blues = sum(near(p, BLUE, 60) for p in pixels)
    darks = sum(max(p) < 70 for p in pixels)
    if suit in (1, 2):
        assert reds > 3, f"a red card ({place}) shows red"
    else:
        assert reds == 0, f"a black card ({place}) shows no red"
        assert darks > 3, f"a black card ({place}) shows black"
    assert blues == 0


def test_table_shows_every_card_where_the_state_has_it(headless: None) -> None:
    app = make_app()
    screen = static_table(app)
    frame(app)
    surface = shot(app, "table-two-seats")
    assert screen.layout is not None
    faces = [p for p in screen.places if p.face_up]
    assert len(faces) == 14  # 2 Nerts tops, 3 waste cards, 5 + 3 work cards, 1 foundation top
    for place in faces:
        assert_card_face(surface, screen, place, NORMAL)
    colours = seat_colours(0, 2, 0)
    for seat in (0, 1):
        stock = next(p for p in screen.places if p.pile == PileRef(seat, STOCK))
        assert not stock.face_up
        pixels = colours_in(
            surface, (stock.rect.x + 8, stock.rect.y + 8, stock.rect.w - 16, stock.rect.h - 16)
        )
        share = sum(near(p, colours[seat], 30) for p in pixels) / len(pixels)
        assert share > 0.5, f"seat {seat}'s stock shows its back colour"
    # The empty fourth work pile is bare felt; the foundation shows its top card, the 2H.
    empty = screen.layout.seats[0].work[3]
    pixels = colours_in(surface, (empty.x + 10, empty.y + 10, empty.w - 20, 30))
    assert all(near(p, NORMAL.felt, 12) for p in pixels)
    top = next(p for p in screen.places if p.pile.kind == FOUNDATION)
    assert top.entry == make_card(1, parse_face("2H"))


def test_a_name_another_peer_chose_with_a_nul_in_it_is_drawn_without_it(headless: None) -> None:
    # The wire lets a name hold any text up to 32 bytes; pygame refuses to draw a NUL
    # (ValueError), which once would have ended the window at that peer's first frame.
    app = make_app()
    static_table(app, names=("Ann", "Bo\x00b\x1b[2J"))
    frame(app)
    assert app.fonts.text("Bo\x00b", 20, (0, 0, 0)).get_width() == (
        app.fonts.text("Bob", 20, (0, 0, 0)).get_width()
    )


def test_the_four_colour_deck_paints_diamonds_blue(headless: None) -> None:
    app = make_app(four_colour=True)
    screen = static_table(app)
    frame(app)
    surface = shot(app, "table-four-colour")
    diamond = next(
        p for p in screen.places if p.face_up and p.entry == make_card(0, parse_face("TD"))
    )
    pixels = colours_in(surface, visible_strip(screen, diamond))
    assert sum(near(p, BLUE, 60) for p in pixels) > 3
    assert sum(near(p, RED, 60) for p in pixels) == 0


def test_high_contrast_uses_its_own_colours(headless: None) -> None:
    app = make_app(high_contrast=True)
    screen = static_table(app)
    frame(app)
    surface = shot(app, "table-high-contrast")
    assert screen.layout is not None
    centre = screen.layout.seats[0].box
    assert near(
        pixel(surface, (round(centre.right - 12), round(centre.bottom - 12))),
        HIGH_CONTRAST.felt,
        5,
    )
    for place in screen.places:
        if place.face_up:
            pixels = colours_in(surface, visible_strip(screen, place))
            assert any(near(p, HIGH_CONTRAST.card, 5) for p in pixels)


def test_a_pending_card_is_framed_until_it_settles(headless: None) -> None:
    app = make_app()
    five = make_card(0, parse_face("5H"))
    screen = static_table(app, pending=frozenset({five}))
    frame(app)
    surface = shot(app, "table-pending")
    nerts = next(p for p in screen.places if p.pile == PileRef(0, NERTS))
    rect = nerts.rect
    frame_pixels = colours_in(surface, (rect.x - 2, rect.y + rect.h / 3, 2, rect.h / 3))
    assert sum(near(p, NORMAL.pending, 30) for p in frame_pixels) > len(frame_pixels) / 2
    other = next(p for p in screen.places if p.pile == PileRef(0, WORK, 1))
    r = other.rect
    edge = colours_in(surface, (r.x - 2, r.y + r.h / 3, 2, r.h / 3))
    assert not any(near(p, NORMAL.pending, 30) for p in edge), "only the pending card is framed"


def test_a_refused_drop_shows_the_engines_reason(headless: None) -> None:
    app = make_app()
    screen = static_table(app)
    frame(app)
    assert screen.layout is not None
    state = screen.view.state
    assert state is not None
    source = next(p for p in screen.places if p.pile == PileRef(0, WASTE) and p.depth == 2)
    sx, sy = visible_point(screen.layout, state, source)
    target = screen.layout.seats[0].work[2]  # the AS onto the JH: the intent is sent
    for event in (
        pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=(round(sx), round(sy))),
        pygame.event.Event(
            pygame.MOUSEMOTION, pos=(round(sx) + 30, round(sy) - 30), rel=(0, 0), buttons=(1, 0, 0)
        ),
        pygame.event.Event(pygame.MOUSEBUTTONUP, button=1, pos=target.center),
    ):
        screen.handle(event, 1.0)
    frame(app, 1.1)
    shot(app, "table-toast")
    assert screen.toasts
    assert screen.toasts[-1][1] == "this table is a picture"


def test_help_lists_the_keys(headless: None) -> None:
    app = make_app()
    screen = static_table(app)
    frame(app)
    screen.handle(
        pygame.event.Event(pygame.KEYDOWN, key=pygame.K_h, unicode="h", mod=0, scancode=0), 1.0
    )
    assert screen.help
    frame(app)
    surface = shot(app, "table-help")
    width, height = SIZE
    pixels = colours_in(surface, (width * 0.2, height * 0.2, 300, 200))
    assert sum(near(p, NORMAL.text, 30) for p in pixels) > 100, "the help text is drawn"


@pytest.mark.parametrize("seats", [4, 8])
def test_practice_table_while_bots_play(headless: None, seats: int) -> None:
    app = make_app()
    table = practice_table(seats, EXPERT, name="Ann", seed=7)
    screen = TableScreen(app, table)
    app.show(screen)
    now = 0.0
    for _ in range(60 * 12):
        now += 1 / 60
        screen.update(now)
    settle(app, screen, now)
    surface = shot(app, f"table-practice-{seats}")
    checked = 0
    for place in screen.places:
        if place.face_up:
            assert_card_face(surface, screen, place, NORMAL)
            checked += 1
    assert checked >= seats * 5
    state = screen.view.state
    assert state is not None
    assert len(state.seats) == seats


def test_spectator_sees_every_seat(headless: None) -> None:
    app = make_app()
    table = practice_table(6, EXPERT, name="Ann", seed=8, watch=True)
    screen = TableScreen(app, table)
    app.show(screen)
    now = 0.0
    for _ in range(60 * 8):
        now += 1 / 60
        screen.update(now)
    settle(app, screen, now)
    surface = shot(app, "spectator-six-seats")
    assert screen.layout is not None
    assert screen.layout.my_seat is None
    nerts_tops = [p for p in screen.places if p.pile.kind == NERTS and p.face_up]
    assert len(nerts_tops) == 6
    for place in nerts_tops:
        assert_card_face(surface, screen, place, NORMAL)


def test_round_end_names_scores_cheaters_and_the_match(headless: None) -> None:
    app = make_app()
    rules = Rules(seats=3)
    state = two_seat_state()
    results = (
        RoundResult(
            1,
            (
                SeatScore(0, 20, 0, True, 20),
                SeatScore(1, 12, 3, False, 6),
                SeatScore(2, 9, 5, False, -1),
            ),
            frozenset(),
            (20, 6, -1),
            "nerts",
            0,
            None,
        ),
        RoundResult(
            2,
            (
                SeatScore(0, 15, 2, False, 11),
                SeatScore(1, 22, 0, True, 22),
                SeatScore(2, 14, 1, False, 0),
            ),
            frozenset({2}),
            (31, 28, -1),
            "nerts",
            1,
            None,
        ),
    )
    view = TableView(SCORED, rules, ("Ann", "Bob", "Cy"), 0, 2, state, results=results)
    session = StaticSession(view)
    screen = TableScreen(app, session)
    app.show(screen)
    frame(app)
    assert isinstance(screen.round_end, RoundEndScreen)
    surface = shot(app, "round-end")
    # The chart: a line in each seat's colour.
    colours = seat_colours(0, 3, 0)
    pixels = colours_in(surface, (SIZE[0] * 0.56, 300, SIZE[0] * 0.38, 380))
    for colour in colours:
        assert any(near(p, colour, 8) for p in pixels), colour
    # The cheater's row is in the warning colour.
    assert any(near(p, NORMAL.warn, 10) for p in colours_in(surface, (0, 100, SIZE[0], 200)))
    screen.handle(
        pygame.event.Event(pygame.KEYDOWN, key=pygame.K_RETURN, unicode="\r", mod=0, scancode=0),
        1.0,
    )
    assert session.next_rounds == 1


def test_menus_and_settings_screens(headless: None) -> None:
    app = make_app()
    start = StartScreen(app)
    app.show(start)
    frame(app)
    surface = shot(app, "start")
    for button in start.buttons():
        assert near(pixel(surface, button.rect.move(6, 4).topleft), NORMAL.button, 3)
    settings = SettingsScreen(app)
    app.show(settings)
    frame(app)
    shot(app, "settings")
    colour = next(b for b in settings.buttons() if b.name == "colour")
    settings.handle(
        pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=colour.rect.center), 1.0
    )
    assert app.settings.colour == 1
    frame(app)
    surface = shot(app, "settings-changed")
    swatch = (colour.rect.right + 16, colour.rect.centery)
    assert near(pixel(surface, swatch), SEAT_COLOURS[1], 3)
    app.show(ReplayListScreen(app))
    frame(app)
    shot(app, "replays-empty")


def test_replay_screen_plays_a_saved_match(headless: None, tmp_path: Path) -> None:
    table = practice_table(3, EXPERT, name="Ann", seed=9)
    now = 0.0
    for _ in range(60 * 20):
        now += 1 / 60
        table.advance(now)
    replay = table.replay()
    assert replay is not None
    path = tmp_path / "data" / "replays" / "practice-test.json"
    save_replay(replay, path)
    app = make_app()
    listing = ReplayListScreen(app)
    assert listing.files == [path]
    app.show(listing)
    frame(app)
    shot(app, "replays-list")
    button = listing.buttons()[0]
    listing.handle(
        pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=button.rect.center), 0.0
    )
    screen = app.screen
    assert isinstance(screen, ReplayScreen)
    screen.player.speed = 8.0
    for i in range(1, 60 * 3):
        screen.update(i / 60)
    assert screen.player.position > 10
    screen.draw(app.surface, 3.0)
    surface = shot(app, "replay")
    view = screen.view()
    assert view.state is not None
    from client.window.layout import card_places, table_layout

    layout = table_layout(SIZE[0], SIZE[1] - screen.bar_height(), 3, None)
    for place in card_places(layout, view.state):
        if place.pile.kind == NERTS and place.face_up:
            pixels = colours_in(
                surface,
                (place.rect.x + 2, place.rect.y + 2, place.rect.w * 0.4, place.rect.h * 0.3),
            )
            assert any(near(p, NORMAL.card, 10) for p in pixels)


def test_the_nerts_button_calls_attention_when_our_pile_is_empty(headless: None) -> None:
    app = make_app()
    empty = parse_position(
        "nerts1 seats=2 play/0/0 AH@1.2H@1 -:-/TD.9S.8H,3C,JH,-/?44/7C.KD.AS/- "
        "?12:8C/5H,-,8S,2D/?34/-/-"
    )
    for state, lit in ((two_seat_state(), False), (empty, True)):
        view = TableView(PLAYING, state.rules, ("Ann", "Bob"), 0, 1, state)
        screen = TableScreen(app, StaticSession(view))
        app.show(screen)
        frame(app)
        surface = shot(app, f"table-nerts-button-{'lit' if lit else 'plain'}")
        assert screen.layout is not None
        button = screen.layout.buttons["nerts"]
        ring = colours_in(surface, (button.x - 4, button.y + button.h / 3, 3, button.h / 3))
        assert any(near(p, NORMAL.settled, 20) for p in ring) == lit


def test_a_resized_window_is_laid_out_anew(headless: None) -> None:
    """Regression: after a resize every card glided from its old place to its new one."""
    app = make_app()
    screen = static_table(app)
    app.frame(1.0)
    assert screen.layout is not None
    assert (screen.layout.width, screen.layout.height) == SIZE
    pygame.display.set_mode((1024, 640), pygame.RESIZABLE)
    pygame.event.post(pygame.event.Event(pygame.VIDEORESIZE, w=1024, h=640, size=(1024, 640)))
    app.frame(1.1)
    assert screen.layout is not None
    assert (screen.layout.width, screen.layout.height) == (1024, 640)
    surface = shot(app, "table-resized")
    assert surface.get_size() == (1024, 640)
    for place in screen.places:
        assert place.rect.right <= 1024
        assert place.rect.bottom <= 640
        if place.face_up:
            assert_card_face(surface, screen, place, NORMAL)


@pytest.mark.parametrize("theme", [NORMAL, HIGH_CONTRAST])
def test_a_long_button_label_is_set_smaller_and_stays_on_its_button(
    headless: None, theme: Theme
) -> None:
    # A table's row: the longest name, its seats and phase, another protocol version, and
    # the seat this window may take back. It used to spill past both edges of its button.
    from client.window.art import Fonts
    from client.window.widgets import Button

    pygame.init()
    label = (
        "W" * 32 + "   8/8 seats   playing   spectators welcome   (speaks protocol 9, not 3)"
        "   (your seat: take it back)"
    )
    surface = pygame.Surface((1000, 100))
    surface.fill(theme.felt)
    button = Button("table 0", label, pygame.Rect(100, 30, 800, 40))
    button.draw(surface, Fonts(), theme)
    outside = [
        (x, y)
        for x in range(surface.get_width())
        for y in range(surface.get_height())
        if not button.rect.collidepoint(x, y) and surface.get_at((x, y))[:3] != theme.felt
    ]
    assert outside == []
    inked = [
        x
        for x in range(button.rect.left, button.rect.right)
        for y in range(button.rect.top, button.rect.bottom)
        if surface.get_at((x, y))[:3] not in (theme.button, theme.felt)
    ]
    assert inked, "the label is drawn"
    assert max(inked) - min(inked) > button.rect.w // 2, "across the button, not shrunk away"
