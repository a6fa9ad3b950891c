"""A one-way link: peer 1's datagrams never reach peer 2, everything else is fine.

Regression test for issue 10's "a one-way link blocks finality": peer 2 never heard peer 1's
heartbeats, so peer 1's horizon never passed its REVEAL there and the round was never final.
Signed heartbeats are now relayed as they are (EVIDENCE), so horizons go around the link.
"""

from __future__ import annotations

from nerts_p2p.game.rules import Rules
from tools.mesh import Faults, PeerMesh


def test_a_one_way_link_blocks_finality_no_more() -> None:
    link = Faults(one_way=frozenset({(1, 2)}))
    mesh = PeerMesh(players=3, rules=Rules(seats=3), seed=0, faults=link)
    mesh.run(until=1500, rounds=2)
    assert mesh.stats.dropped > 100, "the link really loses everything from 1 to 2"
    for number in (1, 2):
        results = {(f[number].scores, f[number].totals) for f in mesh.finals if number in f}
        assert all(number in f for f in mesh.finals), f"round {number} is not final everywhere"
        assert len(results) == 1
    assert len(set(mesh.stable_hashes())) == 1
