"""The table screen: play (or watch) a round of a `TableSession`.

Each frame: let the session run to now, read its view, lay out the window, draw, and turn
input into intents. Notices become a banner in the middle (a race lost and who won, the
stocks rotated, Nerts called) or a short toast (the engine's reason for a refused move).
When the round is scored the round end screen takes over.
"""

from __future__ import annotations

import pygame

from nerts_p2p.game.cards import CARD_MASK
from nerts_p2p.game.moves import RECYCLE, TURN

from .art import Fonts
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
from .layout import CardPlace, TableLayout, card_places, table_layout
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
    RoundResult,
    RoundScoredNotice,
    TableSession,
    TableView,
)
from .settings import new_replay_path, seat_colours
from .table_render import TableRenderer
from .widgets import panel, text_lines

TOAST_SECONDS = 2.6
BANNER_SECONDS = 3.0
DOUBLE_CLICK = 0.35

HELP_LINES = [
    "Mouse",
    "  drag a card (or a run of a work pile) and drop it on a pile or a foundation",
    "  click a card, then click where it goes (two-click move)",
    "  double-click or right-click a card: to a foundation it fits",
    "  click your stock: turn three cards (turns the waste over when empty)",
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
    def __init__(self, app: App, session: TableSession, *, on_leave: object = None) -> None:
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
        self._last_click: tuple[float, int, tuple[int, int]] | None = None
        self.round_end: RoundEndScreen | None = None
        self._closed = False
        self._title = ""
        self.replay_file = new_replay_path() if isinstance(session, PracticeTable) else None
        self.saved_problem = ""

    # --- the frame loop's calls ----------------------------------------------------------

    def update(self, now: float) -> None:
        self.session.advance(now)
        for notice in self.session.notices():
            self._notice(notice, now)
        self.view = self.session.view()
        if self.view.phase == SCORED and self.round_end is None and self.view.results:
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
                width, height, seats, self.view.my_seat, self.view.rules.work_piles
            )
            for sl in self.layout.seats[:1] + tuple(
                s for s in self.layout.seats if s.seat == self.view.my_seat
            ):
                self.renderer.art(sl.card_w, sl.card_h).warm()
            self.renderer.art(self.layout.foundation_w, self.layout.foundation_h).warm()
        self.places = card_places(layout, state) if state is not None else []

    def draw(self, surface: pygame.Surface, now: float) -> None:
        if self.round_end is not None:
            self.round_end.draw(surface, now)
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
        self._announcements(surface, now)
        if self.help:
            self._help(surface)

    def handle(self, event: pygame.event.Event, now: float) -> None:
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
        if self.replay_file is None or not isinstance(self.session, PracticeTable):
            return
        replay = self.session.replay()
        if replay is None:
            return
        try:
            save_replay(replay, self.replay_file)
        except OSError as exc:
            self.saved_problem = f"the replay could not be saved: {exc.strerror or exc}"

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
            "watching"
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
        size = max(20.0, min(40.0, centre.h * 0.16))
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
            image = fonts.text(text, max(16.0, size * 0.6), theme.warn, True)
            box = image.get_rect(midbottom=(round(self.layout.width / 2), round(bottom)))
            panel(surface, box.inflate(24, 10), theme.panel, 230)
            surface.blit(image, box)

    def _help(self, surface: pygame.Surface) -> None:
        width, height = self.app.size
        rect = pygame.Rect(width * 0.12, height * 0.1, width * 0.76, height * 0.8)
        panel(surface, rect, self.app.theme.panel, 240)
        size = min(rect.h / (len(HELP_LINES) + 3), 28)
        text_lines(
            surface,
            self.app.fonts,
            HELP_LINES + ["", "(any key or click closes this)"],
            rect.x + 24,
            rect.y + 20,
            size,
            self.app.theme.text,
        )


# --- the round end screen --------------------------------------------------------------------


