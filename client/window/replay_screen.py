"""Playing a saved match back: pause, step, speed and a round picker.

`ReplayPlayer` is the clock of a replay (pure: which round, how many moves shown, at what
speed); `ReplayScreen` draws its position with the spectator's layout of every seat.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pygame

from nerts_p2p.game.state import GameState

from .layout import card_places, table_layout
from .replay_file import Replay
from .screen import App
from .session import PLAYING, SCORED, RoundResult, TableView
from .settings import seat_colours
from .table_render import TableRenderer
from .widgets import Button, button_at

SPEEDS = (0.5, 1.0, 2.0, 4.0, 8.0)


@dataclass
class ReplayPlayer:
    replay: Replay
    round_index: int = 0
    position: int = 0  # moves applied
    clock: float = 0.0  # seconds into the round
    speed: float = 1.0
    paused: bool = False
    _states: list[GameState] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.pick_round(self.round_index)

    @property
    def round(self) -> object:
        return self.replay.rounds[self.round_index]

    def pick_round(self, index: int) -> None:
        self.round_index = max(0, min(len(self.replay.rounds) - 1, index))
        self._states = self.replay.rounds[self.round_index].states(self.replay.rules)
        self.position, self.clock = 0, 0.0

    @property
    def moves(self) -> int:
        return len(self._states) - 1

    @property
    def state(self) -> GameState:
        return self._states[self.position]

    @property
    def finished(self) -> bool:
        return self.position >= self.moves

    def advance(self, seconds: float) -> None:
        if self.paused or self.finished:
            return
        self.clock += seconds * self.speed
        moves = self.replay.rounds[self.round_index].moves
        while self.position < len(moves) and moves[self.position].at <= self.clock:
            self.position += 1

    def step(self, delta: int) -> None:
        """One move forwards or back (pauses playback, as a player stepping expects)."""
        self.paused = True
        self.position = max(0, min(self.moves, self.position + delta))
        moves = self.replay.rounds[self.round_index].moves
        self.clock = moves[self.position - 1].at if self.position else 0.0

    def faster(self, up: bool) -> None:
        i = SPEEDS.index(self.speed) if self.speed in SPEEDS else 1
        self.speed = SPEEDS[max(0, min(len(SPEEDS) - 1, i + (1 if up else -1)))]

    def results(self) -> tuple[RoundResult, ...]:
        out = []
        for rnd in self.replay.rounds[: self.round_index + 1]:
            r = rnd.result
            if r is not None:
                out.append(
                    RoundResult(
                        rnd.number, r.scores, r.cheaters, r.totals, r.ended_by, r.called_by, None
                    )
                )
        return tuple(out)


class ReplayScreen:
    def __init__(self, app: App, replay: Replay, now: float) -> None:
        self.app = app
        self.player = ReplayPlayer(replay)
        self.last = now
        settings = app.settings
        self.renderer = TableRenderer(
            app.fonts,
            app.arts,
            four_colour=settings.four_colour,
            high_contrast=settings.high_contrast,
        )

    def buttons(self) -> list[Button]:
        width, height = self.app.size
        bh = self.bar_height() - 8
        y = height - bh - 4
        labels = [
            ("prev_round", "<< round"),
            ("back_step", "< step"),
            ("pause", "play" if self.player.paused else "pause"),
            ("step", "step >"),
            ("slower", "slower"),
            ("faster", "faster"),
            ("next_round", "round >>"),
            ("leave", "back (Esc)"),
        ]
        bw = min(120, (width - 40) // len(labels) - 6)
        x0 = (width - len(labels) * (bw + 6)) // 2
        return [
            Button(name, label, pygame.Rect(x0 + i * (bw + 6), y, bw, bh))
            for i, (name, label) in enumerate(labels)
        ]

    def bar_height(self) -> int:
        return max(round(30 * self.app.scale), int(self.app.size[1] * 0.05))

    def handle(self, event: pygame.event.Event, now: float) -> None:
        name = None
        if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            button = button_at(self.buttons(), event.pos)
            name = button.name if button else None
        elif event.type == pygame.KEYDOWN:
            name = {
                "space": "pause",
                "right": "step",
                "left": "back_step",
                "up": "faster",
                "down": "slower",
                "page up": "prev_round",
                "page down": "next_round",
                "[": "prev_round",
                "]": "next_round",
                "escape": "leave",
                "q": "leave",
            }.get(pygame.key.name(event.key))
        player = self.player
        if name == "pause":
            player.paused = not player.paused
        elif name == "step":
            player.step(1)
        elif name == "back_step":
            player.step(-1)
        elif name in ("faster", "slower"):
            player.faster(name == "faster")
        elif name in ("prev_round", "next_round"):
            player.pick_round(player.round_index + (1 if name == "next_round" else -1))
        elif name == "leave":
            self.app.show(self.app.start_screen())

    def update(self, now: float) -> None:
        self.player.advance(now - self.last)
        self.last = now

    def view(self) -> TableView:
        player = self.player
        replay = player.replay
        rnd = replay.rounds[player.round_index]
        return TableView(
            SCORED if player.finished else PLAYING,
            rnd.seated or replay.rules,
            rnd.names or replay.names,
            None,
            rnd.number,
            player.state,
            results=player.results(),
            elapsed=player.clock,
        )

    def draw(self, surface: pygame.Surface, now: float) -> None:
        app = self.app
        width, height = app.size
        view = self.view()
        surface.fill(app.theme.panel)
        layout = table_layout(
            width,
            height - self.bar_height(),
            view.rules.seats,
            None,
            view.rules.work_piles,
            scale=app.scale,
        )
        assert view.state is not None
        places = card_places(layout, view.state)
        colours = seat_colours(app.settings.colour, view.rules.seats, None)
        self.renderer.draw(surface, layout, view, places, colours, now)
        theme, fonts = app.theme, app.fonts
        for button in self.buttons():
            button.draw(surface, fonts, theme)
        player = self.player
        status = layout.status
        pygame.draw.rect(
            surface, theme.panel, pygame.Rect(0, round(status.y), width, round(status.h) + 1)
        )
        line = (
            f"Replay  round {view.round} ({player.round_index + 1} of "
            f"{len(player.replay.rounds)})   move {player.position} of {player.moves}   "
            f"{player.clock:5.1f} s   speed x{player.speed:g}"
            f"{'   paused' if player.paused else ''}   "
            "Space pause · Left/Right step · Up/Down speed · [ ] round"
        )
        image = fonts.text(line, status.h * 0.8, theme.dim_text)
        surface.blit(image, (8, status.y + (status.h - image.get_height()) / 2))
        result = player.replay.rounds[player.round_index].result
        if player.finished and result is not None:
            names = view.names
            how = (
                f"Nerts! called by {names[result.called_by]}"
                if result.called_by is not None
                else "every seat was stuck"
            )
            scores = "   ".join(f"{names[s.seat]} {s.score:+d}" for s in result.scores)
            image = fonts.text(f"{how}:   {scores}", height * 0.03, theme.text, True)
            box = image.get_rect(center=(width / 2, height * 0.5 - height * 0.05))
            pygame.draw.rect(surface, theme.panel, box.inflate(20, 10), border_radius=8)
            surface.blit(image, box)

    def close(self) -> None:
        pass
