"""How a peer stamps its own ops near the Lamport step (PROTOCOL.md 5, 7): a START after
every READY it names even when a player's clock ran a whole step ahead of the host's, and
never at or below a promise its own heartbeat made. (Found by `tools.mutate`, seed 501,
`protocol/sync_lamport.py` `stamp`.)"""

from __future__ import annotations

import pytest

from nerts_p2p.game.rules import Rules
from protocol.envelope import seal
from protocol.errors import LocalProtocolError
from protocol.messages import Kind, heartbeat_body
from protocol.sync import SyncPeer
from tests.replication.table_helpers import ManualTable, seed_showing
from tools.gen_vectors import KEYS, TABLE, play_history

STEP = 2**24


def test_a_start_is_stamped_after_readies_a_whole_step_ahead_of_the_host() -> None:
    rules = Rules(seats=3)
    seeds = [seed_showing(rules, [], label=f"stamp/{i}") for i in range(3)]
    table = ManualTable(rules, seeds)
    host, ahead, other = table.players
    # A player whose clock ran far ahead stamps its READY a whole step past its own JOIN,
    # so past anything of the host's. The host sits the round out and starts it.
    ahead.sync.clock.observe(2**40)
    ready = ahead.ready()
    assert ready.lamport == ahead.sync.logs[ahead.me][-2].lamport + STEP
    assert ready.lamport > host.sync.logs[host.me][-1].lamport + STEP
    other.ready()
    table.collect()
    table.deliver_all()
    start = host.start()
    assert ready.lamport < start.lamport <= ready.lamport + STEP
    table.collect()
    table.deliver_all()
    assert all(1 in p.sync.epochs for p in table.players)


def test_a_peer_whose_own_heartbeat_promised_the_step_bound_refuses_to_author() -> None:
    # Bob is restored from a store written by a client that had promised, in its last
    # heartbeat, a time exactly one step past Bob's last op. His next op may be stamped no
    # later than that, and must be stamped later: he cannot author, and says so.
    history = play_history()
    bob = SyncPeer(KEYS["bob"], TABLE)
    bob.load(history.datagrams())
    assert bob.host is not None
    floor = max(bob.logs[bob.me][-1].lamport, bob.logs[bob.host][0].lamport)
    promise = heartbeat_body(TABLE, bob.me, floor + STEP, bob.vector(), b"")
    bob.receive(seal(KEYS["bob"], promise), "bob's old socket", 1.0)
    with pytest.raises(LocalProtocolError, match="limit"):
        bob.author(Kind.LEAVE, 0, None)
    assert bob.delivered(bob.me) == history.peers["alice"].delivered(bob.me)


def test_a_restored_peer_stamps_op_after_op_past_its_own_heartbeat_that_came_back() -> None:
    # Bob's last heartbeat before the restart promised a time far past his clock now: his
    # clock takes it in, so each op he signs is stamped past it and past the one before.
    # (Seed 1201: without the clock taking it in, the second op was stamped like the first
    # and refused as not after it.)
    history = play_history()
    bob = SyncPeer(KEYS["bob"], TABLE)
    bob.load(history.datagrams())
    promised = bob.clock.value + 1000
    promise = heartbeat_body(TABLE, bob.me, promised, bob.vector(), b"")
    bob.receive(seal(KEYS["bob"], promise), "bob's old socket", 1.0)
    ready = [2, b"\x01" * 32, [], bytes(32), bytes(104)]  # for a round he does not play yet
    first = bob.author(Kind.READY, 0, ready)
    second = bob.author(Kind.READY, 0, ready)
    assert promised < first.lamport < second.lamport
    assert bob.logs[bob.me][-2:] == [first, second]