class RoundEndScreen:
    """Each seat's score and why, cheaters named, the match table and a chart of totals."""

    def __init__(self, app: App, table: TableScreen) -> None:
        self.app = app
        self.table = table

    def buttons(self) -> list[tuple[str, str, pygame.Rect]]:
        width, height = self.app.size
        view = self.table.view
        result = view.results[-1]
        out = []
        bw, bh = 220, 48
        y = height - bh - 24
        if result.match_winner is None and not view.watching:
            out.append(("next", "Next round (Enter)", pygame.Rect(width / 2 - bw - 10, y, bw, bh)))
        out.append(("leave", "Leave (Q)", pygame.Rect(width / 2 + 10, y, bw, bh)))
        return out

    def handle(self, event: pygame.event.Event, now: float) -> None:
        chosen = None
        if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            chosen = next(
                (name for name, _, rect in self.buttons() if rect.collidepoint(event.pos)), None
            )
        elif event.type == pygame.KEYDOWN:
            key = pygame.key.name(event.key)
            chosen = {
                "return": "next",
                "enter": "next",
                "space": "next",
                "q": "leave",
                "escape": "leave",
            }.get(key)
        if chosen == "next" and any(name == "next" for name, _, _ in self.buttons()):
            self.table.session.next_round()
        elif chosen == "leave":
            self.table.leave()

    def draw(self, surface: pygame.Surface, now: float) -> None:
        app, view = self.app, self.table.view
        theme, fonts = app.theme, app.fonts
        width, height = app.size
        surface.fill(theme.felt)
        result = view.results[-1]
        names = view.names
        size = max(16.0, min(30.0, height / 30))
        y = 20
        how = (
            f"Nerts! called by {names[result.called_by]}"
            if result.called_by is not None
            else "every seat was stuck"
        )
        title = fonts.text(f"Round {result.round} over: {how}", size * 1.4, theme.text, True)
        surface.blit(title, title.get_rect(midtop=(width / 2, y)))
        y += int(size * 2.2)
        headers = ["seat", "on foundations", "left in Nerts", "called", "round", "total"]
        xs = [width * f for f in (0.08, 0.33, 0.5, 0.64, 0.74, 0.84)]
        for x, h in zip(xs, headers, strict=True):
            surface.blit(fonts.text(h, size, theme.dim_text, True), (x, y))
        y += int(size * 1.3)
        penalty = view.rules.nerts_penalty
        colours = seat_colours(app.settings.colour, len(names), view.my_seat)
        for score in result.scores:
            seat = score.seat
            pygame.draw.rect(
                surface, colours[seat], (xs[0] - 22, y + 3, 14, size * 0.7), border_radius=3
            )
            name = names[seat] + (" (you)" if seat == view.my_seat else "")
            cells = [
                name,
                f"+{score.foundation_cards}",
                f"{score.nerts_left} (-{penalty * score.nerts_left})" if score.nerts_left else "0",
                "yes" + (f" (+{view.rules.caller_bonus})" if view.rules.caller_bonus else "")
                if score.called
                else "",
                f"{score.score:+d}",
                str(result.totals[seat]),
            ]
            colour = theme.warn if seat in result.cheaters else theme.text
            for x, cell in zip(xs, cells, strict=True):
                surface.blit(fonts.text(cell, size, colour), (x, y))
            y += int(size * 1.2)
        if result.cheaters:
            cheats = ", ".join(names[s] for s in sorted(result.cheaters))
            line = (
                f"The audit caught {cheats}: the deal did not match the commitment; "
                "no points this round."
            )
            surface.blit(fonts.text(line, size, theme.warn, True), (xs[0], y + 4))
            y += int(size * 1.4)
        else:
            surface.blit(
                fonts.text(
                    "Audit: every deal matched its commitment.", size * 0.85, theme.dim_text
                ),
                (xs[0], y + 4),
            )
            y += int(size * 1.4)
        if result.match_winner is not None:
            winner = result.match_winner
            line = f"{names[winner]} wins the match with {result.totals[winner]}!"
            image = fonts.text(line, size * 1.3, theme.settled, True)
            surface.blit(image, image.get_rect(midtop=(width / 2, y)))
            y += int(size * 1.8)
        y += int(size * 0.6)
        # The match table across rounds, and a chart of the running totals beside it.
        table_w = width * 0.46
        surface.blit(fonts.text("Match", size, theme.dim_text, True), (xs[0], y))
        row_y = y + int(size * 1.2)
        shown = view.results[-8:]
        col_w = (table_w - 120) / max(1, len(shown))
        for i, r in enumerate(shown):
            surface.blit(
                fonts.text(f"R{r.round}", size * 0.85, theme.dim_text),
                (xs[0] + 120 + i * col_w, row_y),
            )
        row_y += int(size)
        for seat in range(len(names)):
            surface.blit(fonts.text(names[seat][:14], size * 0.85, colours[seat]), (xs[0], row_y))
            for i, r in enumerate(shown):
                if seat < len(r.scores):
                    surface.blit(
                        fonts.text(f"{r.scores[seat].score:+d}", size * 0.85, theme.text),
                        (xs[0] + 120 + i * col_w, row_y),
                    )
            row_y += int(size * 0.95)
        chart = pygame.Rect(width * 0.56, y, width * 0.38, max(80, height - y - 100))
        running_totals_chart(
            surface,
            fonts,
            chart,
            view.results,
            colours,
            view.rules.target,
            theme.text,
            theme.felt_dark,
        )
        for _name, label, rect in self.buttons():
            pygame.draw.rect(surface, theme.button, rect, border_radius=10)
            image = fonts.text(label, rect.h * 0.42, theme.button_text, True)
            surface.blit(image, image.get_rect(center=rect.center))
        if view.watching and result.match_winner is None:
            line = "The bots deal the next round in a few seconds."
            image = fonts.text(line, size * 0.85, theme.dim_text)
            surface.blit(image, image.get_rect(midbottom=(width / 2, height - 84)))


