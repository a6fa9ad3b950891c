"""Anti-entropy rules of `SyncPeer` (PROTOCOL.md 4, 5, 9) pinned one at a time, each where a
heartbeat or a push would otherwise hide its loss: ops that arrive out of order, what a
request names, the 200 ms before an author is asked about again, the bound on requests in
flight, one answer's budget shared by several authors, a heartbeat that arrives before the
ops it counts. (Found by `tools.mutate`: each of these could break with every other test
green.)"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable

from nerts_p2p.game.moves import Move
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import TableReplica
from protocol.codec import pack
from protocol.envelope import PROTOCOL_VERSION, seal
from protocol.errors import DropReason
from protocol.messages import (
    NO_PREV,
    PLAYER,
    Batch,
    Heartbeat,
    Kind,
    Op,
    Request,
    decode,
    heartbeat_body,
    op_body,
)
from protocol.signing import SigningKeyPair
from tests.protocol.test_hostile import IDS, observer, op_of
from tests.replication.table_helpers import ManualTable, seed_showing
from tools.gen_vectors import TABLE


def _table(players: int = 2) -> ManualTable:
    rules = Rules(seats=players)
    seeds = [seed_showing(rules, [], label=f"anti-entropy/{i}") for i in range(players)]
    table = ManualTable(rules, seeds)
    table.start_round()
    table.settle(0.3)
    return table


def _turn(replica: TableReplica, times: int) -> list[bytes]:
    """The datagrams of `times` ops of `replica` (turning its stock over and over), sent
    nowhere yet: the test delivers them itself."""
    datagrams = []
    for _ in range(times):
        rnd, seat = replica.current_round, replica.seat
        assert rnd is not None
        assert seat is not None
        op = replica.play(Move(seat, "turn" if rnd.state.seats[seat].stock else "recycle"))
        assert isinstance(op, Op)
        datagrams.append(op.datagram())
    replica.outgoing()
    replica.events()
    return datagrams


def _sent(replica: TableReplica) -> list[tuple[Hashable, object]]:
    return [(dest, decode(d, table=replica.sync.table)) for dest, d in replica.outgoing()]


def _asked(sent: list[tuple[Hashable, object]], author: bytes) -> list[tuple[int, int]]:
    return [
        (r[1], r[2])
        for _, message in sent
        if isinstance(message, Request)
        for r in message.ranges
        if r[0] == author
    ]


def _heartbeat(replica: TableReplica, now: float) -> bytes:
    replica.tick(now)
    beats = [
        d
        for _, d in replica.outgoing()
        if isinstance(decode(d, table=replica.sync.table), Heartbeat)
    ]
    assert beats, "no heartbeat was due"
    return beats[-1]


def test_ops_arriving_out_of_order_are_all_delivered_once_the_gap_fills() -> None:
    table = _table()
    mover, watcher = table.players
    before = watcher.sync.delivered(mover.me)
    ops = _turn(mover, 5)
    # The first, then the last three (parked: the second is missing), then the second.
    for datagram in (ops[0], ops[2], ops[3], ops[4], ops[1]):
        watcher.receive(datagram, 0, table.now)
    assert watcher.sync.delivered(mover.me) == before + 5  # no heartbeat, no request needed
    assert [op.datagram() for op in watcher.sync.logs[mover.me][-5:]] == ops


def test_a_request_names_only_the_seqs_neither_delivered_nor_parked() -> None:
    table = _table()
    mover, watcher = table.players
    have = watcher.sync.delivered(mover.me)
    ops = _turn(mover, 6)
    for datagram in (ops[0], ops[2], ops[4]):  # seqs have+1, have+3, have+5
        watcher.receive(datagram, 0, table.now)
    watcher.outgoing()
    watcher.receive(_heartbeat(mover, table.now + 1.0), 0, table.now + 1.0)
    asked = _asked(_sent(watcher), mover.me)
    assert asked == [(have + 2, have + 2), (have + 4, have + 4), (have + 6, have + 6)]


def test_an_author_is_asked_about_once_within_200_ms_and_again_after() -> None:
    table = _table()
    mover, watcher = table.players
    have = watcher.sync.delivered(mover.me)
    _turn(mover, 2)  # never delivered: the heartbeats show the gap
    asked_at = []
    for now in (1.0, 1.08, 1.16, 1.25):
        watcher.receive(_heartbeat(mover, now), 0, now)
        if _asked(_sent(watcher), mover.me):
            asked_at.append(now)
    assert asked_at == [1.0, 1.25]  # PROTOCOL.md 9: not again within 200 ms
    assert watcher.sync.delivered(mover.me) == have


def _stranger_heartbeat(n: int) -> bytes:
    """A heartbeat from a made-up peer (no key known: its signature is never checked)."""
    sender = n.to_bytes(8, "big")
    return pack([PROTOCOL_VERSION, pack(heartbeat_body(TABLE, sender, 5, [], b"")), bytes(64)])


def test_requests_in_flight_are_remembered_for_4096_authors_and_no_more() -> None:
    # The bound on the memory of requests in flight (strangers' heartbeats name made-up
    # senders): within it, nobody is asked twice within the retry time; past it, the memory
    # is emptied rather than grown.
    peer = observer()

    def asks(n: int) -> bool:
        peer.receive(_stranger_heartbeat(n), f"source {n}", 1.0)
        return any(isinstance(decode(d, table=TABLE), Request) for _, d in peer.outgoing())

    assert all(asks(n) for n in range(4096))
    assert not asks(0)  # 4096 authors in flight: the first is still remembered
    assert asks(4096)  # one more: the memory is emptied to take it
    assert asks(0)  # so the first is asked again


def test_one_answer_shared_by_three_authors_holds_at_most_64_ops() -> None:
    table = _table(players=4)
    source, asker, *others = table.players
    _turn(source, 25)
    for replica in others:
        for datagram in _turn(replica, 25):
            source.receive(datagram, 9, table.now)
    source.outgoing()
    # The asker lacks 25 ops of three authors; it asks the first player for all three runs.
    ranges = []
    for author in (p.me for p in (source, *others)):
        have = asker.sync.delivered(author)
        ranges.append((author, have + 1, have + 30))
    asker.sync.request(0, ranges, table.now + 1.0)
    ((_, request),) = asker.outgoing()
    source.receive(request, 1, table.now + 1.0)
    sent = 0
    for destination, message in _sent(source):
        assert destination == 1
        sent += len(message.ops) if isinstance(message, Batch) else 1
    assert sent == 64  # 21 or 22 of each author: the budget, shared round robin, not 65


def test_a_heartbeat_that_arrives_before_the_ops_it_counts_raises_the_horizon_on_delivery() -> None:
    table = _table()
    first, second = table.players
    # The second player moves, stamped later than the first player's coming move.
    for _ in range(3):
        second.sync.clock.tick()
    (late,) = _turn(second, 1)
    (early,) = _turn(first, 1)
    first.receive(late, 1, table.now)
    first.events()
    # The first player's heartbeat (stamped after both moves) reaches the second player
    # before the first player's own move does.
    beat = _heartbeat(first, table.now + 1.0)
    second.receive(beat, 0, table.now + 1.0)
    second.receive(early, 0, table.now + 1.0)
    second.tick(table.now + 1.1)
    second.outgoing()
    rnd = second.current_round
    assert rnd is not None
    # Both moves are stable on the second player: the first player's heartbeat, held until
    # its move arrived, promises that nothing of its own can sort before them.
    assert rnd.log.stable_count() == len(rnd.log.ops)


def _chain(key: SigningKeyPair, host: bytes, first_lamport: int, count: int) -> list[bytes]:
    """A newcomer's JOIN and then `count - 1` LEAVE ops, chained, each stamped later."""
    datagrams: list[bytes] = []
    prev = NO_PREV
    for seq in range(1, count + 1):
        deps: list[object] = [[host, 1]]
        if seq > 1:
            deps.append([key.key_id, seq - 1])
        kind, payload = (
            (Kind.JOIN, [key.public_key, f"n{seq}", PLAYER]) if seq == 1 else (Kind.LEAVE, None)
        )
        body = op_body(kind, TABLE, key.key_id, seq, prev, first_lamport + seq, 0, deps, payload)
        datagrams.append(seal(key, body))
        prev = op_of(datagrams[-1]).hash
    return datagrams


