"""What a heartbeat relayed in an EVIDENCE tells a peer, as much as the same heartbeat
heard directly (PROTOCOL.md 7.1, 13.1, 14): its sender is alive and acknowledges its
vector, and a restarted peer's own heartbeat coming back holds it to what it had promised.
A relay that repeats a held heartbeat under another signature is a forgery. (Found by
`tools.mutate`, seed 501, `protocol/sync_evidence.py`.)"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from protocol.clocks import VersionVector
from protocol.codec import pack
from protocol.envelope import PROTOCOL_VERSION, seal
from protocol.errors import DropReason, LocalProtocolError
from protocol.messages import Heartbeat, Kind, decode, heartbeat_body
from protocol.signing import key_id
from protocol.sync import SyncPeer
from tests.protocol.test_hostile import HISTORY, IDS, observer
from tests.protocol.test_relayed_evidence import _relayed_by_sam
from tools.gen_vectors import KEYS, TABLE


def _heartbeat_of(name: str, lamport: int, vector: Sequence[tuple[bytes, int]]) -> Heartbeat:
    datagram = seal(KEYS[name], heartbeat_body(TABLE, IDS[name], lamport, vector, b""))
    hb = decode(datagram, table=TABLE)
    assert isinstance(hb, Heartbeat)
    return hb


def _direct(hb: Heartbeat) -> bytes:
    return pack([PROTOCOL_VERSION, hb.body, hb.signature])


def test_a_held_heartbeat_relayed_under_another_signature_is_counted_as_forged() -> None:
    peer = observer()
    alice = IDS["alice"]
    hb = _heartbeat_of("alice", peer.logs[alice][-1].lamport + 1, peer.vector())
    peer.receive(_relayed_by_sam(hb.body, hb.signature), "sam", 1.0)
    assert peer.counters.total == 0
    # The very body Sam relayed before, under a signature Alice never made.
    forged = bytes([hb.signature[0] ^ 1]) + hb.signature[1:]
    peer.receive(_relayed_by_sam(hb.body, forged), "sam", 1.1)
    assert peer.counters[DropReason.BAD_SIGNATURE] == 1


@pytest.mark.parametrize("relayed", [False, True])
def test_a_heartbeat_shows_its_sender_alive_and_what_it_acknowledges(relayed: bool) -> None:
    peer = observer()  # every op was delivered at time 0
    alice = IDS["alice"]
    vector = peer.vector()
    hb = _heartbeat_of("alice", peer.logs[alice][-1].lamport + 1, vector)
    if relayed:
        peer.receive(_relayed_by_sam(hb.body, hb.signature), "sam", 5.0)
    else:
        peer.receive(_direct(hb), "alice", 5.0)
    # Heard only through a relay (a link that loses everything one way), Alice is alive
    # all the same: she is not to be voted out as silent.
    assert peer.signs_of_life()[alice] == 5.0
    assert peer.acks[alice] == VersionVector(vector)


def test_a_peer_restarted_without_its_log_holds_what_its_own_relayed_heartbeat_named() -> None:
    # Bob's last heartbeat before his crash named every op of the table; it comes back to
    # him relayed. Restarted without his log, he must not author before he holds all of
    # it (his next op's deps must not fall below what he had promised).
    full = [(a, n) for a, n in HISTORY.peers["alice"].vector()]
    last = max(op.lamport for _, op in HISTORY.ops)
    own = _heartbeat_of("bob", last + 1, full)
    held_back = HISTORY.ops[-1][1]  # the table's last op (not Bob's)
    assert held_back.author != IDS["bob"]
    bob = SyncPeer(KEYS["bob"], TABLE)
    bob.quarantine(hold=1.0)
    for i, (_, op) in enumerate(HISTORY.ops[:-1]):
        bob.receive(op.datagram(), ("table", i), 1.0)
    bob.receive(_relayed_by_sam(own.body, own.signature), "sam", 1.0)
    alice = _heartbeat_of("alice", last + 2, full)
    bob.receive(_direct(alice), "alice", 1.0)  # the table is heard from: the hold starts
    assert bob.delivered(bob.me) == HISTORY.peers["alice"].delivered(bob.me)
    bob.tick(3.0)  # the hold is over and his own chain is back, but not all he promised
    with pytest.raises(LocalProtocolError, match="restarting"):
        bob.author(Kind.LEAVE, 0, None)
    bob.receive(held_back.datagram(), "alice", 3.1)
    bob.tick(3.2)
    assert bob.quarantined is None
    bob.author(Kind.LEAVE, 0, None)


def test_a_relayed_heartbeat_of_a_stranger_is_counted_and_tells_nothing() -> None:
    # Mallory never joined: there is no key to check her heartbeat by. Relayed in an
    # EVIDENCE it is refused and counted; she is not alive here, acknowledges nothing and
    # promises nothing. (Found by `tools.mutate`, seed 18: with the refusal deleted, a
    # stranger's unverified heartbeat was taken as hers.)
    peer = observer()
    mallory = key_id(KEYS["mallory"].public_key)
    assert mallory not in peer.keys
    hb = _heartbeat_of("mallory", 1, peer.vector())
    peer.receive(_relayed_by_sam(hb.body, hb.signature), "sam", 5.0)
    assert peer.counters[DropReason.UNKNOWN_AUTHOR] == 1
    assert mallory not in peer.signs_of_life()
    assert mallory not in peer.acks
    assert mallory not in peer.promises.latest
