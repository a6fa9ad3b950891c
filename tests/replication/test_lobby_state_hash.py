"""The lobby's state hash is defined in bytes (PROTOCOL.md section 9), so any implementation
can compute it; before version 2 it was a hash of a Python repr."""

from __future__ import annotations

import hashlib

from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import lobby_state_hash
from protocol.messages import Heartbeat, decode
from tools.mesh import PeerMesh


def test_the_lobby_state_hash_is_the_documented_bytes() -> None:
    a, b = bytes.fromhex("0102030405060708"), bytes.fromhex("a1a2a3a4a5a6a7a8")
    expected = hashlib.sha256(
        b"nerts-p2p/lobby\x00" + a + (3).to_bytes(4, "big") + b + (1).to_bytes(4, "big")
    ).digest()[:16]
    assert lobby_state_hash(((a, 3), (b, 1))) == expected
    assert lobby_state_hash(()) == hashlib.sha256(b"nerts-p2p/lobby\x00").digest()[:16]


def test_a_lobby_heartbeat_carries_the_lobby_state_hash_of_its_vector() -> None:
    mesh = PeerMesh(players=3, rules=Rules(seats=3), seed=1)
    while not all(r.is_member for r in mesh.replicas):
        assert mesh.step()
    host = mesh.replicas[0]
    assert host.current_round is None
    host.sync._next_heartbeat = 0.0
    host.tick(mesh.now)
    beats = [decode(d, table=host.sync.table) for _, d in host.outgoing()]
    heartbeat = next(m for m in beats if isinstance(m, Heartbeat))
    # The first 8 bytes of the lobby hash, then the expelled digest (nobody expelled).
    nobody = hashlib.sha256(b"nerts-p2p/expelled\x00").digest()[:8]
    assert heartbeat.state_hash == lobby_state_hash(heartbeat.vector)[:8] + nobody
