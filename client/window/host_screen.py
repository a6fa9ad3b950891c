"""Hosting a table on the network: its name, seats, bots, how the match ends, spectators,
the port, a passphrase (a private table); then the lobby. A problem (the port in use, an
address not of this machine) is said on the screen in plain words."""

from __future__ import annotations

import pygame

from nerts_p2p.game.bots import LEVELS, level_named
from nerts_p2p.game.rules import Rules
from protocol.messages import fit_name, name_problem, printable_name

from .net_open import host_table
from .netsession import NetworkTable
from .screen import App
from .widgets import Button, TextField, button_at, menu_column, screen_title, text_lines

#: How a match ends: (label, target points, rounds; 0 = no round limit).
MATCH_ENDS: tuple[tuple[str, int, int], ...] = (
    ("to 100 points", 100, 0),
    ("to 50 points", 50, 0),
    ("to 150 points", 150, 0),
    ("to 200 points", 200, 0),
    ("1 round", 100, 1),
    ("3 rounds (or 100 points)", 100, 3),
    ("5 rounds (or 100 points)", 100, 5),
)
LEVEL_ORDER = list(LEVELS)


class HostScreen:
    def __init__(self, app: App) -> None:
        self.app = app
        self.table_name = TextField(fit_name(app.settings.name, "'s table"), max_len=32)
        self.port = TextField("", max_len=5, digits_only=True)
        self.passphrase = TextField("", max_len=64, secret=True)
        self.seats = 4
        self.bots = 1
        self.level = "casual"
        self.match_end = 0
        self.spectators = True
        self.problem = ""
        self.opening = False

    # --- what the host chose -------------------------------------------------------------

    def rules(self) -> Rules:
        _, target, rounds = MATCH_ENDS[self.match_end]
        return Rules(seats=self.seats, target=target, match_rounds=rounds)

    def port_number(self) -> int | None:
        """The port typed (empty: any free one); None if it is not a port."""
        text = self.port.text.strip()
        if not text:
            return 0
        number = int(text)
        return number if 0 <= number <= 65535 else None

    def buttons(self) -> list[Button]:
        width, height = self.app.size
        items = [
            ("name", f"Table name: {self.table_name.shown()}"),
            ("seats", f"Seats: {self.seats}"),
            ("bots", f"Bots: {self.bots}"),
            ("level", f"Bot level: {self.level}"),
            ("match", f"Match: {MATCH_ENDS[self.match_end][0]}"),
            ("spectators", f"Spectators: {'welcome' if self.spectators else 'not welcome'}"),
            ("port", f"UDP port: {self.port.shown() or 'any free one'}"),
            (
                "passphrase",
                f"Passphrase: {self.passphrase.shown() or 'none (an open table)'}",
            ),
            ("open", "Opening..." if self.opening else "Open the table  (Enter)"),
            ("back", "Back  (Esc)"),
        ]
        return menu_column(
            items, (width, height), self.app.scale, top=0.14, max_width=600, max_height=50
        )

    # --- input -----------------------------------------------------------------------------

    def handle(self, event: pygame.event.Event, now: float) -> None:
        for field in (self.table_name, self.port, self.passphrase):
            if field.key(event):
                return
        name = None
        if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            self.table_name.editing = self.port.editing = self.passphrase.editing = False
            button = button_at(self.buttons(), event.pos)
            name = button.name if button else None
        elif event.type == pygame.KEYDOWN:
            name = {"return": "open", "enter": "open", "escape": "back"}.get(
                pygame.key.name(event.key)
            )
        if name is not None:
            self.choose(name)

    def choose(self, name: str) -> None:
        if name == "name":
            self.table_name.editing = True
        elif name == "port":
            self.port.editing = True
        elif name == "passphrase":
            self.passphrase.editing = True
        elif name == "seats":
            self.seats = self.seats + 1 if self.seats < 8 else 2
            self.bots = min(self.bots, self.seats - 1)
        elif name == "bots":
            self.bots = (self.bots + 1) % self.seats
        elif name == "level":
            self.level = LEVEL_ORDER[(LEVEL_ORDER.index(self.level) + 1) % len(LEVEL_ORDER)]
        elif name == "match":
            self.match_end = (self.match_end + 1) % len(MATCH_ENDS)
        elif name == "spectators":
            self.spectators = not self.spectators
        elif name == "open":
            self.open()
        elif name == "back":
            self.app.show(self.app.start_screen())

    def open(self) -> None:
        if self.opening:
            return
        port = self.port_number()
        if port is None:
            self.problem = f"the port must be 0 to 65535, not {self.port.text}"
            return
        name = printable_name(self.table_name.text)
        problem = name_problem(name) if name else "the table needs a name"
        if problem is not None:
            self.problem = problem
            return
        self.problem = ""
        self.opening = True
        app = self.app

        async def opening() -> None:
            try:
                table = await host_table(
                    app.interface,
                    table_name=name,
                    player_name=app.settings.name,
                    rules=self.rules(),
                    spectators=self.spectators,
                    port=port,
                    bots=self.bots,
                    bot_level=level_named(self.level),
                    passphrase=self.passphrase.text,
                    data_dir=app.data_dir,
                )
            finally:
                self.opening = False
            self.opened(table)

        app.spawn(opening, self.failed)

    def opened(self, table: NetworkTable) -> None:
        from .lobby_screen import enter_lobby

        enter_lobby(self.app, self, table)

    def failed(self, problem: str) -> None:
        self.problem = f"The table could not be opened: {problem}"

    # --- frame ---------------------------------------------------------------------------

    def update(self, now: float) -> None:
        pass

    def draw(self, surface: pygame.Surface, now: float) -> None:
        app = self.app
        theme, fonts = app.theme, app.fonts
        width, height = app.size
        surface.fill(theme.felt)
        screen_title(surface, fonts, theme, "Host a table", height * 0.06, height * 0.03)
        editing = {
            "name": self.table_name.editing,
            "port": self.port.editing,
            "passphrase": self.passphrase.editing,
        }
        for button in self.buttons():
            button.draw(surface, fonts, theme, active=editing.get(button.name, False))
        lines = [f"Announced on {app.interface}; you play as {app.settings.name}."]
        colour = theme.dim_text
        if self.problem:
            lines = [self.problem]
            colour = theme.warn
        text_lines(
            surface,
            fonts,
            lines,
            width // 2,
            int(height * 0.88),
            height * 0.03,
            colour,
            centre=True,
        )

    def close(self) -> None:
        pass
