"""How long a restarted peer stays quiet (PROTOCOL.md 14): one that lost its store waits
to hold every op of its own that a heartbeat named, however long it has heard the table;
one restored from its store and alone at the table waits five `hold`s, whatever `hold`
is. (Found by `tools.mutate`, seed 703, `protocol/sync_restart.py`.)"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from nerts_p2p.game.rules import Rules
from protocol.envelope import seal
from protocol.errors import LocalProtocolError
from protocol.messages import Kind, Request, decode, heartbeat_body
from protocol.sync import BROADCAST, SyncPeer
from protocol.sync_restart import Resuming, ask_everyone_while_our_chain_waits
from tests.protocol.test_hostile import HISTORY, IDS, observer
from tests.replication.table_helpers import ManualTable, fixed_randomness, restored_from_store
from tools.gen_vectors import KEYS, TABLE


def _heartbeat(name: str, lamport: int, vector: Sequence[tuple[bytes, int]]) -> bytes:
    return seal(KEYS[name], heartbeat_body(TABLE, IDS[name], lamport, sorted(vector), b""))


def test_a_peer_that_lost_its_store_stays_quiet_until_it_holds_its_own_named_ops() -> None:
    # Bob restarts without his log; the table's ops reach him, his own do not. Alice's
    # heartbeats name his ops: past the hold he still may not author (a JOIN now would be
    # a second seq 1: equivocation).
    bob = SyncPeer(KEYS["bob"], TABLE)
    bob.quarantine(hold=1.0)
    for i, (name, op) in enumerate(HISTORY.ops):
        if name != "bob":
            bob.receive(op.datagram(), ("table", i), 1.0)
    table_vector = HISTORY.peers["alice"].vector()
    own = dict(table_vector)[IDS["bob"]]
    assert own >= 1
    assert bob.delivered(bob.me) == 0
    lamport = HISTORY.peers["alice"].clock.value
    for n, now in enumerate((1.0, 2.5, 5.0)):
        bob.receive(_heartbeat("alice", lamport + 1 + n, table_vector), "alice", now)
        bob.tick(now)
        assert bob.quarantined is not None, f"released at {now} without his own ops"
    with pytest.raises(LocalProtocolError, match="restarting"):
        bob.author(Kind.LEAVE, 0, None)


@pytest.mark.parametrize("hold", [1.0, 2.0])
def test_a_restored_peer_alone_at_the_table_waits_five_holds(hold: float) -> None:
    bob = SyncPeer(KEYS["bob"], TABLE)
    bob.load(HISTORY.datagrams())
    bob.resume(hold=hold)
    bob.tick(0.0)
    alone = 5 * hold  # PROTOCOL.md 14: five holds
    bob.tick(alone - 0.01)
    assert bob.resuming is not None, "no heartbeat heard, but not yet five holds"
    bob.tick(alone)
    assert bob.resuming is None


def test_a_peer_restored_in_the_lobby_waits_to_hear_every_member_still_there() -> None:
    # A lobby of three (no round yet); p1 restarts from its store. p0's heartbeat alone
    # does not release it: p2 is still a member and may hold what p1 last promised.
    rules = Rules(seats=4)
    table = ManualTable(rules, [fixed_randomness(bytes(32), f"lobby{i}")(32) for i in range(3)])
    p0, p1, p2 = table.players
    assert not p0.sync.epochs
    restored = restored_from_store(p1, "p1")
    assert restored.sync.resuming is not None
    restored.tick(table.now)
    beats = {}
    for sender in (p0, p2):
        sender.tick(table.now + 0.1)
        beats[sender.me] = [d for _, d in sender.outgoing()]
    for datagram in beats[p0.me]:
        restored.receive(datagram, 0, table.now + 0.2)
    assert restored.sync.resuming is not None, "p2 not heard yet, and the hold not over"
    for datagram in beats[p2.me]:
        restored.receive(datagram, 2, table.now + 0.3)
    assert restored.sync.resuming is None, "every member still there heard"


def test_a_restored_peer_asks_every_address_again_if_its_chain_still_waits_a_hold_on() -> None:
    # For `hold` after its first heartbeat a restored peer asks only what heartbeats name,
    # of their senders. If its own chain still waits then (two peers restarted while a
    # third played on: each one's ops wait for the other's, and the third's heartbeats name
    # neither; `fuzz link` seed 4100 stalled so for ever), it asks every address again.
    waiting = observer()
    waiting.resuming = Resuming(head=3, hold=1.0, started=9.0, since=10.0)
    for now in (10.0, 10.5, 10.99):
        ask_everyone_while_our_chain_waits(waiting, now)
        assert waiting.outgoing() == []
    ask_everyone_while_our_chain_waits(waiting, 11.0)
    ((destination, datagram),) = waiting.outgoing()
    assert destination == BROADCAST
    asked = decode(datagram, table=waiting.table)
    assert isinstance(asked, Request)
    assert {author for author, _, _ in asked.ranges} == set(waiting.members) - {waiting.me}
    # A chain all delivered waits for nothing of anyone's: nobody is asked.
    caught_up = observer()
    caught_up.resuming = Resuming(head=0, hold=1.0, started=9.0, since=10.0)
    ask_everyone_while_our_chain_waits(caught_up, 12.0)
    assert caught_up.outgoing() == []
