"""The trio node over an in-memory network, in virtual time (trio's autojump clock)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from pathlib import Path

import trio
import trio.testing

from nerts_p2p.game.bots import CASUAL, BotPlayer
from nerts_p2p.game.rules import Rules
from nerts_p2p.net.contacts import encode_contacts
from nerts_p2p.net.node import MAX_HEARD, Join, NodeEvent, Play, TableNode
from nerts_p2p.net.records import network_round_record
from nerts_p2p.net.resume import resume_replica
from nerts_p2p.net.store import TableHeader, TableStore
from nerts_p2p.net.transport import Address, MemoryNetwork
from nerts_p2p.table.presence import SILENCE_BOUND
from nerts_p2p.table.replica import TableReplica
from protocol.errors import RemoteProtocolError
from protocol.messages import SPECTATOR, Kind, Op, decode
from tools.mesh import PeerMesh, seeded_bytes

from .helpers import MemoryTable, key_for


async def _play(table: MemoryTable, *, limit: float = 600.0) -> None:
    async with trio.open_nursery() as nursery:
        for i, node in enumerate(table.nodes):
            await nursery.start(node.run)
            nursery.start_soon(table.collect, i)
        with trio.move_on_after(limit):
            async with trio.open_nursery() as pilots:
                for pilot in table.pilots:
                    pilots.start_soon(pilot.run)
            # Every peer has its final: linger so the last heartbeats settle.
            await trio.sleep(1.0)
        nursery.cancel_scope.cancel()


async def test_three_nodes_play_a_round_and_agree(autojump_clock: trio.testing.MockClock) -> None:
    table = MemoryTable(MemoryNetwork(), Rules(seats=3, nerts_size=7))
    table.open()
    table.join("ann")
    table.join("bob")
    await _play(table)
    finals = [table.finals(i) for i in range(3)]
    assert all(len(f) == 1 for f in finals), [len(f) for f in finals]
    assert finals[0] == finals[1] == finals[2]
    assert not finals[0][0].cheaters
    # The joiners knew only the host's address; the host's signed contacts introduced them.
    ann, bob = table.nodes[1].replica, table.nodes[2].replica
    assert bob.me in ann.sync.peers
    assert ann.me in bob.sync.peers


async def test_contacts_from_a_stranger_are_refused_and_counted(
    autojump_clock: trio.testing.MockClock,
) -> None:
    table = MemoryTable(MemoryNetwork(), Rules(seats=2, nerts_size=5))
    host = table.open()
    stranger = key_for("stranger")
    forged = encode_contacts(stranger, host.replica.sync.table, [(b"x" * 8, ("10.9.9.9", 9))])
    sender = table.network.open()
    async with trio.open_nursery() as nursery:
        await nursery.start(host.run)
        for datagram in forged:
            await sender.send(datagram, host.address)
        await sender.send(b"\x94\xa8contacts garbage", host.address)
        await trio.sleep(1.0)
        nursery.cancel_scope.cancel()
    assert host.stats.contacts_refused == 2
    assert ("10.9.9.9", 9) not in host.addresses()


async def test_joiners_admitted_together_know_each_other_at_once(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """The host tells the table a new member's address in the step that admits it, even
    right after telling it of the joiner before. Until the others know it, a member's ops
    reach them only by anti-entropy, a heartbeat later: a round started right after the
    last JOIN had its first moves fold tens of milliseconds late at every peer."""
    table = MemoryTable(MemoryNetwork(), Rules(seats=4, nerts_size=7))
    host = table.open()
    joiners = [table.join(name) for name in ("ann", "bob", "cid")]
    members = host.replica.sync.members
    async with trio.open_nursery() as nursery:
        for i, node in enumerate(table.nodes):
            await nursery.start(node.run)
            nursery.start_soon(table.collect, i)
        for pilot in table.pilots:
            nursery.start_soon(pilot.run)
        while not all(j.replica.me in members for j in joiners):
            await trio.sleep(0.0005)
        admitted = trio.current_time()
        while not all(
            other.address in joiner.addresses()
            for joiner in joiners
            for other in joiners
            if other is not joiner
        ):
            await trio.sleep(0.0005)
        introduced = trio.current_time() - admitted
        nursery.cancel_scope.cancel()
    # three hops at most: the host's CONTACTS, then a datagram of the newcomer's (1 ms each)
    assert introduced < 0.01, f"the joiners learnt each other's addresses {introduced:.3f} s late"


def _records(table: MemoryTable, index: int) -> list[dict[str, object]]:
    node = table.nodes[index]
    return [network_round_record(node.replica.rounds[f.round], f) for f in table.finals(index)]


async def test_four_nodes_two_rounds_over_a_lossy_network_print_the_same_records(
    autojump_clock: trio.testing.MockClock,
) -> None:
    table = MemoryTable(MemoryNetwork(drop=0.1, seed=4), Rules(seats=4, nerts_size=7), max_rounds=2)
    table.open()
    for name in ("ann", "bob", "cid"):
        table.join(name)
    await _play(table)
    records = [_records(table, i) for i in range(4)]
    assert len(records[0]) == 2
    assert records[1] == records[0]
    assert records[2] == records[0]
    assert records[3] == records[0]
    assert table.network.dropped > 0


async def _play_until_mid_round(table: MemoryTable, nursery: trio.Nursery) -> TableReplica:
    """Start every node and pilot; return the host's replica once round 1 has a few moves."""
    for i, node in enumerate(table.nodes):
        await nursery.start(node.run)
        nursery.start_soon(table.collect, i)
    for pilot in table.pilots:
        nursery.start_soon(pilot.run)
    host = table.nodes[0].replica
    while host.current_round is None or len(host.current_round.steps) < 5:
        await trio.sleep(0.01)
    return host


