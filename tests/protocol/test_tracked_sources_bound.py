"""A peer keeps the heartbeat vectors of at most 64 sources (PROTOCOL.md 9, MAX_ASKING): a
flood of addresses cannot grow its memory. A source past the bound is still caught up
with, by its heartbeats and the retry time, only without asking again the moment an
answer is in. (Found by `tools.mutate`, seed 604, `protocol/sync_heartbeats.py`.)"""

from __future__ import annotations

from collections.abc import Hashable

from protocol.sync import MAX_ASKING
from tests.protocol.test_anti_entropy_rules import _ahead, _asked, _heartbeat, _sent, _table


def test_the_vectors_of_64_sources_are_kept_and_no_more() -> None:
    table = _table(players=3)
    source, asker, mover = table.players
    now = table.now + 1.0
    in_step = _heartbeat(source, now)  # the source holds what the asker holds
    # The table's own addresses were kept already; more addresses replay it until the
    # memory holds 64 vectors.
    for n in range(MAX_ASKING - len(asker.sync._offered)):
        filler: Hashable = ("filler", n)
        asker.receive(in_step, filler, now)
    assert _sent(asker) == []  # nothing to ask them, nothing to push
    _ahead(source, mover, 80, now)
    later = now + 0.25
    address = "a 65th address"  # the source, heard at an address not seen before
    asker.receive(_heartbeat(source, later), address, later)
    ((_, request),) = asker.outgoing()
    source.receive(request, 1, later)
    answer = source.outgoing()
    assert answer
    for _, datagram in answer:
        asker.receive(datagram, address, later)
    # The answer is in, but the source's vector was not kept: nothing is asked at once...
    assert _asked(_sent(asker), mover.me) == []
    # ...and its next heartbeat past the retry time asks for the rest.
    again = later + 0.25
    asker.receive(_heartbeat(source, again), address, again)
    assert _asked(_sent(asker), mover.me)
