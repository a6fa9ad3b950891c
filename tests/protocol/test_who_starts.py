"""Who may START a round (PROTOCOL.md 5): the host, unless it departed from or left an
*earlier* round; what happens in that round or later ones does not change who started it.
(Found by `tools.mutate`, seed 604, `protocol/sync_membership.py` `starter`.)"""

from __future__ import annotations

from protocol.envelope import seal
from protocol.errors import DropReason
from protocol.messages import Kind
from protocol.sync import OpDelivered
from tests.protocol.test_hostile import HISTORY, IDS, observer
from tools.gen_vectors import KEYS


def test_a_host_who_leaves_during_a_round_was_still_that_rounds_starter() -> None:
    peer = observer()
    host, alice = IDS["host"], IDS["alice"]
    assert peer.starter(1) == host
    assert peer.starter(2) == host
    leave = seal(KEYS["host"], HISTORY.body("host", Kind.LEAVE, 0, None))
    peer.receive(leave, "host", 1.0)
    assert [e.op.kind for e in peer.events() if isinstance(e, OpDelivered)] == [Kind.LEAVE]
    assert peer.starter(2) == alice  # the next round is the heir's to start
    assert peer.starter(1) == host  # round 1 was the host's, and stays so
    # So a START of round 1 from Alice is not hers to make.
    start = [[host, alice], [0, 1], []]
    peer.receive(seal(KEYS["alice"], HISTORY.body("alice", Kind.START, 1, start)), "alice", 1.1)
    assert peer.counters[DropReason.NOT_A_MEMBER] == 1