async def test_a_player_cut_off_past_the_silence_bound_is_recorded_as_departed_everywhere(
    autojump_clock: trio.testing.MockClock,
) -> None:
    table = MemoryTable(MemoryNetwork(), Rules(seats=3, nerts_size=7), pace=0.5)
    table.open()
    table.join("ann")
    bob = table.join("bob")
    async with trio.open_nursery() as nursery:
        host = await _play_until_mid_round(table, nursery)
        table.network.cut.add(bob.address)  # his cable, for longer than the silence bound
        await trio.sleep(SILENCE_BOUND + 2.0)
        table.network.cut.discard(bob.address)
        with trio.move_on_after(600):
            while not all(table.finals(i) for i in range(3)):
                await trio.sleep(0.5)
        nursery.cancel_scope.cancel()
    seat = host.rounds[1].seat_of[bob.replica.me]
    records = [_records(table, i) for i in range(3)]
    assert records[0][0]["departed"] == [seat]
    assert records[1] == records[0]
    assert records[2] == records[0]  # Bob, back, agrees he was voted out


async def test_a_spectator_joining_mid_round_catches_up_and_sees_the_same_final(
    autojump_clock: trio.testing.MockClock,
) -> None:
    table = MemoryTable(MemoryNetwork(), Rules(seats=3, nerts_size=7))
    table.open()
    table.join("ann")
    table.join("bob")
    async with trio.open_nursery() as nursery:
        host = await _play_until_mid_round(table, nursery)
        assert host.rounds[1].final is None  # the round is being played
        watcher = table.join("watcher", role=SPECTATOR)
        await nursery.start(watcher.run)
        nursery.start_soon(table.collect, 3)
        nursery.start_soon(table.pilots[3].run)
        with trio.move_on_after(600):
            while not all(table.finals(i) for i in range(4)):
                await trio.sleep(0.5)
        nursery.cancel_scope.cancel()
    assert table.finals(3) == table.finals(0)
    assert watcher.replica.seat is None
    assert _records(table, 3) == _records(table, 0)


