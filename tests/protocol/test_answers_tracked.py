"""The bound on the answers a peer keeps track of (reference: 64 sources): within it, an
answer that is all in makes the peer ask for the rest of the gap at once (pipelined
catch-up); past it, a new source's answer waits for the next heartbeat and the retry
time, and the memory does not grow (strangers' heartbeats name made-up senders)."""

from __future__ import annotations

from collections.abc import Hashable

import pytest

from protocol import sync_requests
from tests.protocol.test_anti_entropy_rules import _asked, _heartbeat, _sent, _table, _turn
from tests.protocol.test_hostile import observer


@pytest.mark.parametrize(("others", "pipelined"), [(63, True), (64, False)])
def test_answers_of_64_sources_are_tracked_and_no_more(others: int, pipelined: bool) -> None:
    table = _table(players=3)
    source, asker, mover = table.players
    for datagram in _turn(mover, 80):
        source.receive(datagram, 2, table.now)
    source.outgoing()
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
