"""A network table between rounds, in the window (on 127.0.0.1, inside the suite's network
namespace): from the round end screen the host goes to the lobby, seats another bot (it
plays from round 2), and the match table and chart follow players, not seat numbers; the
signed log of the match is saved when the window leaves and plays back in the replay
screen; a window that crashed takes its seat back from its key store."""

from __future__ import annotations

import random
from collections.abc import Callable

import pygame
import pytest
import trio

from client.window.lobby_screen import LobbyScreen, enter_lobby
from client.window.menus import ReplayListScreen
from client.window.net_open import host_table, join_table
from client.window.netsession import NetTableError, NetworkTable
from client.window.replay_screen import ReplayScreen
from client.window.round_end import match_rows
from client.window.session import SCORED
from client.window.settings import seat_colours
from client.window.table_screen import TableScreen
from client.window.tables_screen import TablesScreen, table_line
from nerts_p2p.game.bots import EXPERT, BotPlayer
from nerts_p2p.game.position import state_hash
from nerts_p2p.game.rules import Rules
from nerts_p2p.net.discovery import TableAd
from protocol.envelope import PROTOCOL_VERSION
from protocol.messages import PLAYER

from ..net.procs import table_name
from .net_window_helpers import (
    LO,
    WAIT,
    click,
    close_window,
    frames_until,
    network_app,
    press,
)
from .test_window_network import play_our_seat, save
from .test_window_render import colours_in, near


async def play_until(
    app: object, screen: TableScreen, bot: BotPlayer, done: Callable[[], bool], what: str
) -> None:
    """Frames of the window with a bot's hand on our seat, until `done()`."""
    from client.window.app import WindowApp

    assert isinstance(app, WindowApp)
    with trio.move_on_after(WAIT) as scope:
        while not done():
            play_our_seat(screen.session, bot)  # type: ignore[arg-type]
            app.frame(trio.current_time())
            await trio.sleep(1 / 60)
    assert not scope.cancelled_caught, f"the window never got to: {what}"


def round_shown(screen: object, number: int) -> bool:
    return isinstance(screen, TableScreen) and screen.view.round == number


async def test_the_host_seats_a_bot_between_rounds_and_the_match_follows_players(
    headless: None,
) -> None:
    async with trio.open_nursery() as nursery:
        app = network_app(nursery, "Ann")
        table = await host_table(
            LO,
            table_name=table_name("between"),
            player_name="Ann",
            rules=Rules(seats=4),
            spectators=True,
            bots=1,
            data_dir=app.data_dir,
        )
        table.bot_pace = 0.05
        enter_lobby(app, app.screen, table)
        lobby1 = app.screen
        assert isinstance(lobby1, LobbyScreen)
        await frames_until(app, lambda: len(lobby1.lobby.seats) == 2, "the first bot seated")
        await frames_until(app, lambda: lobby1.lobby.can_start, "the bot ready")
        press(app, pygame.K_RETURN)
        await frames_until(app, lambda: isinstance(app.screen, TableScreen), "round 1")
        screen1 = app.screen
        assert isinstance(screen1, TableScreen)
        bot = BotPlayer(EXPERT, -1, random.Random(5))
        await play_until(app, screen1, bot, lambda: screen1.round_end is not None, "round 1 over")
        assert screen1.round_end is not None
        assert [b[0] for b in screen1.round_end.buttons()] == ["next", "lobby", "leave"]
        press(app, pygame.K_l)
        lobby2 = app.screen
        assert isinstance(lobby2, LobbyScreen), "L opens the lobby between rounds"
        assert not table.left, "going to the lobby does not leave the table"
        await frames_until(app, lambda: lobby2.lobby.between_rounds, "the lobby for round 2")
        assert lobby2.lobby.round == 2
        assert lobby2.lobby.starter
        press(app, pygame.K_a)
        await frames_until(app, lambda: len(lobby2.lobby.seats) == 3, "a bot seated for round 2")
        assert [s.bot for s in lobby2.lobby.seats] == [False, True, True]
        await frames_until(app, lambda: lobby2.lobby.can_start, "both bots ready")
        press(app, pygame.K_RETURN)
        await frames_until(app, lambda: round_shown(app.screen, 2), "round 2 dealt")
        screen = app.screen
        assert isinstance(screen, TableScreen)
        assert len(screen.view.names) == 3, "the new bot has a seat in round 2"
        await play_until(app, screen, bot, lambda: screen.round_end is not None, "round 2 over")
        view = screen.view
        assert view.phase == SCORED
        rows = match_rows(view.results)
        assert len(rows) == 3
        newcomer = next(r for r in rows if r.name == "casual bot 2")
        assert newcomer.scores[0] is None, "the new bot did not play round 1"
        assert newcomer.scores[1] is not None
        assert newcomer.totals[1] == view.results[-1].totals[newcomer.seat or 0]
        # The chart draws a line in each of the three players' colours. The region runs to
        # the chart's bottom edge (100 px above the window's): a newcomer whose total is the
        # lowest, 0 say, has its whole line along that edge.
        screen.draw(app.surface, trio.current_time())
        save(app.surface, "network-round-end-newcomer")
        width, height = app.size
        chart = colours_in(
            app.surface, (width * 0.56, height * 0.25, width * 0.38, height * 0.75 - 100)
        )
        for colour in seat_colours(app.settings.colour, 3, view.my_seat):
            assert any(near(p, colour, 12) for p in chart), f"no line in {colour}"
        # Between rounds the bot can be taken away again.
        press(app, pygame.K_l)
        lobby = app.screen
        assert isinstance(lobby, LobbyScreen)
        press(app, pygame.K_r)
        await frames_until(app, lambda: len(lobby.lobby.seats) == 2, "the second bot gone")
        press(app, pygame.K_ESCAPE)  # leave the table (the window stays open)
        with trio.fail_after(WAIT):
            await table.done.wait()
        # The match (two rounds, interrupted) is kept as its signed log, and plays back.
        assert table.saved_replay is not None
        assert app.data_dir is not None
        assert table.saved_replay.parent == app.data_dir / "replays"
        replays = ReplayListScreen(app, app.data_dir / "replays")
        assert replays.files == [table.saved_replay]
        label = replays.buttons()[0].label
        assert label.startswith(f"table {table.table_name}, ")
        replays.handle(
            pygame.event.Event(
                pygame.MOUSEBUTTONDOWN, button=1, pos=replays.buttons()[0].rect.center
            ),
            0.0,
        )
        player = app.screen
        assert isinstance(player, ReplayScreen), replays.problem
        assert len(player.player.replay.rounds) == 2
        player.player.pick_round(1)
        player.player.step(player.player.moves)
        final = table.replica.rounds[2].state
        assert state_hash(player.player.state) == state_hash(final)
        assert player.view().names == view.names
        await close_window(app)
        nursery.cancel_scope.cancel()


