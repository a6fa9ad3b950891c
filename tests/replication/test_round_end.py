"""How a replicated round ends: cards in the air, all stuck, reveals and the audit."""

from __future__ import annotations

from collections.abc import Hashable

import pytest

from nerts_p2p.game.moves import FROM_NERTS, NEW_FOUNDATION, Move
from nerts_p2p.game.position import state_hash
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import RoundEnded, RoundFinal, TableReplica
from protocol.errors import LocalProtocolError
from protocol.messages import Heartbeat, Kind, decode
from tests.replication.table_helpers import (
    ManualTable,
    call_nerts,
    one_card_nerts_table,
    rounds_after,
    seed_showing,
)


def _finals(table: ManualTable) -> list[RoundFinal]:
    out = []
    for events in table.events:
        finals = [e for e in events if isinstance(e, RoundFinal)]
        assert len(finals) == 1, "every peer finishes the round exactly once"
        out.append(finals[0])
    return out


def test_a_move_in_the_air_counts_and_a_move_after_seeing_the_call_does_not() -> None:
    table = one_card_nerts_table(settle=0)  # seat 0 plays its ace and calls at once
    caller, other = table.players
    rnd = caller.current_round
    assert rnd is not None
    ace = rnd.state.seats[0].nerts_up[-1]
    caller.play(Move(0, "play", ace, FROM_NERTS, "f", NEW_FOUNDATION))
    caller.play(Move(0, "nerts"))
    # The other seat turns its stock before the call reaches it, stamped after the call.
    for _ in range(5):
        other.sync.clock.tick()
    other.play(Move(1, "turn"))
    # Hold back its REVEAL for a moment (it would reveal as soon as the end is stable).
    secret = other.my_secrets.pop(1)
    table.collect()
    table.deliver_all()
    # Now it has seen the call; a peer that moves anyway (a modified client) does not count.
    late = other.sync.author(Kind.MOVE, 1, "turn")
    other.my_secrets[1] = secret
    table.collect()
    table.deliver_all()
    table.settle(2.0)
    # After its own REVEAL, a MOVE is refused outright (its author has ended its round).
    with pytest.raises(LocalProtocolError, match="after its author's REVEAL"):
        other.sync.author(Kind.MOVE, 1, "turn")
    for player in table.players:
        r = player.current_round
        assert r is not None
        assert r.state.ended_by == "nerts"
        assert r.state.called_by == 0
        assert len(r.state.seats[1].waste) == 3, "the move in the air counted"
        late_step = next(s for s in r.steps if s.op is not None and s.op.hash == late.hash)
        assert not late_step.applied
        assert late_step.reason == "the round was over when this was played"
        # The audit replays the turn in the air, and not the one played after the call
        # (seed 901: with the late move's flag left at False, the audit replayed it too).
        replayed = [
            (i[0].action, i[1])
            for i in r.moves_in_fold_order()
            if isinstance(i, tuple) and i[0].seat == 1
        ]
        assert replayed == [("turn", True)]
    finals = _finals(table)
    assert {f.scores for f in finals} == {finals[0].scores}
    assert not finals[0].cheaters
    assert finals[0].scores[0].score == 1  # its ace on a foundation, nothing left in Nerts


def test_all_stuck_twice_ends_the_round_as_stalemate_on_every_peer() -> None:
    rules = Rules(seats=2)
    seeds = [seed_showing(rules, [], label=f"s{i}", stuck=True) for i in range(2)]
    table = ManualTable(rules, seeds)
    table.start_round()
    for seat in (0, 1):
        table.players[seat].play(Move(seat, "turn"))
    table.collect()
    table.deliver_all()
    for seat in (0, 1):
        table.players[seat].play(Move(seat, "stuck"))
        table.collect()
        table.deliver_all()
    first = table.players[0].current_round
    assert first is not None
    assert first.state.rotations == 1
    assert first.state.ended_by is None
    assert first.state.seats[0].waste == ()  # waste went back under the stock
    for seat in (0, 1):
        table.players[seat].play(Move(seat, "stuck"))
        table.collect()
        table.deliver_all()
    table.settle(2.0)
    ended = [e for events in table.events for e in events if isinstance(e, RoundEnded)]
    assert {(e.ended_by, e.called_by) for e in ended} == {("stalemate", None)}
    finals = _finals(table)
    assert len({f.totals for f in finals}) == 1
    # Nothing reached a foundation: each seat loses two points per Nerts card.
    assert [s.score for s in finals[0].scores] == [-26, -26]
    assert finals[0].totals == (-26, -26)  # after the first round the match totals are its scores
    hashes = {state_hash(p.current_round.state) for p in table.players if p.current_round}
    assert len(hashes) == 1


def test_a_spectator_folds_the_round_and_reaches_the_same_result() -> None:
    rules = Rules(seats=2, nerts_size=1)
    seeds = [
        seed_showing(rules, [], nerts_top="AD", label="c2"),
        seed_showing(rules, [], label="o2"),
    ]
    table = ManualTable(rules, seeds, spectators=1)
    table.start_round()
    caller = table.players[0]
    rnd = caller.current_round
    assert rnd is not None
    caller.play(Move(0, "play", rnd.state.seats[0].nerts_up[-1], FROM_NERTS, "f", NEW_FOUNDATION))
    caller.play(Move(0, "nerts"))
    table.collect()
    table.deliver_all()
    table.settle(2.0)
    finals = _finals(table)
    assert finals[2] == finals[0]
    spectator = table.players[2]
    assert spectator.seat is None
    assert spectator.play(Move(0, "turn")).reason.value == "no_such_seat"  # type: ignore[union-attr]


