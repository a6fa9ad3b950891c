"""The window opened straight at a table the command line named: `nerts-p2p host`, `join`,
`spectate` and `play --bots N` without `--headless`, where a person plays the seat (or
watches) by hand.

The command opens the table before the window's frames begin, so whatever stops it (no
table of that name, a port in use, a full table, a data dir another program holds) ends
the command with one line in plain words and exit 1, and no window flashes up for nothing.
Once the table is open the window shows its lobby (a practice table: the table itself), as
if its own menus had opened it; leaving the table goes back to the start screen, and
closing the window says goodbye to the table first, as ever.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import trio

from .app import WindowApp, run_window
from .lobby_screen import enter_lobby
from .menus import sit_at
from .netsession import NetworkTable

#: Opens the table, given the window it will be shown in (it is not showing yet).
TableOpener = Callable[[WindowApp], Awaitable[NetworkTable]]


def play_at_table(
    open_table: TableOpener,
    *,
    interface: str,
    data_dir: Path | None,
    straight_to_the_table: bool = False,
    max_frames: int | None = None,
) -> None:
    """Open the window (`NoDisplayError` where none can open), open the table in it with
    `open_table` (its errors are raised before any frame is drawn), then run the window
    until it is closed. `straight_to_the_table`: a practice table, which has no lobby."""
    app = WindowApp(interface=interface)
    app.data_dir = data_dir

    async def main() -> None:
        try:
            table = await open_table(app)
        except BaseException:
            app.close()
            raise
        came_from = app.screen
        if straight_to_the_table:

            def failed(problem: str) -> None:
                app.message = f"The table could not be played: {problem}"

            def sit_down() -> None:
                app.spawn(lambda: sit_at(app, came_from, table), failed)

            app.when_running.append(sit_down)
        else:
            app.when_running.append(lambda: enter_lobby(app, came_from, table))
        await run_window(app, max_frames=max_frames)

    trio.run(main)
