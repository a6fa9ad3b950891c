"""Anti-entropy rules of `SyncPeer` (PROTOCOL.md 4, 5, 9) pinned one at a time, each where a
heartbeat or a push would otherwise hide its loss: ops that arrive out of order, what a
request names, the 200 ms before an author is asked about again, the bound on requests in
flight, one answer's budget shared by several authors, a heartbeat that arrives before the
ops it counts. (Found by `tools.mutate`: each of these could break with every other test
green.)"""

from __future__ import annotations

from collections.abc import Hashable

import pytest

from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import ReplicatedRound, TableReplica
from protocol.codec import pack
from protocol.envelope import PROTOCOL_VERSION, seal
from protocol.errors import DropReason
from protocol.messages import (
    MAX_RANGES,
    Batch,
    Evidence,
    Heartbeat,
    Kind,
    Op,
    Request,
    decode,
    decode_op,
    heartbeat_body,
    op_body,
    request_body,
)
from protocol.signing import SigningKeyPair
from protocol.sync import BROADCAST
from tests.protocol.test_hostile import IDS, next_op, observer, op_of
from tests.replication.table_helpers import ManualTable, seed_showing, turn_or_recycle
from tools.gen_vectors import KEYS, TABLE


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
        seat = replica.seat
        assert seat is not None
        datagrams.append(turn_or_recycle(replica, seat).datagram())
    replica.outgoing()
    replica.events()
    return datagrams


def _ahead(source: TableReplica, mover: TableReplica, times: int, now: float) -> None:
    """`source` holds `times` ops of `mover` that nobody else has (their datagrams lost on
    the way to everyone else), and has sent what it had to."""
    for datagram in _turn(mover, times):
        source.receive(datagram, 2, now)
    source.outgoing()


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


def _beat_ahead_of_moves(moves: int) -> tuple[ManualTable, bytes, list[bytes]]:
    """Two players. The second moves once, stamped later than the `moves` moves the first
    then makes; the first holds that move, and its heartbeat (stamped after them all)
    reaches the second player before any of the first player's moves: (the table, the
    second player's move, the first player's moves, none delivered yet)."""
    table = _table()
    first, second = table.players
    for _ in range(3 * moves):
        second.sync.clock.tick()
    (late,) = _turn(second, 1)
    early = _turn(first, moves)
    first.receive(late, 1, table.now)
    first.events()
    second.receive(_heartbeat(first, table.now + 1.0), 0, table.now + 1.0)
    return table, late, early


def _round_once_taken(player: TableReplica, datagram: bytes, now: float) -> ReplicatedRound:
    """`player` takes the first player's `datagram` and ticks: its current round."""
    player.receive(datagram, 0, now)
    player.tick(now + 0.1)
    player.outgoing()
    rnd = player.current_round
    assert rnd is not None
    return rnd


def test_a_heartbeat_that_arrives_before_the_ops_it_counts_raises_the_horizon_on_delivery() -> None:
    table, _, (early,) = _beat_ahead_of_moves(1)
    rnd = _round_once_taken(table.players[1], early, table.now + 1.0)
    # Both moves are stable on the second player: the first player's heartbeat, held until
    # its move arrived, promises that nothing of its own can sort before them.
    assert rnd.log.stable_count() == len(rnd.log.ops)


def test_a_heartbeat_counting_two_missing_ops_waits_for_both_to_raise_the_horizon() -> None:
    # The first player's heartbeat counts two moves the second player lacks; the first of
    # them arrives. Until the other does, the first player's horizon is only that move's
    # time: a move of the second player's stamped after both may not become stable, for
    # the missing one sorts before it. (Found by `tools.mutate`, seed 19: the heartbeat
    # applied on the first delivery made that move stable with a gap before it.)
    table, late, (one, two) = _beat_ahead_of_moves(2)
    rnd = _round_once_taken(table.players[1], one, table.now + 1.0)
    late_op = op_of(late, table.players[1].sync.table)
    assert late_op.hash in {op.hash for op in rnd.log.ops}
    stable = {op.hash for op in list(rnd.log)[: rnd.log.stable_count()]}
    assert late_op.hash not in stable, "stable with a move of the first player still missing"
    _round_once_taken(table.players[1], two, table.now + 1.2)
    assert rnd.log.stable_count() == len(rnd.log.ops)