async def test_a_window_that_crashed_takes_its_seat_back(headless: None) -> None:
    """The joiner's window dies mid-round (no LEAVE); opened again on the same data
    directory it is the same member and plays the same seat."""
    async with trio.open_nursery() as nursery:
        app = network_app(nursery, "Bob")
        host = await host_table(
            LO,
            table_name=table_name("crash"),
            player_name="Hosta",
            rules=Rules(seats=2),
            spectators=True,
        )
        nursery.start_soon(host.serve)
        ad = TableAd(
            name=host.table_name,
            address=host.node.address,
            protocol_version=PROTOCOL_VERSION,
            table_id=host.replica.sync.table,
            host_fingerprint=host.replica.me,
            seats_taken=1,
            seats_max=2,
            phase="lobby",
            passphrase=False,
            spectators=True,
        )
        first = await join_table(LO, ad, player_name="Bob", role=PLAYER, data_dir=app.data_dir)
        crash = trio.CancelScope()

        async def serve_until_crash(table: NetworkTable) -> None:
            with crash:
                await table.serve()

        nursery.start_soon(serve_until_crash, first)
        tables = [host, first]

        async def frames(until: Callable[[], bool], what: str) -> None:
            with trio.fail_after(WAIT):
                while not until():
                    for t in tables:
                        t.advance(trio.current_time())
                    await trio.sleep(1 / 60)

        await frames(lambda: len(host.lobby().seats) == 2, f"Bob seated ({what_of(first)})")
        host.ready()
        first.ready()
        await frames(lambda: first.replica.seat is not None, "round 1 dealt")
        seat, me = first.replica.seat, first.replica.me
        crash.cancel()  # the window dies: no LEAVE, its socket gone
        with trio.fail_after(WAIT):
            await first.done.wait()
        # Opened again: the table is in the Join list, full to the eye, marked as ours.
        listing = TablesScreen(app, PLAYER)
        app.show(listing)

        def hosting(done: Callable[[], bool]) -> Callable[[], bool]:
            def check() -> bool:
                host.advance(trio.current_time())
                return done()

            return check

        await frames_until(
            app,
            hosting(lambda: any(a.table_id == ad.table_id and a.full for a in listing.tables)),
            "the table listed, full: both seats are taken, Bob's is still his",
        )
        listed = next(a for a in listing.tables if a.table_id == ad.table_id)
        row = next(b for b in listing.buttons() if b.label == table_line(listed, yours=True))
        click(app, row.rect.center)
        await frames_until(
            app, hosting(lambda: isinstance(app.screen, TableScreen)), "back at the table"
        )
        screen = app.screen
        assert isinstance(screen, TableScreen)
        again = screen.session
        assert isinstance(again, NetworkTable)
        assert again.replica.me == me, "the same key: the same member"
        await frames_until(
            app, hosting(lambda: screen.view.my_seat == seat), "our seat back, as it was"
        )
        assert again.problem is None
        assert not host.replica.sync.members[me].left
        assert screen.view.state is not None
        await close_window(app)
        host.leave()
        with trio.fail_after(WAIT):
            await again.done.wait()
            await host.done.wait()
        nursery.cancel_scope.cancel()


def what_of(table: NetworkTable) -> str:
    return table.problem or "no problem"


async def test_a_hosting_window_that_crashed_hosts_the_same_table_again(headless: None) -> None:
    """Hosting again under the same table name from the same data directory takes the
    table up again (same table, same key); a passphrase cannot make it private now."""
    async with trio.open_nursery() as nursery:
        app = network_app(nursery, "Ann")
        name = table_name("again")

        async def host(passphrase: str = "") -> NetworkTable:
            return await host_table(
                LO,
                table_name=name,
                player_name="Ann",
                rules=Rules(seats=2),
                spectators=True,
                passphrase=passphrase,
                data_dir=app.data_dir,
            )

        first = await host()
        crash = trio.CancelScope()

        async def serve_until_crash() -> None:
            with crash:
                await first.serve()

        nursery.start_soon(serve_until_crash)
        with trio.fail_after(WAIT):
            while first.node.cancel_scope is None:  # running: its OPEN is in the store
                await trio.sleep(0.01)
        crash.cancel()
        with trio.fail_after(WAIT):
            await first.done.wait()
        with pytest.raises(NetTableError, match="stays open"):
            await host("a late secret")
        again = await host()
        assert again.replica.sync.table == first.replica.sync.table
        assert again.replica.me == first.replica.me
        assert again.store is not None
        assert again.store.own_ops, "it goes on from its stored OPEN"
        again.leave()
        nursery.cancel_scope.cancel()
