"""The lobby of a network table: who sits where and who is ready, the table's rules in
words; the host adds and removes bots and starts the round once everyone is ready, the
others say they are ready. When a round is dealt the table screen takes over (the same
one practice uses), on the same session."""

from __future__ import annotations

import pygame

from .lobby_model import LobbyView
from .netsession import NetworkTable
from .replica_view import rules_in_words
from .screen import App
from .session import ENDED, PLAYING, MessageNotice
from .widgets import Button, button_at, text_lines

NOTICE_SECONDS = 4.0


class LobbyScreen:
    def __init__(self, app: App, table: NetworkTable) -> None:
        self.app = app
        self.table = table
        self.lobby: LobbyView = table.lobby()
        self.messages: list[tuple[float, str]] = []
        self._handed_over = False
        self._closed = False

    # --- what may be done ------------------------------------------------------------------

    def buttons(self) -> list[Button]:
        width, height = self.app.size
        lobby = self.lobby
        k = self.app.scale
        bw, bh = int(min(300 * k, (width - 80) // 3)), int(max(36 * k, min(52 * k, height / 16)))
        y = height - bh - 24
        out: list[Button] = []
        if self.table.problem is None and lobby.joined and lobby.playing:
            if lobby.starter:
                free = len(lobby.seats) < lobby.seats_max
                out.append(Button("add", "Add a bot (A)", pygame.Rect(0, 0, bw, bh), free))
                out.append(
                    Button("remove", "Remove a bot (R)", pygame.Rect(0, 0, bw, bh), lobby.bots > 0)
                )
                label = "Start the round (Enter)" if lobby.can_start else "Waiting for everyone..."
                out.append(Button("start", label, pygame.Rect(0, 0, bw, bh), lobby.can_start))
            else:
                label = "Ready (Enter)" if not lobby.i_am_ready else "Ready: waiting for the host"
                out.append(Button("ready", label, pygame.Rect(0, 0, bw, bh), not lobby.i_am_ready))
        out.append(Button("leave", "Leave (Esc)", pygame.Rect(0, 0, bw, bh)))
        total = len(out) * bw + (len(out) - 1) * 16
        x = (width - total) // 2
        placed = []
        for button in out:
            placed.append(
                Button(button.name, button.label, pygame.Rect(x, y, bw, bh), button.enabled)
            )
            x += bw + 16
        return placed

    def handle(self, event: pygame.event.Event, now: float) -> None:
        name = None
        if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            button = button_at(self.buttons(), event.pos)
            name = button.name if button else None
        elif event.type == pygame.KEYDOWN:
            key = pygame.key.name(event.key)
            wanted = {
                "escape": "leave",
                "q": "leave",
                "a": "add",
                "r": "remove",
                "return": "start" if self.lobby.starter else "ready",
                "enter": "start" if self.lobby.starter else "ready",
            }.get(key)
            enabled = {b.name for b in self.buttons() if b.enabled}
            name = wanted if wanted in enabled else None
        if name is not None:
            self.choose(name)

    def choose(self, name: str) -> None:
        table = self.table
        if name == "add":
            table.add_bot()
        elif name == "remove":
            table.remove_bot()
        elif name in ("start", "ready"):
            table.ready()  # the host's start is its ready: the round starts once all are
        elif name == "leave":
            self.close()
            self.app.show(self.app.start_screen())

    # --- frame ---------------------------------------------------------------------------

    def update(self, now: float) -> None:
        table = self.table
        table.advance(now)
        for notice in table.notices():
            if isinstance(notice, MessageNotice):
                self.messages.append((now, notice.text))
        del self.messages[:-3]
        self.lobby = table.lobby()
        if table.problem is None and self._round_to_show():
            from .table_screen import TableScreen

            self._handed_over = True
            self.app.show(TableScreen(self.app, table))

    def _round_to_show(self) -> bool:
        """A round is on that we play in (or, watching, any round)."""
        replica = self.table.replica
        rnd = replica.current_round
        if rnd is None or rnd.final is not None:
            return False
        if not self.lobby.playing:
            return True
        return self.table.view().phase in (PLAYING, ENDED) and replica.seat is not None

    def draw(self, surface: pygame.Surface, now: float) -> None:
        app, lobby, table = self.app, self.lobby, self.table
        theme, fonts = app.theme, app.fonts
        width, height = app.size
        surface.fill(theme.felt)
        k = app.scale
        size = max(16.0 * k, min(30.0 * k, height / 30))
        title = fonts.text(f"Table: {lobby.table_name}", size * 1.6, theme.text, True)
        surface.blit(title, title.get_rect(midtop=(width / 2, 18)))
        y = 18 + title.get_height() + 10
        if not lobby.joined:
            status = "Asking the host for the table..."
        elif not lobby.playing:
            status = "You are watching: the table shows when a round starts."
        elif lobby.starter:
            status = "You host this table: start the round once everyone is ready."
        elif self.table.replica.upcoming_round() is None:
            status = "A round is being played: you sit in from the next one."
        else:
            status = "Say you are ready; the host starts the round."
        line = fonts.text(status, size, theme.dim_text)
        surface.blit(line, line.get_rect(midtop=(width / 2, y)))
        y += int(size * 2)
        x = int(width * 0.1)
        heading = f"Seats ({len(lobby.seats)} of {lobby.seats_max or '?'} taken)"
        surface.blit(fonts.text(heading, size, theme.text, True), (x, y))
        y += int(size * 1.4)
        for number in range(max(lobby.seats_max, len(lobby.seats))):
            if number < len(lobby.seats):
                seat = lobby.seats[number]
                tags = [
                    t for t, on in (("you", seat.me), ("host", seat.host), ("bot", seat.bot)) if on
                ]
                name = seat.name + (f"  ({', '.join(tags)})" if tags else "")
                ready = "ready" if seat.ready else "not ready"
                colour = theme.settled if seat.ready else theme.text
                surface.blit(fonts.text(f"{number + 1}. {name}", size, theme.text), (x, y))
                surface.blit(fonts.text(ready, size, colour, True), (int(width * 0.42), y))
            else:
                surface.blit(fonts.text(f"{number + 1}. (open seat)", size, theme.dim_text), (x, y))
            y += int(size * 1.25)
        if lobby.spectators:
            watching = f"{lobby.spectators} watching"
            surface.blit(fonts.text(watching, size * 0.85, theme.dim_text), (x, y + 4))
        rules_x = int(width * 0.56)
        ry = int(18 + title.get_height() + 10 + size * 2)
        surface.blit(fonts.text("Rules", size, theme.text, True), (rules_x, ry))
        lines = rules_in_words(lobby.rules) if lobby.rules is not None else ["(not known yet)"]
        wrapped = [piece for line in lines for piece in _wrap(line, 44)]
        text_lines(
            surface, fonts, wrapped, rules_x, int(ry + size * 1.4), size * 0.85, theme.dim_text
        )
        for button in self.buttons():
            button.draw(surface, fonts, theme)
        bottom = height - int(max(36 * k, min(52 * k, height / 16))) - 40
        live = [text for at, text in self.messages if now - at < NOTICE_SECONDS]
        if table.problem is not None:
            live = [table.problem[0].upper() + table.problem[1:]]
        for text in reversed(live):
            image = fonts.text(text, size, theme.warn, True)
            surface.blit(image, image.get_rect(midbottom=(width / 2, bottom)))
            bottom -= int(size * 1.3)

    def close(self) -> None:
        """Leaving the lobby leaves the table, unless the table screen took it over."""
        if not self._handed_over and not self._closed:
            self._closed = True
            self.table.leave()


def _wrap(line: str, width: int) -> list[str]:
    out, current = [], ""
    for word in line.split():
        if current and len(current) + 1 + len(word) > width:
            out.append(current)
            current = word
        else:
            current = f"{current} {word}".strip()
    return [*out, current] if current else out


def enter_lobby(app: App, came_from: object, table: NetworkTable) -> None:
    """A table opened or joined from screen `came_from`: serve it and show its lobby, or
    leave it at once if the player went back from that screen meanwhile."""
    if app.screen is not came_from:
        table.leave()
        return
    app.spawn(table.serve, table.fail)
    app.show(LobbyScreen(app, table))
