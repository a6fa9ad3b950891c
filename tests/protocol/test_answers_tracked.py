"""The bound on the answers a peer keeps track of (reference: 64 sources): within it, an
answer that is all in makes the peer ask for the rest of the gap at once (pipelined
catch-up); past it, a new source's answer waits for the next heartbeat and the retry
time, and the memory does not grow (strangers' heartbeats name made-up senders)."""

from __future__ import annotations

from collections.abc import Hashable

import pytest

from tests.protocol.test_anti_entropy_rules import _asked, _heartbeat, _sent, _table, _turn


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