def _leaves(member: TableReplica, host: bytes, count: int) -> list[bytes]:
    """`count` LEAVE ops of `member` after its JOIN, chained; the first is stamped at its
    JOIN's Lamport time (backdated: rejected for good), the others later."""
    join = member.sync.logs[member.me][-1]
    datagrams: list[bytes] = []
    prev = join.hash
    for offset in range(count):
        seq = join.seq + 1 + offset
        deps = [[host, 1], [member.me, seq - 1]]
        lamport = join.lamport + offset
        body = op_body(Kind.LEAVE, member.sync.table, member.me, seq, prev, lamport, 0, deps, None)
        datagrams.append(seal(member.sync.key, body))
        prev = op_of(datagrams[-1], member.sync.table).hash
    return datagrams


def test_a_rejected_authors_waiting_ops_leave_room_for_other_authors() -> None:
    rules = Rules(seats=2)
    seeds = [seed_showing(rules, [], label=f"room/{i}") for i in range(2)]
    table = ManualTable(rules, seeds, spectators=8)
    peer = table.players[0]  # the host
    sources = iter(range(10**6))
    # Nine members each park 511 ops (waiting for the op before them: one short of the 512
    # one author may park), then send that op, which breaks the protocol (stamped at their
    # JOIN's time): rejected, and their parked ops can never be delivered. They must not
    # keep their room: together they would fill the 4096 places of all authors, and the
    # last ones' ops would find none.
    for member in table.players[1:]:
        ops = _leaves(member, peer.me, 512)
        for datagram in ops[1:]:
            peer.receive(datagram, next(sources), 1.0)
        peer.receive(ops[0], next(sources), 1.0)
        assert peer.sync.delivered(member.me) == 1
    assert peer.sync.counters[DropReason.BACKDATED] == 9
    assert peer.sync.counters[DropReason.RATE_LIMITED] == 0


def test_an_answer_to_ranges_of_unequal_length_sends_every_op_of_each() -> None:
    table = _table(players=3)
    source, asker, third = table.players
    _turn(source, 2)
    for datagram in _turn(third, 12):
        source.receive(datagram, 9, table.now)
    source.outgoing()
    ranges = []
    for author in (source.me, third.me):
        have = asker.sync.delivered(author)
        ranges.append((author, have + 1, have + 30))
    asker.sync.request(0, ranges, table.now + 1.0)
    ((_, request),) = asker.outgoing()
    source.receive(request, 1, table.now + 1.0)
    for destination, answer in source.outgoing():
        assert destination == 1
        asker.receive(answer, 0, table.now + 1.0)
    assert asker.sync.delivered(source.me) == source.sync.delivered(source.me)
    assert asker.sync.delivered(third.me) == source.sync.delivered(third.me)


def test_a_peer_relays_the_heartbeats_it_holds_once_every_four_heartbeats() -> None:
    table = _table()
    relay, other = table.players
    step = relay.sync.heartbeat_interval * 1.01  # every tick is due
    sent = []
    for k in range(1, 13):
        now = table.now + k * step
        relay.receive(_heartbeat(other, now), 1, now)  # a fresh heartbeat to relay each time
        relay.outgoing()
        relay.tick(now)
        kinds = [type(decode(d, table=relay.sync.table)) for _, d in relay.outgoing()]
        assert kinds.count(Heartbeat) == 1
        sent.append(kinds.count(Evidence))
    # PROTOCOL.md 7.1 (reference): once every 4 heartbeat intervals.
    first = sent.index(1)
    assert first < 4
    assert sent == [1 if (k - first) % 4 == 0 and k >= first else 0 for k in range(12)]


def test_a_horizon_crosses_a_link_that_loses_everything_one_way_by_relayed_heartbeats() -> None:
    table = _table(players=3)
    quiet, deaf, mover = table.players  # nothing from `quiet` ever reaches `deaf` directly
    for _ in range(50):
        mover.sync.clock.tick()  # its move is stamped after anything sent so far
    (move,) = _turn(mover, 1)
    for replica, source in ((quiet, 2), (deaf, 2)):
        replica.receive(move, source, table.now)
    step = quiet.sync.heartbeat_interval * 1.01
    now = table.now
    for _ in range(6):
        now += step
        # `quiet`'s heartbeat, stamped after the move, reaches only `mover`...
        mover.receive(_heartbeat(quiet, now), 0, now)
        # ...which relays it (EVIDENCE) to `deaf`, with its own heartbeats.
        mover.tick(now)
        for _, datagram in mover.outgoing():
            deaf.receive(datagram, 2, now)
        deaf.tick(now)
        for _, datagram in deaf.outgoing():
            mover.receive(datagram, 1, now)
            quiet.receive(datagram, 1, now)
        quiet.outgoing()
        mover.outgoing()
    rnd = deaf.current_round
    assert rnd is not None
    assert rnd.log.stable_count() == len(rnd.log.ops)  # the move is stable on `deaf` too


