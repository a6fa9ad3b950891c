"""The fuzzer's signature oracle (`tools.fuzz.link.forged_ops`) under PROTOCOL.md 4, step 6:
an op held on its successor's voucher is no forgery, and a peer that names a false voucher
is caught (the oracle checks the voucher as it checks any op)."""

from __future__ import annotations

from protocol.envelope import seal
from protocol.messages import Kind
from protocol.sync import SyncPeer
from tools.fuzz.link import forged_ops
from tools.gen_vectors import KEYS, TABLE, play_history

KEY_OF = {key.key_id: key.public_key for key in KEYS.values()}


def _peer_holding_vouched_admits() -> SyncPeer:
    history = play_history()
    host = [op for name, op in history.ops if name == "host"]
    peer = SyncPeer(KEYS["sam"], TABLE)
    peer.receive(host[0].datagram(), "host", 0.0)
    admits = host[1:5]  # ADMITs 2-5: 2-4 garbled, 5 signed
    pairs = [[op.body, bytes(64)] for op in admits[:-1]] + [[admits[-1].body, admits[-1].signature]]
    relay = seal(KEYS["alice"], [int(Kind.BATCH), TABLE, KEYS["alice"].key_id, pairs])
    peer.receive(relay, "alice", 1.0)
    assert peer.delivered(KEYS["host"].key_id) == 5
    return peer


def test_ops_held_on_a_voucher_are_no_forgeries() -> None:
    assert forged_ops(_peer_holding_vouched_admits(), KEY_OF, {}) == []


def test_a_peer_that_names_a_false_voucher_is_reported() -> None:
    peer = _peer_holding_vouched_admits()
    log = peer.logs[KEYS["host"].key_id]
    # Op 3 claims the OPEN as its voucher: not its author's op one seq later that names it.
    # Op 2 was vouched for by op 3, so it has no good voucher left either; op 4 still has.
    peer._vouched[log[2].hash] = log[0]
    found = forged_ops(peer, KEY_OF, {})
    assert [text.split(" of ")[0] for text in found] == ["delivered op 2", "delivered op 3"]
