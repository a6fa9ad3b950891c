"""The table screen: play (or watch) a round of a `TableSession`.

Each frame: let the session run to now, read its view, lay out the window, draw, and turn
input into intents. Notices become a banner in the middle (a race lost and who won, the
stocks rotated, Nerts called) or a short toast (the engine's reason for a refused move).
When the round is scored the round end screen takes over.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pygame

from nerts_p2p.game.cards import CARD_MASK
from nerts_p2p.game.moves import RECYCLE, TURN

from .intents import (
    Hint,
    InputController,
    InputEvent,
    KeyPress,
    PointerDown,
    PointerMove,
    PointerUp,
    PressButton,
    SubmitMove,
)
from .layout import CardPlace, PlaceCache, TableLayout, table_layout
from .netsession import NetworkTable
from .practice import PracticeTable
from .replay_file import save_replay
from .screen import App
from .session import (
    LOBBY,
    PLAYING,
    SCORED,
    MessageNotice,
    NertsNotice,
    RaceLostNotice,
    RotationNotice,
    RoundScoredNotice,
    TableSession,
    TableView,
)
from .settings import new_replay_path, seat_colours
from .table_render import TableRenderer
from .widgets import panel, text_lines

if TYPE_CHECKING:
    from .round_end import RoundEndScreen

TOAST_SECONDS = 2.6
BANNER_SECONDS = 3.0
DOUBLE_CLICK = 0.35

HELP_LINES = [
    "Mouse",
    "  drag a card (or a run of a work pile) and drop it on a pile or a foundation",
    "  click a card, then click where it goes (two-click move)",
    "  double-click or right-click a card: to a foundation it fits",
    "  click your stock: turn it (the waste turns over when the stock is empty)",
    "Keys",
    "  Space / T   turn the stock",
    "  N  D        select your Nerts top / your waste top",
    "  1..6        select work pile K; with a card selected: move it onto pile K",
    "  Up / Down   with a work pile selected: take one card more / fewer",
    "  F / Enter   the selected card to a foundation",
    "  U then 1..6 slide the selected card under work pile K",
    "  S  stuck     C  call Nerts     Esc  clear     H  this help     Q  leave",
    "A card drawn with a yellow frame is pending: it may still lose a race.",
    "It flashes green when every seat has seen it and it is settled.",
]


class TableScreen:
    def __init__(self, app: App, session: TableSession) -> None:
        self.app = app
        self.session = session
        self.controller = InputController()
        settings = app.settings
        self.renderer = TableRenderer(
            app.fonts,
            app.arts,
            four_colour=settings.four_colour,
            high_contrast=settings.high_contrast,
        )
        self.toasts: list[tuple[float, str]] = []
        self.banners: list[tuple[float, str]] = []
        self.help = False
        self.view: TableView = session.view()
        self.layout: TableLayout | None = None
        self.places: list[CardPlace] = []
        self._place_cache = PlaceCache()
        self._last_click: tuple[float, int, tuple[int, int]] | None = None
        self.round_end: RoundEndScreen | None = None  # over the table while it is scored
        self._closed = False
        self._title = ""
        self.replay_file = new_replay_path() if _practice(session) else None
        self.saved_problem = ""

    # --- the frame loop's calls ----------------------------------------------------------

    def update(self, now: float) -> None:
        self.session.advance(now)
        for notice in self.session.notices():
            self._notice(notice, now)
        self.view = self.session.view()
        if self.view.phase == SCORED and self.round_end is None and self.view.results:
            from .round_end import RoundEndScreen

            self.round_end = RoundEndScreen(self.app, self)
        elif self.view.phase not in (SCORED, LOBBY) and self.round_end is not None:
            self.round_end = None
            self.controller.reset()
        self._relayout()
        self._caption()

    def _caption(self) -> None:
        """The window's title says which round is on (and that we watch)."""
        view = self.view
        title = "Nerts"
        if view.phase == PLAYING:
            title = f"Nerts - round {view.round}" + (" (watching)" if view.watching else "")
        if title != self._title:
            self._title = title
            pygame.display.set_caption(title)

    def _relayout(self) -> None:
        state = self.view.state
        width, height = self.app.size
        seats = len(state.seats) if state is not None else self.view.rules.seats
        layout = self.layout
        if (
            layout is None
            or (layout.width, layout.height) != (width, height)
            or len(layout.seats) != seats
            or layout.my_seat != self.view.my_seat
        ):
            self.layout = layout = table_layout(
                width,
                height,
                seats,
                self.view.my_seat,
                self.view.rules.work_piles,
                scale=self.app.scale,
            )
            self.renderer.new_layout()
            for sl in self.layout.seats[:1] + tuple(
                s for s in self.layout.seats if s.seat == self.view.my_seat
            ):
                self.renderer.art(sl.card_w, sl.card_h).warm()
            self.renderer.art(self.layout.foundation_w, self.layout.foundation_h).warm()
        self.places = self._place_cache.places(layout, state) if state is not None else []

    def draw(self, surface: pygame.Surface, now: float) -> None:
        if self.round_end is not None:
            self.round_end.draw(surface, now)
            self._problem(surface)
            return
        assert self.layout is not None
        view = self.view
        colours = seat_colours(self.app.settings.colour, len(self.layout.seats), view.my_seat)
        self.renderer.draw(
            surface,
            self.layout,
            view,
            self.places,
            colours,
            now,
            selection=self.controller.selection,
            drag=self.controller.drag,
        )
        self._status(surface)
        self._nerts_ready(surface, now)
        self._announcements(surface, now)
        if self.help:
            self._help(surface)
        self._problem(surface)

    def _problem(self, surface: pygame.Surface) -> None:
        """The table is gone for us (a network table): said in the middle, until we leave."""
        problem = self.session.problem
        if problem is None:
            return
        width, height = self.app.size
        k = self.app.scale
        size = max(18.0 * k, min(32.0 * k, height / 28))
        fonts, theme = self.app.fonts, self.app.theme
        lines = [problem[0].upper() + problem[1:], "Q or Esc: back to the start"]
        images = [
            fonts.text(line, size, theme.warn if i == 0 else theme.text, True)
            for i, line in enumerate(lines)
        ]
        box_w = max(image.get_width() for image in images) + 40
        box_h = int(len(images) * size * 1.4 + 24)
        box = pygame.Rect((width - box_w) // 2, (height - box_h) // 2, box_w, box_h)
        panel(surface, box, theme.panel, 240)
        y = box.y + 12
        for image in images:
            surface.blit(image, image.get_rect(midtop=(width // 2, y)))
            y += int(size * 1.4)

    def _nerts_ready(self, surface: pygame.Surface, now: float) -> None:
        """Our Nerts pile is empty: the Nerts button pulses so the call is not missed."""
        assert self.layout is not None
        view, button = self.view, self.layout.buttons.get("nerts")
        if view.state is None or view.my_seat is None or button is None or view.phase != PLAYING:
            return
        if view.state.seats[view.my_seat].nerts_count:
            return
        width = 3 + int(3 * abs((now * 2) % 2 - 1))
        rect = pygame.Rect(round(button.x), round(button.y), round(button.w), round(button.h))
        pygame.draw.rect(
            surface, self.app.theme.settled, rect.inflate(8, 8), width, border_radius=12
        )

    def handle(self, event: pygame.event.Event, now: float) -> None:
        if (
            self.session.problem is not None
            and event.type == pygame.KEYDOWN
            and event.key in (pygame.K_q, pygame.K_ESCAPE)
        ):
            self.leave()
            return
        if self.round_end is not None:
            self.round_end.handle(event, now)
            return
        translated = self._translate(event, now)
        if translated is None or self.layout is None:
            return
        if self.help and isinstance(translated, KeyPress | PointerDown):
            self.help = False
            if isinstance(translated, PointerDown):
                return
        view = self.view
        state = view.state if view.phase not in (LOBBY,) else None
        for intent in self.controller.handle(
            translated, self.layout, state, view.my_seat, self.places
        ):
            if isinstance(intent, SubmitMove):
                self._submit(intent, now)
            elif isinstance(intent, PressButton):
                if intent.name == "help":
                    self.help = not self.help
                elif intent.name == "leave":
                    self.leave()
            elif isinstance(intent, Hint):
                self.toasts.append((now, intent.text))

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.save_replay()
            self.session.leave()

    def save_replay(self) -> None:
        """Practice matches are saved as replays after every round and when left."""
        session = self.session
        if self.replay_file is None or not isinstance(session, PracticeTable | NetworkTable):
            return
        replay = session.replay()
        if replay is None:
            return
        try:
            save_replay(replay, self.replay_file)
        except OSError as exc:
            self.saved_problem = f"the replay could not be saved: {exc.strerror or exc}"

    def to_lobby(self) -> None:
        """Between rounds of a network table: its lobby, on the same session (the table is
        not left; the lobby shows the table again when the next round is dealt)."""
        from .lobby_screen import LobbyScreen

        if not isinstance(self.session, NetworkTable):
            return
        self._closed = True  # handed over: closing this screen must not leave the table
        self.app.show(LobbyScreen(self.app, self.session))

    def leave(self) -> None:
        self.close()
        pygame.display.set_caption("Nerts")
        self.app.show(self.app.start_screen())

    # --- intents and notices ---------------------------------------------------------------

    def _submit(self, intent: SubmitMove, now: float) -> None:
        rejection = self.session.submit(intent.move)
        move = intent.move
        if rejection is not None:
            self.toasts.append((now, rejection.message))
            self.app.sounds.play("reject")
            if intent.dropped_at is not None and move.card >= 0:
                self.renderer.dropped_at(move.card, *intent.dropped_at)
            return
        if intent.dropped_at is not None and move.card >= 0:
            # It lands from where it was let go, not from its old pile.
            self.renderer.dropped_at(move.card, *intent.dropped_at)
        self.app.sounds.play("turn" if move.action in (TURN, RECYCLE) else "place")

    def _notice(self, notice: object, now: float) -> None:
        if isinstance(notice, RaceLostNotice):
            self.renderer.send_back(notice.move.card & CARD_MASK)
            self.banners.append((now, notice.text))
            self.app.sounds.play("race")
        elif isinstance(notice, NertsNotice):
            self.banners.append((now, notice.text))
            self.app.sounds.play("nerts")
        elif isinstance(notice, RotationNotice | MessageNotice):
            self.banners.append((now, notice.text))
        elif isinstance(notice, RoundScoredNotice):
            self.banners.append((now, f"Round {notice.result.round} scored"))
            self.save_replay()
        del self.banners[:-3]
        del self.toasts[:-3]

    # --- input ---------------------------------------------------------------------------

    def _translate(self, event: pygame.event.Event, now: float) -> InputEvent | None:
        if event.type == pygame.MOUSEBUTTONDOWN and event.button in (1, 3):
            pos = event.pos
            double = False
            if self._last_click is not None:
                at, button, (px, py) = self._last_click
                double = (
                    button == event.button
                    and now - at < DOUBLE_CLICK
                    and abs(px - pos[0]) + abs(py - pos[1]) < 8
                )
            self._last_click = None if double else (now, event.button, pos)
            return PointerDown(pos[0], pos[1], event.button, double)
        if event.type == pygame.MOUSEMOTION:
            return PointerMove(*event.pos)
        if event.type == pygame.MOUSEBUTTONUP and event.button in (1, 3):
            return PointerUp(event.pos[0], event.pos[1], event.button)
        if event.type == pygame.KEYDOWN:
            if event.unicode == "?":
                return KeyPress("?")
            return KeyPress(pygame.key.name(event.key))
        return None

    # --- overlays --------------------------------------------------------------------------

    def _status(self, surface: pygame.Surface) -> None:
        assert self.layout is not None
        theme = self.app.theme
        view = self.view
        rect = self.layout.status
        pygame.draw.rect(
            surface, theme.panel, pygame.Rect(0, round(rect.y), round(rect.w), round(rect.h) + 1)
        )
        seconds = int(view.elapsed)
        who = (
            "watching · H keys · Q leave"
            if view.watching
            else "Space turn · N D 1-6 select · F foundation · S stuck · C Nerts · H keys"
        )
        line = f"Round {view.round}  {seconds // 60}:{seconds % 60:02d}   {who}"
        if view.phase == LOBBY:
            line = "Dealing the next round..."
        text = self.app.fonts.text(line, rect.h * 0.8, theme.dim_text)
        surface.blit(text, (8, rect.y + (rect.h - text.get_height()) / 2))

    def _announcements(self, surface: pygame.Surface, now: float) -> None:
        assert self.layout is not None
        theme = self.app.theme
        fonts = self.app.fonts
        centre = self.layout.centre
        live = [text for at, text in self.banners if now - at < BANNER_SECONDS]
        k = self.app.scale
        size = max(20.0 * k, min(40.0 * k, centre.h * 0.16))
        y = centre.y + centre.h / 2 - len(live) * size / 2
        for text in live[-2:]:
            image = fonts.text(text, size, theme.text, True)
            box = image.get_rect(center=(round(centre.center[0]), round(y + size / 2)))
            panel(surface, box.inflate(30, 14), theme.panel, 215)
            surface.blit(image, box)
            y += size * 1.5
        toasts = [text for at, text in self.toasts if now - at < TOAST_SECONDS]
        if toasts:
            own = self.layout.seats[self.view.my_seat] if self.view.my_seat is not None else None
            bottom = own.box.y - 6 if own is not None else self.layout.status.y - 6
            text = toasts[-1]
            image = fonts.text(text, max(16.0 * k, size * 0.6), theme.warn, True)
            box = image.get_rect(midbottom=(round(self.layout.width / 2), round(bottom)))
            panel(surface, box.inflate(24, 10), theme.panel, 230)
            surface.blit(image, box)

    def _help(self, surface: pygame.Surface) -> None:
        width, height = self.app.size
        rect = pygame.Rect(width * 0.12, height * 0.1, width * 0.76, height * 0.8)
        panel(surface, rect, self.app.theme.panel, 240)
        size = min(rect.h / (len(HELP_LINES) + 3), 28 * self.app.scale)
        text_lines(
            surface,
            self.app.fonts,
            HELP_LINES + ["", "(any key or click closes this)"],
            rect.x + 24,
            rect.y + 20,
            size,
            self.app.theme.text,
        )


def _practice(session: TableSession) -> bool:
    """A practice table (ours, against bots): its matches are saved as the window's replays
    (a network table keeps its signed log instead, `NetworkTable._save_replay`)."""
    return isinstance(session, PracticeTable) or (
        isinstance(session, NetworkTable) and session.practice
    )
