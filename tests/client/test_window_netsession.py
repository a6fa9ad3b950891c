"""The window's network session (`NetworkTable`) on real nodes over the in-memory network,
in virtual time (trio's autojump clock): the lobby, ready and start, a refused move with
the engine's reason, leaving, and a table that is gone."""

from __future__ import annotations

import os
from collections.abc import Callable

import trio
import trio.testing

from client.window.netsession import NetworkTable
from client.window.replica_view import EventReader
from client.window.session import LOBBY, PLAYING, MessageNotice
from nerts_p2p.game.engine import apply
from nerts_p2p.game.errors import Rejection
from nerts_p2p.game.moves import NERTS, Move
from nerts_p2p.game.rules import Rules
from nerts_p2p.net.node import TableNode
from nerts_p2p.net.transport import MemoryNetwork
from nerts_p2p.table.replica import RoundVoided, TableReplica
from protocol import admission
from protocol.messages import PLAYER, SPECTATOR
from protocol.signing import generate_signing_key
from tests.replication.table_helpers import ManualTable, seed_showing


def hosting(network: MemoryNetwork, rules: Rules) -> NetworkTable:
    replica = TableReplica.open_table(
        generate_signing_key(), name="Ann", rules=rules, spectators=True, randomness=os.urandom
    )
    node = TableNode(replica, network.open())
    return NetworkTable(node, table_name="kitchen", interface="10.0.0.1", hosting=True)


def joining(
    network: MemoryNetwork,
    host: NetworkTable,
    name: str,
    *,
    role: int = PLAYER,
    host_timeout: float = 10.0,
) -> NetworkTable:
    replica = TableReplica.joining(
        generate_signing_key(), host.replica.sync.table, name=name, role=role, randomness=os.urandom
    )
    node = TableNode(
        replica, network.open(), bootstrap=host.node.address, table_host=host.replica.me
    )
    return NetworkTable(
        node, table_name="kitchen", interface="10.0.0.1", hosting=False, host_timeout=host_timeout
    )


async def frames(
    tables: list[NetworkTable], until: Callable[[], bool], limit: float = 120.0
) -> None:
    """Each table's frame at 60 Hz until `until()` (virtual time: `limit` is no wait)."""
    with trio.fail_after(limit):
        while not until():
            for table in tables:
                table.advance(trio.current_time())
            await trio.sleep(1 / 60)


async def test_the_lobby_shows_seats_and_readiness_and_the_host_starts(
    autojump_clock: trio.testing.MockClock,
) -> None:
    network = MemoryNetwork()
    host = hosting(network, Rules(seats=3, nerts_size=5))
    bob = joining(network, host, "bob")
    watcher = joining(network, host, "cleo", role=SPECTATOR)
    tables = [host, bob, watcher]
    async with trio.open_nursery() as nursery:
        for table in tables:
            nursery.start_soon(table.serve)
        await frames(tables, lambda: len(host.lobby().seats) == 2 and host.lobby().spectators == 1)
        lobby = host.lobby()
        assert [(s.name, s.me, s.host, s.ready) for s in lobby.seats] == [
            ("Ann", True, True, False),
            ("bob", False, False, False),
        ]
        assert lobby.starter
        assert not lobby.can_start, "bob is not ready yet"
        assert not bob.lobby().starter
        assert bob.lobby().rules == Rules(seats=3, nerts_size=5)
        bob.ready()
        await frames(tables, lambda: host.lobby().can_start)
        assert [s.ready for s in host.lobby().seats] == [False, True]
        assert bob.lobby().i_am_ready
        assert host.view().phase == LOBBY
        host.ready()  # the host's Start
        await frames(tables, lambda: all(t.view().phase == PLAYING for t in tables))
        assert {host.view().my_seat, bob.view().my_seat} == {0, 1}
        assert watcher.view().my_seat is None
        assert watcher.view().names == host.view().names
        # A move the engine refuses comes back at once, in the engine's words.
        view = bob.view()
        assert view.state is not None
        assert view.my_seat is not None
        call = Move(view.my_seat, NERTS)
        expected = apply(view.state, call)
        assert isinstance(expected, Rejection)
        refused = bob.submit(call)
        assert refused is not None
        assert refused.message == expected.message
        assert watcher.submit(call) is not None, "a spectator has no seat to move"
        # Bob leaves: his LEAVE reaches the host, and his node stops after its linger.
        bob.leave()
        await frames(tables, lambda: bob.done.is_set())
        await frames(tables, lambda: host.replica.sync.members[bob.replica.me].left)
        nursery.cancel_scope.cancel()


