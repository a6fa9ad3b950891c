"""The blind peer (PROTOCOL.md 12, 13.4): a participant that does not acknowledge what the
others acknowledge is flagged to every player, and past the bound it is voted out."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import cast

import pytest

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
from protocol.order import EpochLog
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


def test_a_seat_that_catches_up_and_lags_again_is_flagged_again() -> None:
    # A warning is once per lag, not once per round: meeting what was asked clears it, so
    # the next lag is shown too (found by tools.mutate, seed 607: the clearing deleted).
    a, b, lagger = b"a" * 8, b"b" * 8, b"c" * 8
    log = cast(EpochLog, SimpleNamespace(participants=(a, b, lagger), excluded={}))
    presence = Presence()

    def look(now: float, lagger_holds: int, others_hold: int) -> list[bytes]:
        """Everyone's vectors (what each holds of a's ops) at a look; who is newly flagged."""
        vectors = {
            p: VersionVector.from_pairs([(a, lagger_holds if p == lagger else others_hold)])
            for p in (a, b, lagger)
        }
        presence.update(log, vectors, now)
        flagged = [
            p
            for p in (a, b, lagger)
            if presence.lag(p, now) >= LAG_WARN and p not in presence.warned
        ]
        presence.warned.update(flagged)  # as the replica's look does, with a SeatLagging each
        return flagged

    assert look(0.0, 5, 5) == []
    assert look(0.25, 5, 9) == []  # the others hold 9: the lagger is asked for them
    assert look(0.5, 5, 9) == []
    assert look(1.5, 5, 9) == [lagger]
    assert look(2.0, 5, 9) == []  # flagged once for this lag
    assert look(2.25, 9, 9) == []  # caught up
    assert look(2.5, 9, 14) == []
    assert look(3.75, 9, 14) == [lagger]  # lagging again: flagged again


def test_at_a_two_seat_table_the_one_other_seat_is_asked_to_acknowledge_too() -> None:
    # Two participants are enough to compare what each acknowledges with what the other
    # does: a blind seat at a table of two is flagged like at a bigger one. (Found by
    # `tools.mutate`, seed 801: only tables of three or more asked anything.)
    mesh = PeerMesh(players=2, rules=Rules(seats=2), seed=23)
    make_blind(mesh, 1, staleness=10 * ACK_BOUND)
    mesh.run(until=900, rounds=1)
    seat = mesh.replicas[0].rounds[1].seat_of[mesh.replicas[1].me]
    lagging = [e for e in mesh.events[0] if isinstance(e, SeatLagging)]
    assert lagging
    assert {e.seat for e in lagging} == {seat}


def _owed_at_looks(looks: list[tuple[float, float]]) -> float:
    """Looks at (time, latest sign of life) of a participant owing one acknowledgment from
    time 0; returns what it owes after the last look."""
    presence = Presence()
    req = AckRequirement(0.0, VersionVector.from_pairs([(b"a" * 32, 5)]))
    presence.required[b"p"] = req
    for now, heard in looks:
        presence.note_silences({b"p": heard}, now)
    return req.owed(looks[-1][1])


def test_a_participant_heard_all_along_owes_every_second_since_it_was_asked() -> None:
    # No sign ever older than a heartbeat: no silence is credited. (Found by
    # `tools.mutate`, seed 803: every look was taken for a silence.)
    looks = [(i * PRESENCE_CHECK, i * PRESENCE_CHECK - 0.05) for i in range(1, 17)]
    assert _owed_at_looks(looks) == pytest.approx(looks[-1][1])


def test_a_sign_of_life_between_two_late_looks_ends_the_silence_at_that_sign() -> None:
    # Looks a second apart (a busy peer): silent from 2.0, a sign at 3.2 seen at the look
    # of 4.0 (already quiet again), then heard at 4.9. Silences credited: 2.0 to the look
    # of 3.0, and 3.2 to the look of 4.0; the 0.2 s up to the sign counts as owed.
    # (Found by `tools.mutate`, seed 803: the two silences were taken for one.)
    looks = [(2.0, 2.0), (3.0, 2.0), (4.0, 3.2), (5.0, 4.9)]
    assert _owed_at_looks(looks) == pytest.approx(4.9 - 1.0 - 0.8)