async def test_an_application_that_never_reads_events_loses_events_not_the_game(
    autojump_clock: trio.testing.MockClock,
) -> None:
    table = MemoryTable(MemoryNetwork(), Rules(seats=2, nerts_size=5))
    table.open()
    table.join("ann")
    table.nodes[1].events.close()  # nobody reads this peer's events
    table.nodes[0]._events_in, table.nodes[0].events = trio.open_memory_channel[NodeEvent](2)
    async with trio.open_nursery() as nursery:
        for node in table.nodes:
            await nursery.start(node.run)
        for pilot in table.pilots:
            nursery.start_soon(pilot.run)
        with trio.move_on_after(600):
            while not all(p.match_over() for p in table.pilots):
                await trio.sleep(0.5)
        nursery.cancel_scope.cancel()
    assert all(p.match_over() for p in table.pilots)
    assert table.nodes[0].stats.events_dropped > 0
    first = table.nodes[0].replica.rounds[1].final
    assert first is not None
    assert first == table.nodes[1].replica.rounds[1].final


async def test_a_host_node_stores_its_open_before_anyone_joins(
    autojump_clock: trio.testing.MockClock, tmp_path: Path
) -> None:
    """The host authors its OPEN before its node exists. The node used to count it as
    stored already, so a host killed before the first JOIN came back with no OPEN and could
    not host its table again ("the table's host does not answer")."""
    replica = TableReplica.open_table(
        key_for("host"), name="t", rules=Rules(seats=2), spectators=True,
        randomness=seeded_bytes("host"),
    )  # fmt: skip
    store = TableStore.open(tmp_path, replica.sync.table)
    store.begin(TableHeader(replica.sync.table, replica.me, ("", 0), "t", "t", 0, 1, True))
    host = TableNode(replica, MemoryNetwork().open(), store=store)
    async with trio.open_nursery() as nursery:
        await nursery.start(host.run)
        await trio.sleep(1.0)
        nursery.cancel_scope.cancel()
    again = TableStore.open(tmp_path, replica.sync.table)
    assert again.own_ops == [op.datagram() for op in replica.sync.logs[replica.me]]
    resumed = resume_replica(key_for("host"), again, randomness=seeded_bytes("again"))
    assert resumed.sync.table == replica.sync.table
    assert resumed.rules == replica.rules


async def test_a_move_is_stored_then_on_the_wire_before_its_author_folds_it() -> None:
    # The others fold our move while we fold it: it goes out as soon as it is signed (and,
    # crash-safe, after it is stored), not after our own fold of it.
    mesh = PeerMesh(players=2, rules=Rules(seats=2), seed=3)
    replica = mesh.replicas[0]
    while not (
        replica.current_round is not None
        and len(replica.current_round.log.nonces) == 2
        and replica.seat is not None
    ):
        assert mesh.step()
    mesh._flush(0)  # what the mesh's own run left to send
    rnd = replica.current_round
    seen: list[tuple[str, int]] = []  # (what happened, ops folded here at that moment)

    class Store:
        def append_own(self, op: Op) -> None:
            seen.append((f"stored {op.kind.name}", len(rnd.steps)))

        def append_seed(self, number: int, seed: bytes, salt: bytes) -> None:
            pass

        def append_clock_lease(self, value: int) -> None:
            pass

    class Wire:
        address = ("10.0.0.1", 1)

        def send_now(self, datagram: bytes, destination: tuple[str, int]) -> bool:
            seen.append(("sent", len(rnd.steps)))
            return True

    node = TableNode(replica, Wire(), store=Store())  # type: ignore[arg-type]
    node.gossiped[mesh.replicas[1].me] = ("10.0.0.2", 2)
    node._flush()  # a fresh store takes our ops so far
    seen.clear()
    move = BotPlayer(CASUAL, replica.seat, random.Random(1)).act(rnd.state)
    assert move is not None
    folded_before = len(rnd.steps)
    node.apply_intent(Play(move))
    assert seen[:2] == [("stored MOVE", folded_before), ("sent", folded_before)]
    assert len(rnd.steps) == folded_before + 1  # and folded here right after


