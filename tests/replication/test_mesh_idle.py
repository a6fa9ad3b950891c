"""The in-memory mesh fails fast on a wedged table instead of simulating on to `until`:
a rule that stops every table after its first round (nobody can say READY again) made
each mesh test run for minutes before its assertions failed (`tools.mutate` stopped such
runs by hand). `MeshIdleError` names the rounds each peer finished."""

from __future__ import annotations

import pytest

from nerts_p2p.game.rules import Rules
from tools.mesh import MeshIdleError, PeerMesh


def test_a_table_that_can_never_start_its_next_round_fails_within_the_idle_limit() -> None:
    mesh = PeerMesh(players=2, rules=Rules(seats=2), seed=3, pace=0.2)
    mesh.run(until=600.0, rounds=1)
    assert all(1 in f for f in mesh.finals)
    for replica in mesh.replicas:
        replica.upcoming_round = lambda: None  # type: ignore[method-assign]
    started = mesh.now
    with pytest.raises(MeshIdleError, match=r"rounds final at each peer: \[\[1\], \[1\]\]"):
        mesh.run(until=started + 3600.0, rounds=2)
    assert mesh.now - started < mesh.idle_limit + 30.0  # type: ignore[operator]


def test_a_table_that_plays_on_is_never_called_idle() -> None:
    mesh = PeerMesh(players=2, rules=Rules(seats=2), seed=3, pace=0.2, idle_limit=20.0)
    mesh.run(until=3600.0, rounds=2)
    assert all(len(f) == 2 for f in mesh.finals)