async def test_a_host_in_its_lobby_keeps_waiting_when_a_player_comes_and_goes(
    autojump_clock: trio.testing.MockClock,
) -> None:
    network = MemoryNetwork()
    host = hosting(network, Rules(seats=2))
    bob = joining(network, host, "bob")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(host.serve)
        nursery.start_soon(bob.serve)
        await frames([host, bob], lambda: len(host.lobby().seats) == 2)
        bob.leave()
        await frames([host, bob], lambda: len(host.lobby().seats) == 1)
        for _ in range(120):
            host.advance(trio.current_time())
            await trio.sleep(1 / 60)
        assert host.problem is None, "an empty lobby is not a table that is gone"
        nursery.cancel_scope.cancel()


async def test_a_joiner_whose_host_never_answers_is_told_the_table_is_gone(
    autojump_clock: trio.testing.MockClock,
) -> None:
    network = MemoryNetwork()
    host = hosting(network, Rules(seats=2))  # announced, but its node never runs
    bob = joining(network, host, "bob", host_timeout=4.0)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(bob.serve)
        await frames([bob], lambda: bob.problem is not None)
        assert bob.problem == (
            "the table's host does not answer (nothing for 4 s): the table is gone"
        )
        assert not bob.lobby().joined
        nursery.cancel_scope.cancel()


async def test_everyone_else_leaving_mid_match_is_said(
    autojump_clock: trio.testing.MockClock,
) -> None:
    network = MemoryNetwork()
    host = hosting(network, Rules(seats=2, nerts_size=5))
    bob = joining(network, host, "bob")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(host.serve)
        nursery.start_soon(bob.serve)
        await frames([host, bob], lambda: len(host.lobby().seats) == 2)
        bob.ready()
        host.ready()
        await frames([host, bob], lambda: host.view().phase == PLAYING)
        host.leave()
        await frames([bob], lambda: bob.problem is not None)
        assert bob.problem == "everyone else left the table"
        nursery.cancel_scope.cancel()


async def test_a_private_table_turns_away_a_wrong_passphrase_and_admits_the_right_one(
    autojump_clock: trio.testing.MockClock,
) -> None:
    network = MemoryNetwork()
    replica = TableReplica.open_table(
        generate_signing_key(),
        name="Ann",
        rules=Rules(seats=3),
        spectators=True,
        randomness=os.urandom,
        private=True,
    )
    table_id = replica.sync.table
    replica.use_table_key(admission.table_key("plum tree", table_id))
    host = NetworkTable(
        TableNode(replica, network.open()), table_name="attic", interface="10.0.0.1", hosting=True
    )
    wrong = joining(network, host, "eve")
    wrong.replica.use_table_key(admission.table_key("pear tree", table_id))
    right = joining(network, host, "bob")
    right.replica.use_table_key(admission.table_key("plum tree", table_id))
    tables = [host, wrong, right]
    async with trio.open_nursery() as nursery:
        for table in tables:
            nursery.start_soon(table.serve)
        await frames(tables, lambda: wrong.problem is not None and len(host.lobby().seats) == 2)
        assert wrong.problem == "wrong passphrase for table 'kitchen'"
        assert not wrong.lobby().joined
        assert [s.name for s in host.lobby().seats] == ["Ann", "bob"]
        assert right.problem is None
        nursery.cancel_scope.cancel()


async def test_bots_added_while_the_table_is_still_opening_are_kept_for_when_it_serves() -> None:
    """The host's "add a bot" pressed before the table serves (it is still opening) used to be
    dropped without a word; it is now kept, and "remove" takes back one not yet seated."""
    host = hosting(MemoryNetwork(), Rules(seats=4))
    host.add_bot()
    host.add_bot()
    host.remove_bot()
    assert host.initial_bots == 1  # serve() seats this many as soon as it runs
    assert host.bots is None  # no bots' process is started for a table not yet served
    assert host.lobby().bots == 1


def test_a_voided_round_is_told_in_words_with_the_name_of_who_started_it() -> None:
    rules = Rules(seats=2)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"voided{i}") for i in range(2)])
    host, other = table.players
    (notice,) = EventReader(other).notices([RoundVoided(2, host.me)])
    assert isinstance(notice, MessageNotice)
    assert notice.text == (
        "round 2 as p0 started it did not count: the others had voted it out; "
        "the next in line starts the round"
    )