def test_a_round_is_final_the_moment_every_reveal_is_in_the_stable_prefix() -> None:
    # PROTOCOL.md 7: an op is stable exactly when its Lamport time is within the round's
    # stable bound, a REVEAL at the bound too. Checked after every receive and tick of
    # every peer while the round ends and is revealed. (Seed 1201, `reveals_stable`:
    # with `<=` made `<`, a REVEAL stamped at the bound held the result back a heartbeat.)
    table = one_card_nerts_table("final-at-bound")
    late: list[str] = []

    def watch(replica: TableReplica) -> None:
        receive, tick = replica.receive, replica.tick

        def check(where: str) -> None:
            rnd = replica.rounds[1]
            if rnd.final is not None or not rnd.end_is_stable():
                return
            stable = rnd.log.stable_count()
            players = [a for a in rnd.seat_of if rnd.log.counts_author(a)]
            placed = [rnd.log.ops.index(rnd.reveals[a]) for a in players if a in rnd.reveals]
            if len(placed) == len(players) and all(at < stable for at in placed):
                late.append(f"{replica.name} after a {where}")

        def checked_receive(datagram: bytes, source: Hashable, now: float) -> None:
            receive(datagram, source, now)
            check("receive")

        def checked_tick(now: float) -> None:
            tick(now)
            check("tick")

        replica.receive = checked_receive  # type: ignore[method-assign]
        replica.tick = checked_tick  # type: ignore[method-assign]

    for replica in table.players:
        watch(replica)
    call_nerts(table, settle=3.0)
    assert all(replica.rounds[1].final is not None for replica in table.players)
    assert late == [], "every reveal was stable, and the round not final"


def test_the_round_ends_for_its_caller_only_once_the_call_itself_is_stable() -> None:
    # Every op up to the caller's ace is stable, its Nerts call is not (the other's last
    # promise is older): the end is not stable yet, so the caller keeps its deal secret.
    # The other's next heartbeat, past the call, makes it stable: the caller reveals.
    # (Seed 16: `<` made `<=` took the end as stable one op early.)
    table = one_card_nerts_table("end-edge")
    caller, other = table.players
    now = table.now
    rnd = caller.current_round
    assert rnd is not None
    ace = rnd.state.seats[0].nerts_up[-1]
    caller.play(Move(0, "play", ace, FROM_NERTS, "f", NEW_FOUNDATION))
    for _, datagram in caller.outgoing():
        other.receive(datagram, 0, now)

    def others_heartbeat(at: float) -> None:
        other.tick(at)
        for _, datagram in other.outgoing():
            if isinstance(decode(datagram, table=caller.sync.table), Heartbeat):
                caller.receive(datagram, 1, at)

    others_heartbeat(now + 0.1)
    for step in range(1, 6):  # the caller's clock runs on past the other's promise
        caller.tick(now + 0.1 + step * 0.1)
        caller.outgoing()
    now += 0.7
    caller.play(Move(0, "nerts"))
    caller.tick(now)
    caller.outgoing()
    assert rnd.end_position == rnd.log.stable_count()  # all but the call are stable
    assert not rnd.end_is_stable()
    assert not [op for op in caller.sync.logs[caller.me] if op.kind == Kind.REVEAL]
    call = caller.sync.logs[caller.me][-1]
    assert call.kind == Kind.MOVE
    other.receive(call.datagram(), 0, now)  # the other sees the call, then promises past it
    others_heartbeat(now + 0.1)
    caller.tick(now + 0.1)
    assert rnd.end_is_stable()
    assert [op.kind for op in caller.sync.logs[caller.me]][-1] == Kind.REVEAL


def test_a_move_whose_deps_name_the_call_itself_was_made_after_seeing_it() -> None:
    # The call is its author's latest op when it reaches the other seat, which then moves
    # anyway (a modified client): the move's deps name the call's own seq, no more. It had
    # seen the call, so it does not count anywhere. (Found by `tools.mutate`, seed 18:
    # with `>=` made `>` only a move naming an op after the call counted as having seen
    # it, and this one was taken as in the air.)
    table = one_card_nerts_table(settle=0)
    caller, other = table.players
    rnd = caller.current_round
    assert rnd is not None
    call = call_nerts(table, settle=None)
    table.deliver_all()
    assert caller.sync.logs[caller.me][-1] == call
    late = other.sync.author(Kind.MOVE, 1, "turn")
    assert dict(zip(rnd.log.participants, late.round_deps, strict=True))[caller.me] == call.seq
    for r in rounds_after(table, 2.0):
        assert r.state.ended_by == "nerts"
        late_step = next(s for s in r.steps if s.op is not None and s.op.hash == late.hash)
        assert not late_step.applied
        assert late_step.reason == "the round was over when this was played"
        assert len(r.state.seats[1].waste) == 0
