"""The round end screen: each seat's score and why, the audit's verdict, the match table
and a chart of the running totals; next round or leave."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pygame

from .art import Fonts
from .screen import App
from .session import LOBBY, RoundResult
from .settings import seat_colours

if TYPE_CHECKING:
    from .table_screen import TableScreen


class RoundEndScreen:
    """Each seat's score and why, cheaters named, the match table and a chart of totals."""

    def __init__(self, app: App, table: TableScreen) -> None:
        self.app = app
        self.table = table

    def buttons(self) -> list[tuple[str, str, pygame.Rect]]:
        width, height = self.app.size
        view = self.table.view
        result = view.results[-1]
        bw, bh = round(220 * self.app.scale), round(48 * self.app.scale)
        y = height - bh - 24
        wanted = []
        if result.match_winner is None and not view.watching:
            label = "Dealing..." if view.phase == LOBBY else "Next round (Enter)"
            wanted.append(("next", label))
            if self._has_lobby():
                wanted.append(("lobby", "Lobby: seats, bots (L)"))
        wanted.append(("leave", "Leave (Q)"))
        x = width / 2 - (len(wanted) * (bw + 20) - 20) / 2
        out = []
        for name, label in wanted:
            out.append((name, label, pygame.Rect(x, y, bw, bh)))
            x += bw + 20
        return out

    def _has_lobby(self) -> bool:
        """A network table has a lobby between rounds (who sits, bots come and go); a
        practice table's seats are all its own."""
        from .netsession import NetworkTable

        session = self.table.session
        return isinstance(session, NetworkTable) and not session.practice

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
                "l": "lobby",
            }.get(key)
        if chosen == "next" and any(name == "next" for name, _, _ in self.buttons()):
            self.table.session.next_round()
        elif chosen == "lobby" and any(name == "lobby" for name, _, _ in self.buttons()):
            self.table.to_lobby()
        elif chosen == "leave":
            self.table.leave()

    def draw(self, surface: pygame.Surface, now: float) -> None:
        app, view = self.app, self.table.view
        theme, fonts = app.theme, app.fonts
        width, height = app.size
        surface.fill(theme.felt)
        result = view.results[-1]
        names = view.names
        k = app.scale
        size = max(16.0 * k, min(30.0 * k, height / 30))
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
        rows = match_rows(view.results)
        row_colours = [
            colours[row.seat] if row.seat is not None else theme.dim_text for row in rows
        ]
        for row, colour in zip(rows, row_colours, strict=True):
            surface.blit(fonts.text(row.name[:14], size * 0.85, colour), (xs[0], row_y))
            for i, points in enumerate(row.scores[-len(shown) :]):
                if points is not None:
                    surface.blit(
                        fonts.text(f"{points:+d}", size * 0.85, theme.text),
                        (xs[0] + 120 + i * col_w, row_y),
                    )
            row_y += int(size * 0.95)
        chart = pygame.Rect(width * 0.56, y, width * 0.38, max(80, height - y - 100))
        running_totals_chart(
            surface,
            fonts,
            chart,
            rows,
            row_colours,
            view.rules.target,
            theme.text,
            theme.felt_dark,
        )
        for _name, label, rect in self.buttons():
            pygame.draw.rect(surface, theme.button, rect, border_radius=10)
            image = fonts.text(label, rect.h * 0.42, theme.button_text, True)
            surface.blit(image, image.get_rect(center=rect.center))
        if view.watching and result.match_winner is None:
            from .practice import PracticeTable

            line = (
                "The bots deal the next round in a few seconds."
                if isinstance(self.table.session, PracticeTable)
                else "The next round starts when the players are ready."
            )
            image = fonts.text(line, size * 0.85, theme.dim_text)
            surface.blit(image, image.get_rect(midbottom=(width / 2, height - 84)))


@dataclass(frozen=True)
class MatchRow:
    """One player's line of the match table (and of the chart)."""

    name: str
    seat: int | None  # its seat in the last round (None: it did not play that one)
    scores: tuple[int | None, ...]  # per round: its round score (None: it did not play)
    totals: tuple[int | None, ...]  # per round: its match total after it (None: not yet in)


def match_rows(results: tuple[RoundResult, ...]) -> list[MatchRow]:
    """The match table by player, in the order they first sat: players come and go between
    rounds, so a seat number is not a player (results without players: seats are)."""
    keys: list[object] = []
    names: dict[object, str] = {}
    scores: dict[object, list[int | None]] = {}
    totals: dict[object, list[int | None]] = {}
    last_seat: dict[object, int] = {}
    for i, r in enumerate(results):
        for s in range(len(r.totals)):
            key: object = r.players[s] if s < len(r.players) else s
            if key not in names:
                keys.append(key)
                scores[key], totals[key] = [None] * i, [None] * i
            names[key] = r.names[s] if s < len(r.names) else f"seat {s + 1}"
            score = next((x.score for x in r.scores if x.seat == s), None)
            scores[key].append(score)
            totals[key].append(r.totals[s])
            if i == len(results) - 1:
                last_seat[key] = s
        for key in keys:
            if len(scores[key]) < i + 1:  # not at the table this round: its total stays
                scores[key].append(None)
                totals[key].append(totals[key][-1])
    return [MatchRow(names[k], last_seat.get(k), tuple(scores[k]), tuple(totals[k])) for k in keys]


def running_totals_chart(
    surface: pygame.Surface,
    fonts: Fonts,
    rect: pygame.Rect,
    rows: list[MatchRow],
    colours: list[tuple[int, int, int]],
    target: int,
    text_colour: tuple[int, int, int],
    back: tuple[int, int, int],
) -> None:
    """One line per player: its total after each round it was in, from 0 before its
    first, with the target as a dashed line."""
    pygame.draw.rect(surface, back, rect, border_radius=8)
    if not rows:
        return
    rounds = len(rows[0].totals)
    series = []
    for row in rows:
        first = next(i for i, t in enumerate(row.totals) if t is not None)
        series.append(
            [(first, 0)] + [(i + 1, t) for i, t in enumerate(row.totals) if t is not None]
        )
    values = [v for line in series for _, v in line]
    low = min(0, *values)
    high = max(target, *values)
    span = max(1, high - low)
    pad = 14

    def point(i: int, v: int) -> tuple[int, int]:
        x = rect.x + pad + (rect.w - 2 * pad) * i / max(1, rounds)
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
        points = [point(i, v) for i, v in line]
        pygame.draw.lines(surface, colours[s % len(colours)], False, points, 3)
        for p in points:
            pygame.draw.circle(surface, colours[s % len(colours)], p, 4)
