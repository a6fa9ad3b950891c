"""A state-hash mismatch at equal vectors is first a probe (it may be an equivocation not
seen yet), then a divergence if it is still there (PROTOCOL.md 9). A probe stands for
5 seconds: a mismatch after that is probed afresh, not reported on an old probe. (Found by
`tools.mutate`, seed 101, `protocol/sync_heartbeats.py`.)"""

from __future__ import annotations

from protocol.messages import Kind, Request, decode
from protocol.sync import DivergenceDetected, SyncPeer
from tools.gen_vectors import TABLE, play_history


def _beat(sender: SyncPeer, receiver: SyncPeer, now: float) -> tuple[int, int]:
    """`sender`'s heartbeat reaches `receiver`: (requests it sent back, divergences)."""
    sender.tick(now)
    for _, datagram in sender.outgoing():
        receiver.receive(datagram, "bob", now)
    asked = sum(isinstance(decode(d, table=TABLE), Request) for _, d in receiver.outgoing())
    found = sum(isinstance(e, DivergenceDetected) for e in receiver.events())
    return asked, found


def _apart() -> tuple[SyncPeer, SyncPeer]:
    """Alice and Bob at equal vectors whose folds hash apart; Alice's queue emptied."""
    history = play_history()
    ours, theirs = history.peers["alice"], history.peers["bob"]
    ours.set_state_hash(b"A" * 16)
    theirs.set_state_hash(b"B" * 16)
    ours.outgoing()
    ours.events()
    return ours, theirs


def test_a_mismatch_after_its_probe_expired_is_probed_afresh_then_reported() -> None:
    ours, theirs = _apart()
    assert _beat(theirs, ours, 10.0) == (1, 0)  # a probe: Bob is asked for his latest ops
    assert _beat(theirs, ours, 16.0) == (1, 0)  # 6 s later: the probe is stale, a new one
    assert ours.divergences == 0
    assert _beat(theirs, ours, 16.5) == (0, 1)  # still there: a divergence
    assert ours.divergences == 1  # the peer's count of the divergences it reported


def test_a_probe_stands_for_exactly_5_seconds() -> None:
    # (seed 501: a mismatch exactly 5 s after the probe found it neither standing nor
    # stale under `>`, so nothing was asked and the next mismatch was probed again.)
    ours, theirs = _apart()
    assert _beat(theirs, ours, 10.0) == (1, 0)
    assert _beat(theirs, ours, 15.0) == (1, 0)  # 5 s on: the probe is over, a new one
    assert _beat(theirs, ours, 15.1) == (0, 1)  # on that new probe: a divergence


def test_a_mismatch_at_a_vector_that_moved_since_its_probe_is_reported_once_answered() -> None:
    # (seed 602: the mismatch after the table moved on is judged by the probe's age alone,
    # and nothing checked that branch.) Times are exact binary fractions, so the retry time
    # is reached exactly.
    ours, theirs = _apart()
    ours.request_retry = 0.25
    assert _beat(theirs, ours, 10.0) == (1, 0)  # a probe at this vector
    ours.author(Kind.MOVE, 1, "turn +5H+7C+9D")  # the table moves on: both hold it
    for _, datagram in ours.outgoing():
        theirs.receive(datagram, "alice", 10.0625)
    assert theirs.vector() == ours.vector()
    ours.set_state_hash(b"A" * 16)  # each side's fold of the new vector: still apart
    theirs.set_state_hash(b"B" * 16)
    # At the new vector, before the probe's answer had time to come: not yet a divergence.
    assert _beat(theirs, ours, 10.125)[1] == 0
    # Once it had, to the request's retry time exactly: the mismatch is reported.
    assert _beat(theirs, ours, 10.25)[1] == 1
