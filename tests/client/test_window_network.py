"""The window's network screens over the real node, on 127.0.0.1 (run inside the suite's
network namespace): hosting with a headless `nerts-p2p join` at the table, the live list
of tables hosted by another process, the lobby, a round played to its score, a spectator
that follows a live table joined mid-round, and bad input said in plain words."""

from __future__ import annotations

import json
import random
import socket
from collections.abc import Callable

import pygame
import trio

from client.window.art import NORMAL
from client.window.host_screen import MATCH_ENDS, HostScreen
from client.window.layout import NERTS, STOCK
from client.window.lobby_screen import LobbyScreen
from client.window.net_open import host_table
from client.window.netsession import NetworkTable
from client.window.session import PLAYING, SCORED
from client.window.settings import seat_colours
from client.window.table_screen import TableScreen
from client.window.tables_screen import TablesScreen, table_line
from nerts_p2p.game.bots import EXPERT, BotPlayer
from nerts_p2p.game.position import state_hash
from nerts_p2p.game.rules import Rules
from nerts_p2p.net.discovery import TableAd
from protocol.envelope import PROTOCOL_VERSION
from protocol.messages import PLAYER, SPECTATOR

from ..net.procs import table_name
from .net_window_helpers import (
    LO,
    Peer,
    click,
    close_window,
    frames_for,
    frames_until,
    network_app,
    press,
)
from .test_window_render import SCREENS, assert_card_face, colours_in, near, settle

FAST_BOTS = ["--bot-pace", "0.05"]
PATIENT = ["--silence", "60"]


def save(surface: pygame.Surface, name: str) -> None:
    SCREENS.mkdir(parents=True, exist_ok=True)
    pygame.image.save(surface, str(SCREENS / f"{name}.png"))


def shows_warning(surface: pygame.Surface) -> bool:
    """Text in the warning colour is on screen (problems are drawn in it)."""
    return any(near(p, NORMAL.warn, 30) for p in colours_in(surface, (0, 0, *surface.get_size())))


def play_our_seat(session: NetworkTable, bot: BotPlayer) -> None:
    """A person at the window: one move of our seat through the session, as input makes."""
    view = session.view()
    if view.phase != PLAYING or view.state is None or view.my_seat is None:
        return
    bot.seat = view.my_seat
    move = bot.act(view.state)
    if move is not None:
        session.submit(move)