def test_a_promise_that_arrives_after_the_op_that_broke_it_still_expels_the_liar() -> None:
    peer = observer()
    alice = IDS["alice"]
    last = peer.logs[alice][-1]
    # Alice's heartbeat promises that her next op is stamped after lamport + 10...
    promise = seal(
        KEYS["alice"], heartbeat_body(TABLE, alice, last.lamport + 10, peer.vector(), b"")
    )
    # ...but it is stamped lamport + 5; and it arrives first, the promise second.
    peer.receive(next_op("alice", lamport=last.lamport + 5), "alice", 1.0)
    assert peer.delivered(alice) == last.seq + 1
    assert alice not in peer.expelled
    peer.outgoing()
    peer.receive(promise, "alice", 1.1)
    assert peer.expelled.get(alice) == last.seq + 1
    assert peer.counters[DropReason.BROKEN_PROMISE] == 1
    # Every peer must reach the same verdict: the op and the promise go to everyone.
    sent = [(dest, decode(d, table=TABLE)) for dest, d in peer.outgoing()]
    assert any(dest == BROADCAST and isinstance(m, Evidence) for dest, m in sent)
    assert any(dest == BROADCAST and isinstance(m, Op) and m.author == alice for dest, m in sent)


def test_a_request_from_a_stranger_is_answered_with_first_ops_only() -> None:
    # Its source address could be forged: a stranger (a peer about to join) gets the first
    # op of each author it names, which carries the key, and nothing more (PROTOCOL.md 9).
    peer = observer()
    stranger = SigningKeyPair(b"\x5a" * 32)
    wanted = [(author, 1, 50) for author in (IDS["host"], IDS["alice"])]
    peer.receive(seal(stranger, request_body(TABLE, stranger.key_id, wanted)), "far", 1.0)
    answered = []
    for destination, datagram in peer.outgoing():
        assert destination == "far"
        message = decode(datagram, table=TABLE)
        assert isinstance(message, Batch)
        answered += [decode_op(body, sig, table=TABLE) for body, sig in message.ops]
    assert sorted((op.author, op.seq) for op in answered) == sorted(
        (author, 1) for author, _, _ in wanted
    )


@pytest.mark.parametrize("member", [False, True])
def test_a_request_naming_one_range_many_times_is_answered_once(member: bool) -> None:
    # Its source could be forged: 16 copies of one range drew 16 copies of the op, 20 times
    # the request's size sent to whoever the source names (a hostile-peer run found it).
    peer = observer()
    asker = KEYS["alice"] if member else SigningKeyPair(b"\x5b" * 32)
    wanted = [(IDS["host"], 1, 3)] * MAX_RANGES
    request = seal(asker, request_body(TABLE, asker.key_id, wanted))
    peer.receive(request, "far", 1.0)
    answered = []
    sent = 0
    for destination, datagram in peer.outgoing():
        assert destination == "far"
        sent += len(datagram)
        message = decode(datagram, table=TABLE)
        assert isinstance(message, Batch)
        answered += [decode_op(body, sig, table=TABLE) for body, sig in message.ops]
    seqs = [op.seq for op in answered]
    assert sorted(seqs) == ([1, 2, 3] if member else [1])
    assert sent < 2 * len(request) * len(seqs)


def _ops_of_body_length(replica: TableReplica, length: int, count: int) -> None:
    """`count` MOVE ops of `replica` whose bodies are exactly `length` bytes (the payload is
    padding: the fold calls it unreadable, which the sync layer does not care about)."""
    rnd = replica.current_round
    assert rnd is not None
    probe = replica.sync.author(Kind.MOVE, rnd.number, "x")
    base = len(probe.body) - 1  # a payload of up to 31 bytes has a one-byte header
    for _ in range(count):
        op = replica.sync.author(Kind.MOVE, rnd.number, "x" * (length - base))
        assert len(op.body) == length
    replica.outgoing()


