"""The blind peer (PROTOCOL.md 12, 13.4): a participant that does not acknowledge what the
others acknowledge is flagged to every player, and past the bound it is voted out."""

from __future__ import annotations

from collections.abc import Callable

from nerts_p2p.game.rules import Rules
from nerts_p2p.table.presence import (
    ACK_BOUND,
    LAG_WARN,
    PRESENCE_CHECK,
    AckRequirement,
    Presence,
)
from nerts_p2p.table.replica import SeatDeparted, SeatLagging
from protocol.clocks import VersionVector
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


def _owed_while_heard(heard_at: Callable[[float], float], until: float) -> list[float]:
    """Looks every PRESENCE_CHECK at a participant owing one acknowledgment from time 0;
    `heard_at(now)` is its latest sign of life. Returns what it owes at each look."""
    presence = Presence()
    req = AckRequirement(0.0, VersionVector.from_pairs([(b"a" * 32, 5)]))
    presence.required[b"p"] = req
    owed = []
    now = 0.0
    while now <= until:
        presence.note_silences({b"p": heard_at(now)}, now)
        owed.append(req.owed(heard_at(now)))
        now += PRESENCE_CHECK
    return owed


def test_a_silence_does_not_count_against_an_acknowledgment_but_time_heard_does() -> None:
    def steady(now: float) -> float:
        return now - now % 0.075  # a heartbeat every 75 ms

    def cut_from_2_to_7(now: float) -> float:
        return steady(min(now, 2.0)) if now < 7.0 else steady(now)

    assert _owed_while_heard(steady, 4.0)[-1] >= ACK_BOUND
    owed = _owed_while_heard(cut_from_2_to_7, 10.0)
    at = [round(i * PRESENCE_CHECK, 2) for i in range(len(owed))]
    # Owing grows while heard, stands still while silent, and grows again when it is back:
    # the five silent seconds are not held against it, the seconds heard are.
    assert max(o for t, o in zip(at, owed, strict=True) if t < 8.0) < ACK_BOUND
    assert owed[at.index(9.0)] >= ACK_BOUND
    # (A silence is known to have ended at the first look after it: at most one look of
    # it is counted as owed.)
    assert 0 <= owed[at.index(7.0)] - owed[at.index(2.5)] <= PRESENCE_CHECK