async def test_joiners_learn_each_others_address_as_soon_as_they_are_members(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # The host told the table its contacts once a second, or when a new peer first wrote to
    # it, which is before that peer is a member (and CONTACTS names only members): a round
    # started within the second sent its first moves between joiners only through
    # anti-entropy, a heartbeat late.
    table = MemoryTable(MemoryNetwork(), Rules(seats=3, nerts_size=5))
    host = table.open()
    ann, bob = table.join("ann"), table.join("bob")
    async with trio.open_nursery() as nursery:
        for node in table.nodes:
            await nursery.start(node.run)
            node.events.close()
        for pilot in table.pilots:
            nursery.start_soon(pilot.run)
        members = host.replica.sync.members
        while not (ann.replica.me in members and bob.replica.me in members):
            await trio.sleep(0.005)
        joined = trio.current_time()
        while not (bob.address in ann.addresses() and ann.address in bob.addresses()):
            await trio.sleep(0.005)
        introduced = trio.current_time() - joined
        nursery.cancel_scope.cancel()
    assert introduced < 0.2  # a tick or two (25 ms each) and the network's latency


async def test_datagrams_from_ever_new_addresses_do_not_grow_the_node(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Forged source addresses are free on a LAN: junk from thousands of them (each dropped
    by the gate) is forgotten, not kept per address for ever, while the node still knows
    when it last heard its peers."""
    table = MemoryTable(MemoryNetwork(queue_size=8192), Rules(seats=2, nerts_size=5))
    host = table.open()
    guest = table.join("ann")
    async with trio.open_nursery() as nursery:
        for node in table.nodes:
            await nursery.start(node.run)
            node.events.close()
        for _ in range(50):
            await trio.sleep(0.2)
            if guest.replica.is_member:
                break
            if guest.replica.sync.open_op is not None:
                guest.submit(Join())  # once the table's OPEN is here (again if refused)
        assert guest.replica.is_member
        for _ in range(6):
            for i in range(1000):
                junk = table.network.open(host=f"10.66.{i // 250}.{i % 250}")
                await junk.send(b"\xc1", host.address)
            await trio.sleep(0.5)
        assert host.stats.datagrams_in > 6000
        assert len(host.last_heard) <= MAX_HEARD
        assert host.silence(guest.replica.me, trio.current_time()) is not None
        nursery.cancel_scope.cancel()


async def test_a_broadcast_reaches_every_player_before_any_spectator(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # Spectators never slow the players down: every `sendto` of a move to a watcher ahead
    # of a player's copy is part of that player's latency. A broadcast went out in the
    # order of a set of addresses, so a player could wait behind every watcher.
    table = MemoryTable(MemoryNetwork(), Rules(seats=3, nerts_size=5))
    table.open()
    table.join("ann")
    table.join("bob")
    watchers = [table.join(f"eve{n}", role=SPECTATOR) for n in range(4)]
    spectator_addresses = {node.address for node in watchers}
    #: per player node, its urgent sends in order: (datagram, destination)
    sends: list[list[tuple[bytes, Address]]] = [[], [], []]
    for node, log in zip(table.nodes[:3], sends, strict=False):
        queue = node._queue

        def recording(
            datagram: bytes,
            destination: Address,
            *,
            urgent: bool,
            queue: Callable[..., None] = queue,
            log: list[tuple[bytes, Address]] = log,
        ) -> None:
            if urgent:
                log.append((datagram, destination))
            queue(datagram, destination, urgent=urgent)

        node._queue = recording  # type: ignore[method-assign]
    await _play(table)
    assert all(len(table.finals(i)) == 1 for i in range(3))
    table_id = table.nodes[0].replica.sync.table
    moves = [
        [destination for _, destination in run]
        for log in sends
        for datagram, run in itertools.groupby(log, key=lambda sent: sent[0])
        if _is_move(datagram, table_id)
    ]
    to_watchers = [order for order in moves if spectator_addresses & set(order)]
    assert len(to_watchers) > 20  # the round's moves, to players and watchers alike
    for order in to_watchers:
        first_watcher = min(i for i, a in enumerate(order) if a in spectator_addresses)
        assert set(order[first_watcher:]) <= spectator_addresses, order


def _is_move(datagram: bytes, table: bytes) -> bool:
    try:
        message = decode(datagram, table=table)
    except RemoteProtocolError:  # the node's own CONTACTS: not the replica's
        return False
    return isinstance(message, Op) and message.kind == Kind.MOVE