def test_a_rejected_authors_waiting_ops_leave_room_for_other_authors() -> None:
    peer = observer()
    host = IDS["host"]
    sources = iter(range(10**6))
    lamport = max(op.lamport for log in peer.logs.values() for op in log) + 10
    # Nine authors each park 511 ops (seqs 3..513, waiting for seq 2: one short of the 512
    # one author may park), then send a seq 2 that breaks the protocol (stamped at their
    # JOIN's time): rejected, and their parked ops can never be delivered. They must not
    # keep their room: together they would fill the 4096 places of all authors, and the
    # last ones' ops would find none.
    for n in range(9):
        key = SigningKeyPair(hashlib.sha256(f"parker {n}".encode()).digest())
        ops = _chain(key, host, lamport, 513)
        peer.receive(ops[0], next(sources), 1.0)
        for datagram in ops[2:]:
            peer.receive(datagram, next(sources), 1.0)
        bad = op_of(ops[1])
        backdated = op_body(Kind.LEAVE, TABLE, key.key_id, 2, bad.prev, lamport, 0,
                            [[host, 1], [key.key_id, 1]], None)  # fmt: skip
        peer.receive(seal(key, backdated), next(sources), 1.0)
        assert peer.delivered(key.key_id) == 1
    assert peer.counters[DropReason.BACKDATED] == 9
    assert peer.counters[DropReason.RATE_LIMITED] == 0
