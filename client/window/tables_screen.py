"""The tables found on the network, live: name, seats taken of the most, phase, a padlock
when a passphrase is needed, whether spectators are welcome. A click sits at the table
(Join) or watches it (Spectate); a private table asks for its passphrase first."""

from __future__ import annotations

import pygame
import trio

from nerts_p2p.net.discovery import TableAd, TableBrowser
from protocol.messages import PLAYER

from .app import Task
from .net_open import join_table, taking_back, why_not_join
from .netsession import HOST_ANSWER_TIMEOUT, NetworkTable
from .screen import App
from .widgets import Button, TextField, button_at, column, screen_title, text_lines

#: How often the list is refreshed from what mDNS has seen (seconds).
REFRESH = 0.25
MAX_ROWS = 8


def table_line(ad: TableAd, yours: bool = False) -> str:
    """One row of the list, in words; `yours`: this window was at the table when it
    stopped (it crashed), and takes its seat back there."""
    welcome = "spectators welcome" if ad.spectators else "no spectators"
    line = f"{ad.name}   {ad.seats_taken}/{ad.seats_max} seats   {ad.phase}   {welcome}"
    note = ad.version_note()
    if note is not None:
        line += f"   ({note})"
    return line + ("   (your seat: take it back)" if yours else "")


def draw_padlock(
    surface: pygame.Surface, x: int, y: int, h: int, colour: tuple[int, int, int]
) -> None:
    """A padlock `h` pixels high with its top-left at (x, y)."""
    w = int(h * 0.8)
    body = pygame.Rect(x, y + h * 0.45, w, h * 0.55)
    shackle = pygame.Rect(x + w * 0.18, y, w * 0.64, h * 0.8)
    pygame.draw.arc(surface, colour, shackle, 0, 3.1416, max(2, h // 8))
    pygame.draw.rect(surface, colour, body, border_radius=max(1, h // 10))


class TablesScreen:
    """Join (`role` PLAYER) or spectate (SPECTATOR) a table found on the network."""

    def __init__(self, app: App, role: int = PLAYER) -> None:
        self.app = app
        self.role = role
        self.tables: list[TableAd] = []
        self.looked = False  # a first look at the network is done
        self.problem = ""
        self.joining = False
        #: A private table we were asked to join: its passphrase is being typed.
        self.asking: TableAd | None = None
        self.passphrase = TextField("", max_len=64, secret=True)
        #: Seconds a table's host has to answer before the table counts as gone.
        self.host_timeout = HOST_ANSWER_TIMEOUT
        #: Table id -> whether this window's store was at that table (it takes it back).
        self._ours: dict[bytes, bool] = {}
        self._browse: Task = app.spawn(self._browse_tables, self._browse_failed)

    async def _browse_tables(self) -> None:
        async with TableBrowser(self.app.interface) as browser:
            while True:
                found = await browser.poll()
                self.tables = sorted(found.values(), key=lambda ad: (ad.name, ad.table_id))
                self.looked = True
                await trio.sleep(REFRESH)

    def _yours(self, ad: TableAd) -> bool:
        """Whether our store can take a seat back at this table (read once per table)."""
        if ad.table_id not in self._ours:
            self._ours[ad.table_id] = taking_back(self.app.data_dir, ad)
        return self._ours[ad.table_id]

    def _browse_failed(self, problem: str) -> None:
        self.problem = f"No tables can be looked for: {problem}"

    def buttons(self) -> list[Button]:
        width, height = self.app.size
        rows = [
            (f"table {i}", table_line(ad, self._yours(ad)))
            for i, ad in enumerate(self.tables[:MAX_ROWS])
        ]
        items = [*rows, ("back", "Back  (Esc)")]
        k = self.app.scale
        bh = int(max(30 * k, min(46 * k, height / 18)))
        return column(
            items, width // 2, int(height * 0.18), int(min(820 * k, width - 40)), bh, bh // 4
        )

    def handle(self, event: pygame.event.Event, now: float) -> None:
        if self.asking is not None:
            self._passphrase_key(event)
            return
        name = None
        if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            button = button_at(self.buttons(), event.pos)
            name = button.name if button else None
        elif event.type == pygame.KEYDOWN:
            key = pygame.key.name(event.key)
            if key == "escape":
                name = "back"
            elif key.isdigit() and 1 <= int(key) <= len(self.tables):
                name = f"table {int(key) - 1}"
        if name == "back":
            self.app.show(self.app.start_screen())
        elif name is not None and name.startswith("table "):
            index = int(name.split()[1])
            if index < len(self.tables):
                self.choose(self.tables[index])

    def _passphrase_key(self, event: pygame.event.Event) -> None:
        """Typing a private table's passphrase: Enter joins with it, Esc gives up."""
        if event.type != pygame.KEYDOWN:
            return
        ad = self.asking
        assert ad is not None
        if event.key == pygame.K_ESCAPE:
            self.asking = None
        elif event.key in (pygame.K_RETURN, pygame.K_KP_ENTER):
            if self.passphrase.text:
                self.asking = None
                self.choose(ad, self.passphrase.text)
        else:
            self.passphrase.key(event)

    def choose(self, ad: TableAd, passphrase: str = "") -> None:
        if self.joining:
            return
        problem = why_not_join(ad, self.role, resuming=self._yours(ad))
        if problem is not None:
            self.problem = problem[0].upper() + problem[1:]
            return
        self.problem = ""
        if ad.passphrase and not passphrase:
            self.asking = ad  # a private table: its passphrase first
            self.passphrase = TextField("", max_len=64, secret=True, editing=True)
            return
        self.joining = True
        app = self.app

        async def joining() -> None:
            try:
                table = await join_table(
                    app.interface,
                    ad,
                    player_name=app.settings.name,
                    role=self.role,
                    host_timeout=self.host_timeout,
                    passphrase=passphrase,
                    data_dir=app.data_dir,
                )
            finally:
                self.joining = False
            self.joined(table)

        app.spawn(joining, self._join_failed)

    def joined(self, table: NetworkTable) -> None:
        from .lobby_screen import enter_lobby

        enter_lobby(self.app, self, table)

    def _join_failed(self, problem: str) -> None:
        self.problem = f"The table could not be joined: {problem}"

    def update(self, now: float) -> None:
        pass

    def draw(self, surface: pygame.Surface, now: float) -> None:
        app = self.app
        theme, fonts = app.theme, app.fonts
        width, height = app.size
        surface.fill(theme.felt)
        heading = "Join a table" if self.role == PLAYER else "Spectate a table"
        screen_title(surface, fonts, theme, heading, height * 0.06, height * 0.03)
        what = "sit at" if self.role == PLAYER else "watch"
        sub = fonts.text(
            f"Tables found on {app.interface}: click one to {what} it "
            "(a padlock: it needs a passphrase)",
            height * 0.028,
            theme.dim_text,
        )
        surface.blit(sub, sub.get_rect(midtop=(width / 2, height * 0.11)))
        for i, button in enumerate(self.buttons()):
            ad = self.tables[i] if button.name.startswith("table ") else None
            usable = ad is not None and why_not_join(ad, self.role) is None
            button.draw(surface, fonts, theme, active=usable)
            if ad is not None and ad.passphrase:
                size = int(button.rect.h * 0.6)
                draw_padlock(
                    surface,
                    button.rect.x + 12,
                    button.rect.y + (button.rect.h - size) // 2,
                    size,
                    theme.button_text,
                )
        lines = []
        if not self.tables:
            lines.append("Looking for tables..." if not self.looked else "No tables found yet.")
        if self.joining:
            lines.append("Joining...")
        colour = theme.dim_text
        if self.asking is not None:
            lines = [
                f"Passphrase for {self.asking.name}: {self.passphrase.shown()}",
                "Enter: join with it   Esc: cancel",
            ]
            colour = theme.text
        if self.problem:
            lines = [self.problem]
            colour = theme.warn
        text_lines(
            surface,
            fonts,
            lines,
            width // 2,
            int(height * 0.86),
            height * 0.03,
            colour,
            centre=True,
        )

    def close(self) -> None:
        self._browse.cancel()