def running_totals_chart(
    surface: pygame.Surface,
    fonts: Fonts,
    rect: pygame.Rect,
    results: tuple[RoundResult, ...],
    colours: list[tuple[int, int, int]],
    target: int,
    text_colour: tuple[int, int, int],
    back: tuple[int, int, int],
) -> None:
    """One line per seat: its total after each round, with the target as a dashed line."""
    pygame.draw.rect(surface, back, rect, border_radius=8)
    rows = list(results)
    if not rows:
        return
    seats = len(rows[-1].totals)
    series = [[0] + [r.totals[s] for r in rows] for s in range(seats)]
    low = min(0, *(v for line in series for v in line))
    high = max(target, *(v for line in series for v in line))
    span = max(1, high - low)
    pad = 14

    def point(i: int, v: int) -> tuple[int, int]:
        x = rect.x + pad + (rect.w - 2 * pad) * i / max(1, len(rows))
        y = rect.bottom - pad - (rect.h - 2 * pad) * (v - low) / span
        return round(x), round(y)

    zero_y = point(0, 0)[1]
    pygame.draw.line(
        surface, (120, 120, 120), (rect.x + pad, zero_y), (rect.right - pad, zero_y), 1
    )
    target_y = point(0, target)[1]
    for x in range(rect.x + pad, rect.right - pad, 12):
        pygame.draw.line(surface, text_colour, (x, target_y), (x + 6, target_y), 1)
    label = fonts.text(f"target {target}", 16, text_colour)
    surface.blit(label, (rect.right - pad - label.get_width(), target_y - 16))
    for s, line in enumerate(series):
        points = [point(i, v) for i, v in enumerate(line)]
        pygame.draw.lines(surface, colours[s % len(colours)], False, points, 3)
        for p in points:
            pygame.draw.circle(surface, colours[s % len(colours)], p, 4)
