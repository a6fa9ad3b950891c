"""A START at its edges: a second START for a round already started is refused, and a
START stamped as far ahead as the Lamport rules allow, by a host who sits the round out,
still lets its players act (a round op's Lamport floor includes its round's START, which
its deps do not name when the starter does not play). (Found by `tools.mutate`, seed 704,
`protocol/sync_membership.py` and `protocol/sync_checks.py`.)"""

from __future__ import annotations

import re

import pytest

from nerts_p2p.game.errors import NertsError
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import ProtocolViolation, RoundFinal
from nerts_p2p.table.status import moves_open
from protocol.envelope import seal
from protocol.errors import LocalProtocolError
from protocol.messages import Kind, op_body
from protocol.sync_limits import MAX_LAMPORT_STEP

from .table_helpers import ManualTable, call_nerts, seed_showing


def _violations(table: ManualTable) -> list[str]:
    return [e.reason for events in table.events for e in events if isinstance(e, ProtocolViolation)]


def test_a_second_start_of_a_round_already_started_is_refused() -> None:
    table = ManualTable(Rules(seats=2), [bytes([1]) * 32, bytes([2]) * 32])
    table.start_round()
    host, other = table.players
    rnd = other.current_round
    assert rnd is not None
    first = rnd.log.start
    words = "round 1 has already started"
    with pytest.raises(LocalProtocolError, match=re.escape(words)):
        host.sync.author(Kind.START, 1, first.payload)
    # A modified host signs it anyway: every receiver refuses it, and round 1 stays the
    # round the first START began.
    sync = host.sync
    body = op_body(
        Kind.START, sync.table, sync.me, sync.delivered(sync.me) + 1,
        sync.logs[sync.me][-1].hash, sync.clock.tick(), 1,
        sync.deps_for(Kind.START, 1, first.payload), first.payload,
    )  # fmt: skip
    other.receive(seal(sync.key, body), 0, table.now)
    table.collect()
    assert any(words in reason for reason in _violations(table))
    assert other.current_round is rnd
    assert rnd.log.start is first


def test_a_start_stamped_as_far_ahead_as_allowed_by_a_host_who_sits_out_is_played() -> None:
    table = ManualTable(Rules(seats=2), [bytes([1]) * 32, bytes([2]) * 32, bytes([3]) * 32])
    host, first, second = table.players
    table.ready_all([first, second])
    # The host's clock ran far ahead (an op stamped far ahead that it holds and does not
    # name, say): its START is stamped MAX_LAMPORT_STEP past what it names.
    floor = max(op.lamport for log in host.sync.logs.values() for op in log)
    host.sync.clock.observe(floor + 4 * MAX_LAMPORT_STEP)
    host.start()
    table.collect()
    table.deliver_all()
    table.settle(0.3)
    rnd = first.current_round
    assert rnd is not None
    assert host.me not in rnd.log.participants
    assert rnd.log.start.lamport == floor + MAX_LAMPORT_STEP
    # Each player's mix nonce, stamped just past the START, more than MAX_LAMPORT_STEP
    # past every op its deps name, is delivered everywhere: the round's moves count.
    for replica in table.players:
        current = replica.current_round
        assert current is not None
        assert moves_open(current)
    assert _violations(table) == []


def test_a_start_is_stable_at_once_where_every_participant_was_heard_past_it() -> None:
    # The guest saw the START and said READY again (a lobby op: it waits for no START) before
    # the watcher had the START. The watcher already holds ops of every participant stamped
    # at or past the START, so the START is stable the moment it arrives, with no heartbeat.
    rules = Rules(seats=2)
    table = ManualTable(
        rules, [seed_showing(rules, [], label=f"s{i}") for i in range(2)], spectators=1
    )
    host, guest, watcher = table.players
    table.ready_all()
    start = host.start()
    table.queue = []  # delivered by hand below
    guest.sync.receive(start.datagram(), 0, table.now)  # its sync layer only: no MIX yet
    ready = next(op for op in reversed(guest.sync.logs[guest.me]) if op.kind == Kind.READY)
    again = guest.sync.author(Kind.READY, 0, ready.payload)
    assert again.lamport > start.lamport
    watcher.receive(again.datagram(), 1, table.now)
    assert watcher.sync.delivered(guest.me) == again.seq
    watcher.receive(start.datagram(), 0, table.now)
    log = watcher.sync.epochs[1]
    assert log.stable_bound() == start.lamport
    assert log.stable_count() == 1


@pytest.mark.parametrize("heard_again", [True, False])
def test_a_player_who_says_ready_twice_plays_the_round_on_the_ready_its_start_saw(
    heard_again: bool,
) -> None:
    # The guest says READY again before the START (a new commitment, a new mix nonce's):
    # the START is judged, the round dealt and audited on the latest READY the host had
    # heard, and the round ends with nobody named a cheater. When the second READY was
    # still on its way, the START uses the first, and the guest plays on that one's deal
    # and nonce too (until 2026-12-02 its own peer could not start that round: "seat 1's
    # seed does not deal the cards it shows"; found from seed 15's survivor in
    # round_start.begin_round, a line no test ran).
    rules = Rules(seats=2, nerts_size=1)
    seeds = [
        seed_showing(rules, [], nerts_top="AS", label="twice/0"),
        seed_showing(rules, [], label="twice/1"),
    ]
    table = ManualTable(rules, seeds)
    host, guest = table.players
    table.ready_all()
    guest.ready()
    again = guest.outgoing()  # the second READY, on its way
    if heard_again:
        for _, datagram in again:
            host.receive(datagram, 1, table.now)
    first, latest = [op for op in guest.sync.logs[guest.me] if op.kind == Kind.READY]
    assert first.payload != latest.payload
    start = host.start()
    assert host.sync.ready_for(1, guest.me, start) == (latest if heard_again else first)
    table.collect()
    table.deliver_all()
    if not heard_again:
        for _, datagram in again:  # the second READY arrives after all
            host.receive(datagram, 1, table.now)
    assert guest.current_round is not None
    assert not _violations(table)
    table.settle(0.3)
    call_nerts(table, settle=3.0)
    finals = [[e for e in table.events[i] if isinstance(e, RoundFinal)] for i in (0, 1)]
    assert [len(f) for f in finals] == [1, 1]
    assert finals[0] == finals[1]
    assert finals[0][0].cheaters == frozenset()


def test_the_host_cannot_start_the_next_round_before_this_one_is_final() -> None:
    # Mid-round the host asks for round 2: refused in words, nothing signed. (Seed 16:
    # the refusal deleted, no test ran it.)
    rules = Rules(seats=2)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"early-next/{i}") for i in range(2)])
    table.start_round()
    host = table.players[0]
    assert host.current_round is not None
    seq = host.sync.delivered(host.me)
    with pytest.raises(NertsError, match="round 1 is not final yet"):
        host.start()
    assert host.sync.delivered(host.me) == seq
