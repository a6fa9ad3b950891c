"""The blind peer (PROTOCOL.md 12, 13.4): a participant that does not acknowledge what the
others acknowledge is flagged to every player, and past the bound it is voted out."""

from __future__ import annotations

from nerts_p2p.game.rules import Rules
from nerts_p2p.table.presence import ACK_BOUND, LAG_WARN
from nerts_p2p.table.replica import SeatDeparted, SeatLagging
from tools.blind import make_blind
from tools.mesh import PeerMesh


def test_a_seat_that_hides_what_it_saw_is_flagged_lagging_and_then_voted_out() -> None:
    mesh = PeerMesh(players=3, rules=Rules(seats=3), seed=21)
    make_blind(mesh, 2, staleness=10 * ACK_BOUND)
    mesh.run(until=900, rounds=1)
    blind = mesh.replicas[2].me
    seat = mesh.replicas[0].rounds[1].seat_of[blind]
    for i in (0, 1):
        lagging = [e for e in mesh.events[i] if isinstance(e, SeatLagging)]
        assert lagging
        assert {e.seat for e in lagging} == {seat}
        assert all(e.seconds >= LAG_WARN for e in lagging)
        assert [e.seat for e in mesh.events[i] if isinstance(e, SeatDeparted)] == [seat]
    finals = {(f[1].scores, f[1].departed) for f in mesh.finals[:2]}
    assert len(finals) == 1
    assert next(iter(finals))[1] == frozenset({seat})


def test_honest_seats_on_a_lossy_link_are_not_flagged_as_lagging() -> None:
    from tools.mesh import Faults

    mesh = PeerMesh(players=3, rules=Rules(seats=3), seed=22, faults=Faults(drop=0.1))
    mesh.run(until=900, rounds=1)
    assert all(1 in f for f in mesh.finals)
    for events in mesh.events:
        assert not [e for e in events if isinstance(e, SeatDeparted)]