async def test_a_hosting_window_and_a_headless_joiner_play_a_round(headless: None) -> None:
    name = table_name("win")
    async with trio.open_nursery() as nursery:
        app = network_app(nursery, "Ann")
        host = HostScreen(app)
        app.show(host)
        host.table_name.text = name
        while host.seats != 3:
            host.choose("seats")
        assert host.bots == 1
        host.choose("bots")
        host.choose("bots")  # around to none: the lobby seats them
        assert host.bots == 0
        press(app, pygame.K_RETURN)
        await frames_until(app, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
        lobby = app.screen
        assert isinstance(lobby, LobbyScreen)
        assert lobby.lobby.starter
        assert [b.name for b in lobby.buttons()] == ["add", "remove", "start", "leave"]
        press(app, pygame.K_a)
        await frames_until(app, lambda: len(lobby.lobby.seats) == 2, "a bot seated")
        press(app, pygame.K_a)
        await frames_until(app, lambda: len(lobby.lobby.seats) == 3, "a second bot seated")
        add = next(b for b in lobby.buttons() if b.name == "add")
        assert not add.enabled, "no bot can be added to a full table"
        press(app, pygame.K_r)
        await frames_until(app, lambda: len(lobby.lobby.seats) == 2, "the second bot gone")
        assert [(s.name, s.bot) for s in lobby.lobby.seats] == [
            ("Ann", False),
            ("casual bot 1", True),
        ]
        joiner = Peer(
            [
                "join",
                name,
                "--as",
                "bob",
                "--headless",
                "--json",
                "--interface",
                LO,
                *FAST_BOTS,
                *PATIENT,
            ]
        )
        try:
            await frames_until(
                app,
                lambda: len(lobby.lobby.seats) == 3 and lobby.lobby.can_start,
                "bob seated, everyone ready, the Start button live",
            )
            save(app.surface, "network-lobby-host")
            seats = lobby.lobby.seats
            assert [(s.name, s.me, s.host, s.ready) for s in seats] == [
                ("Ann", True, True, False),
                ("casual bot 1", False, False, True),
                ("bob", False, False, True),
            ]
            start = next(b for b in lobby.buttons() if b.name == "start")
            assert start.enabled
            click(app, start.rect.center)
            await frames_until(app, lambda: isinstance(app.screen, TableScreen), "the deal")
            screen = app.screen
            assert isinstance(screen, TableScreen)
            session = lobby.table
            assert screen.session is session
            bot = BotPlayer(EXPERT, -1, random.Random(5))
            frame = 0

            def scored() -> bool:
                nonlocal frame
                frame += 1
                if frame % 6 == 0:
                    play_our_seat(session, bot)
                return session.view().phase == SCORED

            await frames_until(app, scored, "the round scored")
            await frames_for(app, 0.3)
            assert screen.round_end is not None, "the round end screen shows the score"
            save(app.surface, "network-round-end-host")
            ours = session.replica.rounds[1]
            played = [
                s for s in ours.steps if s.move is not None and s.op.author == session.replica.me
            ]
            assert played, "the window's seat played moves over the network"
            await frames_until(app, lambda: bool(joiner.output().strip()), "bob's round record")
            record = json.loads(joiner.output().splitlines()[0])
            assert record["state_hash"] == state_hash(ours.states[-1])
            assert [s["score"] for s in record["seats"]] == [
                s.score for s in session.results[0].scores
            ]
            # Closing the window leaves the table: bob sees our LEAVE (the host left after
            # its round), ends its match and exits 0, long before it would give up on us.
            await close_window(app)
            assert session.done.is_set()
            with trio.fail_after(60):
                while not joiner.ended():
                    await trio.sleep(0.1)
            assert joiner.proc.returncode == 0, joiner.errors()
            lines = joiner.output().splitlines()
            assert json.loads(lines[-1])["rounds"] == 1
        finally:
            joiner.stop()
            nursery.cancel_scope.cancel()


async def test_the_join_list_shows_a_table_of_another_process_and_joins_it(headless: None) -> None:
    name = table_name("list")
    other = Peer(
        [
            "host",
            "--name",
            name,
            "--seats",
            "2",
            "--headless",
            "--json",
            "--interface",
            LO,
            "--nerts-size",
            "5",
            *FAST_BOTS,
            *PATIENT,
        ]
    )
    try:
        async with trio.open_nursery() as nursery:
            app = network_app(nursery, "Cleo")
            tables = TablesScreen(app, PLAYER)
            app.show(tables)

            def listed() -> TableAd | None:
                return next((ad for ad in tables.tables if ad.name == name), None)

            await frames_until(app, lambda: listed() is not None, f"table {name} in the list")
            ad = listed()
            assert ad is not None
            assert (ad.seats_taken, ad.seats_max, ad.phase) == (1, 2, "lobby")
            assert not ad.passphrase
            assert ad.spectators
            row = next(b for b in tables.buttons() if b.label == table_line(ad))
            assert "1/2 seats" in row.label
            assert "spectators welcome" in row.label
            save(app.surface, "network-join-list")
            click(app, row.rect.center)
            await frames_until(app, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
            lobby = app.screen
            assert isinstance(lobby, LobbyScreen)
            await frames_until(app, lambda: len(lobby.lobby.seats) == 2, "both seats in the lobby")
            assert [s.name for s in lobby.lobby.seats] == [name, "Cleo"]
            assert lobby.lobby.rules is not None
            assert lobby.lobby.rules.nerts_size == 5
            ready = next(b for b in lobby.buttons() if b.name == "ready")
            click(app, ready.rect.center)
            await frames_until(app, lambda: isinstance(app.screen, TableScreen), "the deal")
            screen = app.screen
            assert isinstance(screen, TableScreen)
            session = lobby.table
            bot = BotPlayer(EXPERT, -1, random.Random(7))
            count = 0

            def scored() -> bool:
                nonlocal count
                count += 1
                if count % 6 == 0:
                    play_our_seat(session, bot)
                return session.view().phase == SCORED

            await frames_until(app, scored, "the round scored")
            assert session.view().my_seat is not None
            await frames_for(app, 0.2)
            assert screen.round_end is not None
            nxt = next(b for b in screen.round_end.buttons() if b[0] == "next")
            click(app, nxt[2].center)  # Next round: we are ready, the headless host deals
            await frames_until(
                app,
                lambda: session.view().round == 2 and session.view().phase == PLAYING,
                "round 2 dealt",
            )
            await frames_for(app, 0.05)
            assert screen.round_end is None
            assert app.screen is screen, "the same table screen plays the next round"
            press(app, pygame.K_q)  # Leave
            assert not isinstance(app.screen, TableScreen)
            await app.wind_down()
            assert session.done.is_set()
            # The host got our LEAVE: it ends at once, saying so, rather than waiting 60 s
            # for a silent peer.
            with trio.fail_after(30):
                while not other.ended():
                    await trio.sleep(0.1)
            assert "everyone else left the table" in other.errors()
            await close_window(app)
            nursery.cancel_scope.cancel()
    finally:
        other.stop()


async def test_a_network_spectator_follows_a_live_table_and_draws_every_seat(
    headless: None,
) -> None:
    name = table_name("spec")
    match = Peer(
        [
            "host",
            "--name",
            name,
            "--seats",
            "3",
            "--bots",
            "2",
            "--headless",
            "--interface",
            LO,
            "--bot-pace",
            "0.6",
            *PATIENT,
        ]
    )
    try:
        async with trio.open_nursery() as nursery:
            app = network_app(nursery, "Dee")
            tables = TablesScreen(app, SPECTATOR)
            app.show(tables)

            def playing() -> TableAd | None:
                return next(
                    (ad for ad in tables.tables if ad.name == name and ad.phase == "playing"),
                    None,
                )

            await frames_until(app, lambda: playing() is not None, "the table playing a round")
            ad = playing()
            assert ad is not None
            tables.choose(ad)  # joined mid-round
            await frames_until(app, lambda: isinstance(app.screen, TableScreen), "the live table")
            screen = app.screen
            assert isinstance(screen, TableScreen)
            await frames_for(app, 1.0)
            assert screen.view.phase == PLAYING
            assert screen.view.my_seat is None
            assert screen.layout is not None
            assert screen.layout.my_seat is None
            settle(app, screen, trio.current_time())
            save(app.surface, "network-spectator")
            state = screen.view.state
            assert state is not None
            assert len(state.seats) == 3
            nerts_tops = [p for p in screen.places if p.pile.kind == NERTS and p.face_up]
            assert sorted(p.pile.seat for p in nerts_tops) == [0, 1, 2]
            for place in nerts_tops:
                assert place.entry == state.seats[place.pile.seat].nerts_up[-1]
            for place in screen.places:
                if place.face_up:  # every seat's Nerts top, waste and work piles, foundations
                    assert_card_face(app.surface, screen, place, NORMAL)
            colours = seat_colours(app.settings.colour, 3, None)
            stocks = [p for p in screen.places if p.pile.kind == STOCK]
            for stock in stocks:
                inside = (stock.rect.x + 6, stock.rect.y + 6, stock.rect.w - 12, stock.rect.h - 12)
                pixels = colours_in(app.surface, inside)
                share = sum(near(p, colours[stock.pile.seat], 30) for p in pixels) / len(pixels)
                assert share > 0.5, f"seat {stock.pile.seat}'s stock shows its back colour"
            assert {p.pile.seat for p in stocks} == {s for s in range(3) if state.seats[s].stock}, (
                "every stock is drawn face down in its seat's place"
            )
            # A spectator's keys and clicks play nothing.
            press(app, pygame.K_SPACE, " ")
            session = screen.session
            assert isinstance(session, NetworkTable)
            current = session.replica.current_round
            assert current is not None
            assert not any(step.op.author == session.replica.me for step in current.steps)
            await close_window(app)
            nursery.cancel_scope.cancel()
    finally:
        match.stop()


async def test_a_window_on_the_machine_of_a_player_watches_its_table_but_cannot_sit_there(
    headless: None,
) -> None:
    # One user, two programs, one data dir: the host is a command, the window watches. The
    # window was refused ("another nerts-p2p window or command is playing from ..."). A
    # spectator signs only its JOIN, so it watches with a key of this run; a seat still
    # needs the data dir's own key, which the command holds.
    name = table_name("same")
    host = ["host", "--name", name, "--seats", "3", "--bots", "1", "--headless"]
    match = Peer([*host, "--interface", LO, *PATIENT])
    try:
        async with trio.open_nursery() as nursery:
            app = network_app(nursery, "Dee")
            app.data_dir = match.dir / "data"  # the command's
            seats = TablesScreen(app, PLAYER)
            app.show(seats)

            def listed(tables: TablesScreen) -> TableAd | None:
                return next((ad for ad in tables.tables if ad.name == name), None)

            await frames_until(app, lambda: listed(seats) is not None, f"table {name} listed")
            ad = listed(seats)
            assert ad is not None
            # Its seat is the command's, being played: not one to take back.
            row = next(b for b in seats.buttons() if b.label.startswith(table_line(ad)))
            assert "take it back" not in row.label
            seats.choose(ad)
            await frames_until(app, lambda: bool(seats.problem), "the seat refused")
            assert "another nerts-p2p window or command is playing from" in seats.problem
            assert isinstance(app.screen, TablesScreen)
            watch = TablesScreen(app, SPECTATOR)
            app.show(watch)
            await frames_until(app, lambda: listed(watch) is not None, f"table {name} listed")
            ad = listed(watch)
            assert ad is not None
            watch.choose(ad)
            await frames_until(app, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
            lobby = app.screen
            assert isinstance(lobby, LobbyScreen)
            session = lobby.table
            await frames_until(app, lambda: session.replica.is_member, "the host letting us in")
            await frames_until(app, lambda: lobby.lobby.spectators == 1, "us, watching")
            assert watch.problem == ""
            assert session.store is None  # the command's store is its own
            assert session.replica.me != ad.host_fingerprint
            await close_window(app)
            nursery.cancel_scope.cancel()
    finally:
        match.stop()


# --- bad input: said on the screen in plain words ----------------------------------------------


async def test_hosting_on_a_port_in_use_says_so(headless: None) -> None:
    taken = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    taken.bind((LO, 0))
    port = taken.getsockname()[1]
    try:
        async with trio.open_nursery() as nursery:
            app = network_app(nursery)
            host = HostScreen(app)
            app.show(host)
            host.choose("port")
            for digit in str(port):
                press(app, getattr(pygame, f"K_{digit}"), digit)
            press(app, pygame.K_RETURN)  # ends typing the port
            assert host.port.text == str(port)
            host.choose("open")
            await frames_until(app, lambda: bool(host.problem), "a problem shown")
            assert host.problem == (
                f"The table could not be opened: port {port} on {LO} is already in use"
            )
            assert isinstance(app.screen, HostScreen)
            await frames_for(app, 0.05)
            assert shows_warning(app.surface)
            save(app.surface, "network-host-port-in-use")
            host.port.text = "70000"
            host.choose("open")
            assert host.problem == "the port must be 0 to 65535, not 70000"
            nursery.cancel_scope.cancel()
    finally:
        taken.close()


def _ad(name: str, address: tuple[str, int], **changes: object) -> TableAd:
    fields: dict[str, object] = {
        "name": name,
        "address": address,
        "protocol_version": PROTOCOL_VERSION,
        "table_id": bytes(range(8)),
        "host_fingerprint": bytes(range(8, 16)),
        "seats_taken": 1,
        "seats_max": 4,
        "phase": "lobby",
        "passphrase": False,
        "spectators": True,
    }
    fields.update(changes)
    return TableAd(**fields)  # type: ignore[arg-type]


async def test_a_table_that_is_gone_says_so_in_the_lobby(headless: None) -> None:
    # An announcement whose host no longer answers: nothing listens on that port.
    silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    silent.bind((LO, 0))
    address = silent.getsockname()[:2]
    silent.close()
    async with trio.open_nursery() as nursery:
        app = network_app(nursery)
        tables = TablesScreen(app, PLAYER)
        tables.host_timeout = 1.5
        app.show(tables)
        tables.choose(_ad("ghost", address))
        await frames_until(app, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
        lobby = app.screen
        assert isinstance(lobby, LobbyScreen)
        await frames_until(app, lambda: lobby.table.problem is not None, "the problem")
        assert lobby.table.problem == (
            "the table's host does not answer (nothing for 1.5 s): the table is gone"
        )
        await frames_for(app, 0.1)
        assert shows_warning(app.surface)
        assert [b.name for b in lobby.buttons()] == ["leave"]
        save(app.surface, "network-table-gone")
        press(app, pygame.K_ESCAPE)
        assert not isinstance(app.screen, LobbyScreen)
        await app.wind_down()
        assert lobby.table.done.is_set()
        nursery.cancel_scope.cancel()


REFUSALS: list[tuple[int, dict[str, object], str]] = [
    (PLAYER, {"seats_taken": 4}, "Table 'kitchen' is full (4 of 4 seats taken)"),
    (SPECTATOR, {"spectators": False}, "Table 'kitchen' does not welcome spectators"),
    (PLAYER, {"protocol_version": PROTOCOL_VERSION + 1}, "Protocol version mismatch: table"),
]


async def test_a_table_we_cannot_sit_at_is_refused_in_words(headless: None) -> None:
    async with trio.open_nursery() as nursery:
        app = network_app(nursery)
        tables = TablesScreen(app, PLAYER)
        app.show(tables)
        for role, changes, said in REFUSALS:
            tables.role = role
            tables.choose(_ad("kitchen", (LO, 9), **changes))
            assert tables.problem.startswith(said)
            await frames_for(app, 0.05)
            assert app.screen is tables, "no join was tried"
            assert not tables.joining
            assert shows_warning(app.surface)
        save(app.surface, "network-refused")
        # A private table is not refused: its passphrase is asked for first.
        tables.role = PLAYER
        tables.choose(_ad("attic", (LO, 9), passphrase=True))
        assert tables.asking is not None
        assert tables.asking.name == "attic"
        press(app, pygame.K_x, "x")
        assert tables.passphrase.text == "x"
        assert tables.passphrase.shown() == "*_", "a passphrase is never shown"
        press(app, pygame.K_ESCAPE)
        assert tables.asking is None
        assert not tables.joining
        assert app.screen is tables
        nursery.cancel_scope.cancel()


async def test_a_private_table_lets_in_who_knows_its_passphrase(headless: None) -> None:
    name = table_name("priv")
    async with trio.open_nursery() as nursery:
        host = await host_table(
            LO,
            table_name=name,
            player_name="Hosta",
            rules=Rules(seats=3),
            spectators=True,
            passphrase="open sesame",
        )
        nursery.start_soon(host.serve)
        app = network_app(nursery, "Cleo")

        def hosting(done: Callable[[], bool]) -> Callable[[], bool]:
            def check() -> bool:
                host.advance(trio.current_time())
                return done()

            return check

        async def attempt(guess: str, works: bool) -> None:
            tables = TablesScreen(app, PLAYER)
            app.show(tables)
            await frames_until(
                app, hosting(lambda: any(ad.name == name for ad in tables.tables)), "the table"
            )
            ad = next(ad for ad in tables.tables if ad.name == name)
            assert ad.passphrase
            row = next(b for b in tables.buttons() if b.label == table_line(ad))
            click(app, row.rect.center)
            assert tables.asking == ad
            for char in guess:
                press(app, pygame.K_a, char)
            await frames_for(app, 0.05)
            save(app.surface, "network-passphrase")
            press(app, pygame.K_RETURN)
            await frames_until(
                app, hosting(lambda: isinstance(app.screen, LobbyScreen)), "the lobby"
            )
            lobby = app.screen
            assert isinstance(lobby, LobbyScreen)
            if works:
                await frames_until(
                    app, hosting(lambda: len(lobby.lobby.seats) == 2), "let in, seated"
                )
                assert [s.name for s in lobby.lobby.seats] == ["Hosta", "Cleo"]
                assert lobby.table.problem is None
            else:
                await frames_until(
                    app, hosting(lambda: lobby.table.problem is not None), "turned away"
                )
                assert lobby.table.problem == f"wrong passphrase for table {name!r}"
                await frames_for(app, 0.05)
                assert shows_warning(app.surface)
                assert not lobby.lobby.joined
                assert [s.name for s in host.lobby().seats] == ["Hosta"]
            press(app, pygame.K_ESCAPE)  # leave the lobby

        await attempt("open says me", works=False)
        await attempt("open sesame", works=True)
        await close_window(app)
        host.leave()
        await host.done.wait()
        nursery.cancel_scope.cancel()


async def test_the_host_screen_turns_its_choices_into_rules(headless: None) -> None:
    async with trio.open_nursery() as nursery:
        app = network_app(nursery)
        host = HostScreen(app)
        seen = set()
        for _ in MATCH_ENDS:
            host.choose("match")
            rules = host.rules()
            seen.add((rules.target, rules.match_rounds))
            label = next(b.label for b in host.buttons() if b.name == "match")
            assert label == f"Match: {MATCH_ENDS[host.match_end][0]}"
        assert seen == {(target, rounds) for _, target, rounds in MATCH_ENDS}
        for _ in range(7):
            host.choose("seats")
            assert host.rules().seats == host.seats
            assert 0 <= host.bots < host.seats
        host.choose("spectators")
        assert not host.spectators
        nursery.cancel_scope.cancel()


async def test_the_host_screen_refuses_a_table_name_the_wire_cannot_carry(headless: None) -> None:
    async with trio.open_nursery() as nursery:
        app = network_app(nursery)
        host = HostScreen(app)
        assert len(host.table_name.text.encode()) <= 32  # the name it offers fits
        host.table_name.text = "ü" * 20  # 20 letters, 40 bytes of UTF-8
        host.open()
        assert not host.opening
        assert "at most 32 bytes of UTF-8" in host.problem
        host.table_name.text = "   "
        host.open()
        assert not host.opening
        assert host.problem == "the table needs a name"
        nursery.cancel_scope.cancel()


def test_a_table_of_another_protocol_version_says_so_in_its_row() -> None:
    assert "speaks protocol" not in table_line(_ad("kitchen", (LO, 9)))
    newer = _ad("kitchen", (LO, 9), protocol_version=PROTOCOL_VERSION + 1)
    assert f"(speaks protocol {PROTOCOL_VERSION + 1}, not {PROTOCOL_VERSION})" in table_line(newer)
