"""A peer whose clock ran far ahead of its own last op (someone's op stamped a step ahead)
promises at most half a step past that op, and still stamps every heartbeat later than the
one before, so each heartbeat stays a sign of life to the others (PROTOCOL.md 7, 13.1).
(Found by `tools.mutate`, seed 511, `protocol/sync_heartbeats.py` `heartbeat`.)"""

from __future__ import annotations

from protocol.messages import Heartbeat, decode
from tests.protocol.test_hostile import IDS, observer
from tools.gen_vectors import TABLE, play_history

STEP = 2**24


def test_heartbeats_of_a_peer_whose_clock_ran_ahead_keep_rising() -> None:
    alice = play_history().peers["alice"]
    alice.clock.observe(2**40)
    alice.outgoing()
    sent: list[tuple[float, bytes, int]] = []
    for now in (1.0, 1.1, 1.2):
        alice.tick(now)
        for _, datagram in alice.outgoing():
            message = decode(datagram, table=TABLE)
            if isinstance(message, Heartbeat):
                sent.append((now, datagram, message.lamport))
    last = alice.logs[IDS["alice"]][-1].lamport
    assert [lamport for _, _, lamport in sent] == [last + STEP // 2 + k for k in range(3)]
    watcher = observer()
    for now, datagram, _ in sent:
        watcher.receive(datagram, "alice", now)
        assert watcher.signs_of_life()[IDS["alice"]] == now
