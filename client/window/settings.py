"""The player's settings, kept in the user's config directory (platformdirs).

A missing or damaged file gives the defaults (and says so once); values out of range are
put back in range, so a hand-edited file never stops the window from opening.
`NERTS_P2P_CONFIG_DIR` / `NERTS_P2P_DATA_DIR` move both folders (tests use them).
"""

from __future__ import annotations

import getpass
import json
import os
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import datetime
from pathlib import Path

import platformdirs

from protocol.messages import fit_name, printable_name

APP = "nerts-p2p"
#: Seat colours a player can choose for its card backs (others get the rest in order).
SEAT_COLOURS: tuple[tuple[int, int, int], ...] = (
    (52, 101, 196),  # blue
    (196, 56, 56),  # red
    (48, 150, 84),  # green
    (150, 80, 190),  # purple
    (220, 130, 30),  # orange
    (30, 160, 170),  # teal
    (200, 70, 150),  # pink
    (110, 110, 120),  # slate
)
COLOUR_NAMES = ("blue", "red", "green", "purple", "orange", "teal", "pink", "slate")
WINDOW_SIZES: tuple[tuple[int, int], ...] = ((1024, 640), (1280, 800), (1600, 1000), (1920, 1200))
#: UI scales a player can choose (0: auto, from the display).
UI_SCALES: tuple[float, ...] = (0.0, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0)
MAX_NAME = 24


#: A player's name when this machine's user has none we can show.
FALLBACK_NAME = "player"


def _fitted(name: str) -> str:
    # At most MAX_NAME characters, and within the wire's 32 bytes of UTF-8 (24 letters
    # with accents would not be).
    name = printable_name(name)[:MAX_NAME]
    return fit_name(name) if name.strip() else ""


def default_name() -> str:
    """The name a player has until they choose one: this machine's login name. Friends who
    open the window for the first time then see each other by name, not all as "you"
    (and a host's table is not offered as "you's table")."""
    try:
        login = getpass.getuser()
    except (KeyError, OSError, ImportError):  # no user database entry, no pwd module
        login = ""
    return _fitted(login) or FALLBACK_NAME


@dataclass(frozen=True)
class Settings:
    name: str = field(default_factory=default_name)
    colour: int = 0  # index into SEAT_COLOURS
    four_colour: bool = False
    high_contrast: bool = False
    sound: bool = True
    width: int = 1280
    height: int = 800
    #: How large the window draws text, buttons and cards: 2 on a high-DPI display, where
    #: the window is also opened twice as large in pixels. 0: chosen from the display.
    ui_scale: float = 0.0

    def cleaned(self) -> Settings:
        name = _fitted(str(self.name)) or default_name()
        scale = float(self.ui_scale)
        return replace(
            self,
            name=name,
            colour=self.colour % len(SEAT_COLOURS),
            width=max(640, min(3840, self.width)),
            height=max(400, min(2160, self.height)),
            ui_scale=0.0 if not scale > 0 else max(1.0, min(3.0, scale)),
        )


def config_dir() -> Path:
    override = os.environ.get("NERTS_P2P_CONFIG_DIR")
    return Path(override) if override else Path(platformdirs.user_config_dir(APP))


def data_dir() -> Path:
    """The commands' data directory too (one key for this machine's user, wherever they
    play from): `nerts_p2p.net.store.default_data_dir`."""
    from nerts_p2p.net.store import default_data_dir

    return default_data_dir()


def replays_dir() -> Path:
    return data_dir() / "replays"


def new_replay_path() -> Path:
    """Where a practice match started now is saved (one file per match)."""
    return replays_dir() / f"practice-{datetime.now().strftime('%Y%m%d-%H%M%S')}.json"


def settings_path() -> Path:
    return config_dir() / "settings.json"


def load_settings(path: Path | None = None) -> tuple[Settings, str]:
    """The saved settings and a problem to tell the player ('' when all is well)."""
    path = path or settings_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Settings(), ""
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        return Settings(), f"settings file {path} could not be read ({exc}); using defaults"
    if not isinstance(data, dict):
        return Settings(), f"settings file {path} is not an object; using defaults"
    values: dict[str, object] = {}
    defaults = Settings()
    for f in fields(Settings):
        value = data.get(f.name, getattr(defaults, f.name))
        if isinstance(getattr(defaults, f.name), float) and type(value) is int:
            value = float(value)  # "ui_scale": 2 is as good as 2.0
        if type(value) is type(getattr(defaults, f.name)):
            values[f.name] = value
    return Settings(**values).cleaned(), ""  # type: ignore[arg-type]


def save_settings(settings: Settings, path: Path | None = None) -> str:
    """Write the settings; returns a problem to show ('' when saved)."""
    path = path or settings_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(settings.cleaned()), indent=2), encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        return f"settings could not be saved to {path}: {exc.strerror or exc}"
    return ""


def seat_colours(my_colour: int, seats: int, my_seat: int | None) -> list[tuple[int, int, int]]:
    """A colour per seat: ours as chosen, the other seats the remaining colours in order."""
    if my_seat is None:  # watching: every seat its own colour, in order
        return [SEAT_COLOURS[seat % len(SEAT_COLOURS)] for seat in range(seats)]
    mine = my_colour % len(SEAT_COLOURS)
    others = iter([c for i, c in enumerate(SEAT_COLOURS) if i != mine] * 2)
    return [SEAT_COLOURS[mine] if seat == my_seat else next(others) for seat in range(seats)]


def auto_ui_scale(
    window_pixels: tuple[int, int], window_points: tuple[int, int], desktop_width: int
) -> float:
    """The UI scale for a display, where the player chose none: the ratio of the window's
    pixels to its size in screen points where the system reports one (macOS, Wayland),
    else 2 on a desktop at least 3200 pixels wide (a 4K or 5K panel is high-DPI) and 1 below."""
    if window_points[0] > 0 and window_pixels[0] > window_points[0]:
        return max(1.0, min(3.0, round(window_pixels[0] / window_points[0] * 4) / 4))
    return 2.0 if desktop_width >= 3200 else 1.0
