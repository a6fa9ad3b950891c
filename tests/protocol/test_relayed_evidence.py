"""Heartbeats relayed in an EVIDENCE are checked one by one, as their authors signed them
(PROTOCOL.md 7.1): a relay can repeat a heartbeat, never alter one. (Found by
`tools.mutate`, seed 101, `protocol/sync_evidence.py`.)"""

from __future__ import annotations

from protocol.codec import pack
from protocol.envelope import seal
from protocol.errors import DropReason
from protocol.messages import Heartbeat, Kind, decode, heartbeat_body
from tests.protocol.test_hostile import IDS, observer
from tools.gen_vectors import KEYS, TABLE


def _relayed_by_sam(body: bytes, signature: bytes) -> bytes:
    return seal(KEYS["sam"], [int(Kind.EVIDENCE), TABLE, IDS["sam"], [[body, signature]]])


def test_a_relayed_heartbeat_altered_under_its_authors_signature_is_counted_and_ignored() -> None:
    peer = observer()
    alice = IDS["alice"]
    lamport = peer.logs[alice][-1].lamport + 1
    genuine = seal(KEYS["alice"], heartbeat_body(TABLE, alice, lamport, peer.vector(), b""))
    peer.receive(genuine, "alice", 1.0)
    held = decode(genuine, table=TABLE)
    assert isinstance(held, Heartbeat)
    assert peer.counters.total == 0
    # Sam relays it again, as signed: nothing to learn, nothing counted.
    peer.receive(_relayed_by_sam(held.body, held.signature), "sam", 1.1)
    assert peer.counters.total == 0
    # Sam relays it with a later Lamport time under Alice's signature: a forgery. Counted
    # as a bad signature; Alice's promise stays the one she made.
    altered = pack(heartbeat_body(TABLE, alice, lamport + 1000, peer.vector(), b""))
    peer.receive(_relayed_by_sam(altered, held.signature), "sam", 1.2)
    assert peer.counters[DropReason.BAD_SIGNATURE] == 1
    assert peer.promises.latest[alice].lamport == lamport