def _batch_sizes(source: TableReplica, asker: TableReplica, first: int, count: int) -> list[int]:
    ask = seal(
        asker.sync.key,
        request_body(asker.sync.table, asker.me, [(source.me, first, first + count - 1)]),
    )
    source.receive(ask, 1, 10.0)
    sizes = []
    for _, datagram in source.outgoing():
        assert len(datagram) <= 1200
        message = decode(datagram, table=source.sync.table)
        assert isinstance(message, Batch)
        sizes.append(len(message.ops))
    return sizes


def test_a_batch_holds_ops_while_their_bodies_and_72_bytes_each_fit_in_1000_bytes() -> None:
    # Each op costs its body, its 64-byte signature and 8 bytes of framing: 125 bytes a
    # piece fill a batch with exactly eight; 126 bytes leave room for seven only.
    for cost, per_batch in ((125, 8), (126, 7)):
        table = _table()
        source, asker = table.players
        first = source.sync.delivered(source.me) + 2  # after the probe
        _ops_of_body_length(source, cost - 72, 2 * per_batch)
        assert _batch_sizes(source, asker, first, 2 * per_batch) == [per_batch, per_batch]


def test_a_players_own_heartbeat_raises_its_own_horizon_at_once() -> None:
    # A player who makes no move still promises, by its heartbeat, that its next op is
    # stamped later: the other player's move becomes stable in its own view at its own
    # next heartbeat, not only when that heartbeat comes back relayed. (Found by
    # `tools.mutate`, seed 801.)
    table = _table()
    idle, mover = table.players
    (move,) = _turn(mover, 1)
    idle.receive(move, 1, table.now)
    idle.receive(_heartbeat(mover, table.now + 0.5), 1, table.now + 0.5)
    idle.outgoing()
    rnd = idle.current_round
    assert rnd is not None
    assert rnd.log.stable_count() == len(rnd.log.ops) - 1  # its own last op is older
    idle.tick(table.now + 1.0)
    idle.outgoing()  # its heartbeat goes nowhere: no relay brings it back
    assert rnd.log.stable_count() == len(rnd.log.ops)


def test_a_heartbeat_waiting_for_its_ops_is_replaced_only_by_a_newer_one() -> None:
    # Two heartbeats of the first player overtake its two moves, the newer one first. The
    # older one, arriving second, must not replace the newer while both wait: once the
    # moves are in, the horizon is the newer promise's, not the older's. (Found by
    # `tools.mutate`, seed 803.)
    table = _table()
    first, second = table.players
    (one,) = _turn(first, 1)
    older = _heartbeat(first, table.now + 0.5)
    (two,) = _turn(first, 1)
    newer = _heartbeat(first, table.now + 1.0)
    for datagram in (newer, older, one, two):
        second.receive(datagram, 0, table.now + 1.0)
    second.outgoing()
    rnd = second.current_round
    assert rnd is not None
    promised = decode(newer, table=second.sync.table)
    assert isinstance(promised, Heartbeat)
    assert rnd.log.horizon[first.me] == promised.lamport


def test_a_caught_liars_later_lies_about_the_same_op_send_no_second_verdict() -> None:
    # Alice's promise broke on her op, and she was expelled from it: the op and the promise
    # went to everyone once. Her next heartbeats make the same promise about the same op
    # (she never signs past it): each one is broken too, but her verdict is given already,
    # so no peer broadcasts the evidence again, or every heartbeat of a caught liar would
    # set the whole table relaying. (Found by `tools.mutate`, seed 22: with the check
    # `expelled[author] <= op.seq` made `<`, every such heartbeat relayed it all again.)
    peer = observer()
    alice = IDS["alice"]
    last = peer.logs[alice][-1]
    vector = peer.vector()  # what Alice holds when she makes every promise below
    peer.receive(next_op("alice", lamport=last.lamport + 5), "alice", 1.0)
    for i, lamport in enumerate((10, 20, 30)):
        promise = heartbeat_body(TABLE, alice, last.lamport + lamport, vector, b"")
        peer.receive(seal(KEYS["alice"], promise), "alice", 1.1 + i / 10)
        if i == 0:
            assert peer.expelled.get(alice) == last.seq + 1
            assert any(isinstance(decode(d, table=TABLE), Evidence) for _, d in peer.outgoing())
    sent = [decode(d, table=TABLE) for _, d in peer.outgoing()]
    assert not [m for m in sent if isinstance(m, Evidence)]
    assert not [m for m in sent if isinstance(m, Op) and m.author == alice]
    assert peer.expelled.get(alice) == last.seq + 1
