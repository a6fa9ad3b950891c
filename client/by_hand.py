"""`nerts-p2p host`, `join`, `spectate` and `play --bots N` without `--headless`: a person
plays this peer's seat (or watches) in the window, opened straight at the table the
command names (`client.window.from_cli`).

The command finds and opens the table first, with the same words and exit codes as the
headless commands: no table of that name, a full table, a private one without its
passphrase, a port in use all end it with one line and exit 1 before any window shows.
Options only a headless peer uses (`--json`, a joiner's bots, its bots' pace) are usage
errors here, in words, rather than ignored. Where no window can open, `spectate` follows
the table as text (what `--headless` prints) and the others say how to play headless.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Final

from nerts_p2p.game.bots import CASUAL, BotLevel
from nerts_p2p.game.errors import NertsError
from nerts_p2p.game.rules import Rules

if TYPE_CHECKING:
    from client.netplay import PeerOptions
    from client.window.app import WindowApp
    from client.window.netsession import NetworkTable

#: Per command: the options of a headless peer only, with their defaults (given = refused).
#: `--silence` is not one: it is the window's patience with a quiet host too. `spectate` has
#: none: its `--json` and `--headless` choose the text view instead of the window.
HEADLESS_ONLY: Final[Mapping[str, Mapping[str, tuple[str, object]]]] = {
    "host": {"json": ("--json", False)},
    "join": {
        "json": ("--json", False),
        "bots": ("--bots", 0),
        "rounds": ("--rounds", None),
        "level": ("--level", "casual"),
        "bot_pace": ("--bot-pace", 1.0),
    },
    "play": {"json": ("--json", False), "data_dir": ("--data-dir", None)},
}


def refuse_headless_options(args: argparse.Namespace, command: str) -> None:
    """A headless peer's option given to a command that opens the window is a usage error."""
    given = [
        flag
        for dest, (flag, default) in HEADLESS_ONLY[command].items()
        if getattr(args, dest, default) != default
    ]
    if given:
        raise NertsError(
            f"{', '.join(given)}: only with --headless (a bot plays this peer's seat and the "
            "command prints the rounds); without it you play in the window"
        )


def with_match_rounds(rules: Rules, rounds: int | None) -> Rules:
    """`--rounds K` for a table played in the window: the table's own match length (every
    peer then ends the match after round K, with a winner), `--match-rounds K`."""
    if rounds is None:
        return rules  # (K >= 1 was checked with the other numbers, `cli._check_timing`)
    if rules.match_rounds and rules.match_rounds != rounds:
        raise NertsError(
            f"--rounds {rounds} and --match-rounds {rules.match_rounds} disagree: give one"
        )
    return replace(rules, match_rounds=rounds)


def _in_the_window(
    opening: Callable[[WindowApp], Awaitable[NetworkTable]],
    *,
    interface: str,
    data_dir: Path | None,
    max_frames: int | None,
    straight_to_the_table: bool = False,
    no_window: Callable[[str], int] | None = None,
) -> int:
    """The window at the table `opening` opens (`play_at_table`), until it is closed; the
    table's trouble in one line with exit 1. Where no window can open: `no_window(why)` if
    given, else that said with exit 1."""
    from client.window.app import NoDisplayError
    from client.window.from_cli import play_at_table

    try:
        play_at_table(
            opening,
            interface=interface,
            data_dir=data_dir,
            straight_to_the_table=straight_to_the_table,
            max_frames=max_frames,
        )
    except NoDisplayError as exc:
        if no_window is not None:
            return no_window(str(exc))
        print(
            f"nerts-p2p: {exc}: playing a seat by hand needs the window; add --headless to "
            "let a bot play this seat",
            file=sys.stderr,
        )
        return 1
    except (NertsError, OSError) as exc:
        print(f"nerts-p2p: {exc}", file=sys.stderr)
        return 1
    return 0


def host_in_window(
    options: PeerOptions, rules: Rules, *, spectators: bool, max_frames: int | None = None
) -> int:
    """Host the table `options.name` in the window: its lobby, where you add bots and start
    rounds; the host's name at the table is the window's own (its settings)."""
    from client.window.net_open import host_table

    async def opening(app: WindowApp) -> NetworkTable:
        table = await host_table(
            options.interface,
            table_name=options.name,
            player_name=app.settings.name,
            rules=rules,
            spectators=spectators,
            port=options.port,
            bots=options.bots,
            bot_level=options.bot_level or CASUAL,
            bot_pace=options.bot_pace,
            passphrase=options.passphrase or "",
            data_dir=options.data_dir,
        )
        table.silence = options.silence
        return table

    return _in_the_window(
        opening, interface=options.interface, data_dir=options.data_dir, max_frames=max_frames
    )


def join_in_window(
    options: PeerOptions,
    table_name: str,
    *,
    role: int,
    player_name: str | None,
    timeout: float,
    no_window: Callable[[str], int] | None = None,
    max_frames: int | None = None,
) -> int:
    """Sit at (or watch) the table announced as `table_name`, in the window: its lobby, where
    you say you are ready; a table this data dir was at and did not finish, its seat taken
    back. `player_name`: None for the window's own (its settings). `no_window(why)`: what
    to do where no window can open (a spectator follows the table as text)."""
    from client.netplay import find_table, passphrase_for
    from client.window.net_open import join_table

    async def opening(app: WindowApp) -> NetworkTable:
        ad = await find_table(
            options.interface, table_name, timeout, role=role, data_dir=options.data_dir
        )
        given = passphrase_for(ad, table_name, options.passphrase)
        table = await join_table(
            options.interface,
            ad,
            player_name=player_name or app.settings.name,
            role=role,
            passphrase=given or "",
            data_dir=options.data_dir,
            port=options.port,
        )
        table.silence = options.silence
        return table

    return _in_the_window(
        opening,
        interface=options.interface,
        data_dir=options.data_dir,
        max_frames=max_frames,
        no_window=no_window,
    )


def practice_in_window(
    rules: Rules, bot_level: BotLevel, *, bot_pace: float, max_frames: int | None = None
) -> int:
    """`play --bots N` by hand: the window's practice table (127.0.0.1 only), you against
    the N bots, straight at the table."""
    from client.window.net_open import LOOPBACK, loopback_practice

    async def opening(app: WindowApp) -> NetworkTable:
        return await loopback_practice(
            rules.seats, bot_level, name=app.settings.name, rules=rules, bot_pace=bot_pace
        )

    return _in_the_window(
        opening,
        interface=LOOPBACK,
        data_dir=None,
        max_frames=max_frames,
        straight_to_the_table=True,
    )
