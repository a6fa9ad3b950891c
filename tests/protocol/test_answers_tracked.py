"""The bound on the answers a peer keeps track of (reference: 64 sources): within it, an
answer that is all in makes the peer ask for the rest of the gap at once (pipelined
catch-up); past it, a new source's answer waits for the next heartbeat and the retry
time, and the memory does not grow (strangers' heartbeats name made-up senders)."""

from __future__ import annotations

from collections.abc import Hashable

import pytest

from protocol import sync_requests
from protocol.messages import Request, decode
from tests.protocol.test_anti_entropy_rules import _ahead, _asked, _heartbeat, _sent, _table, _turn
from tests.protocol.test_hostile import observer


@pytest.mark.parametrize(("others", "pipelined"), [(63, True), (64, False)])
def test_answers_of_64_sources_are_tracked_and_no_more(others: int, pipelined: bool) -> None:
    table = _table(players=3)
    source, asker, mover = table.players
    _ahead(source, mover, 80, table.now)
    now = table.now + 1.0
    for n in range(others):  # answers awaited from other sources, about made-up authors
        elsewhere: Hashable = ("elsewhere", n)
        asker.sync.request(elsewhere, [(n.to_bytes(8, "big"), 1, 1)], now)
    asker.outgoing()
    have = asker.sync.delivered(mover.me)
    asker.receive(_heartbeat(source, now), 0, now)  # asks the source for the mover's 80
    ((_, request),) = asker.outgoing()
    source.receive(request, 1, now)
    for _, datagram in source.outgoing():  # 64 ops: one answer's most
        asker.receive(datagram, 0, now)
    assert asker.sync.delivered(mover.me) == have + 64
    rest = _asked(_sent(asker), mover.me)
    assert rest == ([(have + 65, have + 80)] if pipelined else [])


def test_an_answer_is_in_only_once_every_op_asked_for_has_come() -> None:
    # Ten ops of one author asked for: eight came, the answer is still on its way, so the
    # author is not asked about again before the retry time; the last two come, and it
    # may be at once. (Seed 16: the count of ops asked for was short by two a range, so
    # the answer was taken as in after eight, and asked for again while still coming.)
    asker = observer()
    author = b"\x05" * 8
    asker.request("source", [(author, 1, 10)], 5.0)
    asker.outgoing()
    sync_requests.answer_arrived(asker, "source", 8, 5.01)
    asker.request("source", [(author, 9, 10)], 5.02)
    assert asker.outgoing() == []  # still waiting for the answer's last two
    sync_requests.answer_arrived(asker, "source", 2, 5.03)
    asker.request("source", [(author, 11, 12)], 5.04)
    assert len(asker.outgoing()) == 1


def test_a_request_made_while_an_answer_is_on_its_way_waits_for_both() -> None:
    # A late peer asks the source for a long gap of one author; before that answer arrives,
    # the source's next heartbeat shows an op of another author, and it asks for that one
    # too. Seen over UDP (`bench net`'s catch-up, the other author a spectator who had just
    # joined): the second request took the first's place, so each datagram of the first
    # answer "completed" it, the other author's op was asked for once per datagram (and
    # sent back as often), and the rest of the long gap waited out the 200 ms retry: a
    # 16 ms catch-up took 236 ms about one time in ten.
    table = _table(players=4)
    source, asker, mover, other = table.players
    _ahead(source, mover, 80, table.now)
    now = table.now + 1.0
    have = asker.sync.delivered(mover.me)
    asker.receive(_heartbeat(source, now), 0, now)
    ((_, long_request),) = asker.outgoing()
    source.receive(long_request, 1, now)
    long_answer = [datagram for _, datagram in source.outgoing()]  # 64 ops, not there yet
    for datagram in _turn(other, 1):
        source.receive(datagram, 3, now)
    source.outgoing()
    later = now + 0.08
    asker.receive(_heartbeat(source, later), 0, later)
    ((_, short_request),) = asker.outgoing()
    assert _asked([(0, decode(short_request, table=source.sync.table))], other.me)
    source.receive(short_request, 1, later)
    short_answer = [datagram for _, datagram in source.outgoing()]
    asked_mover: list[tuple[int, int]] = []
    asked_other: list[tuple[int, int]] = []
    for datagram in long_answer + short_answer:
        asker.receive(datagram, 0, later)
        sent = _sent(asker)
        asked_mover += _asked(sent, mover.me)
        asked_other += _asked(sent, other.me)
    assert asker.sync.delivered(mover.me) == have + 64
    assert asked_other == []  # its op was asked for once, and came
    # Both answers in: the rest of the long gap is asked for at once, and only then.
    assert asked_mover == [(have + 65, have + 80)]


def test_requests_made_while_answers_are_due_are_in_once_every_answer_is() -> None:
    asker = observer()
    a, b, c = (bytes([n]) * 8 for n in (5, 6, 7))
    asker.request("source", [(a, 1, 10)], 5.0)
    asker.request("source", [(b, 1, 2)], 5.05)  # the first answer is still due
    asker.request("source", [(c, 1, 1)], 5.1)  # and so are both
    assert len(asker.outgoing()) == 3
    sync_requests.answer_arrived(asker, "source", 12, 5.12)  # a's and b's, or any 12
    asker.request("source", [(a, 11, 12)], 5.13)
    assert asker.outgoing() == []  # one answer is still on its way: no new ask yet
    sync_requests.answer_arrived(asker, "source", 1, 5.14)
    asker.request("source", [(a, 11, 12), (b, 3, 3), (c, 2, 2)], 5.15)
    ((_, datagram),) = asker.outgoing()
    request = decode(datagram, table=asker.table)
    assert isinstance(request, Request)
    assert [r[0] for r in request.ranges] == [a, b, c]


def test_an_answer_not_in_by_the_retry_time_is_taken_as_lost() -> None:
    # Else one lost answer would hold every later request to that peer behind it, and the
    # peer would never pipeline again.
    asker = observer()
    a, b = b"\x05" * 8, b"\x06" * 8
    asker.request("source", [(a, 1, 10)], 5.0)  # its answer never comes
    asker.request("source", [(b, 1, 1)], 5.0 + asker.request_retry)
    asker.outgoing()
    sync_requests.answer_arrived(asker, "source", 1, 5.25)  # b's op
    asker.request("source", [(b, 2, 2)], 5.26)
    assert len(asker.outgoing()) == 1
