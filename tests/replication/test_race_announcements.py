"""When a player is told it lost a race (`RaceLost`): only once the loss is stable, when no
later op can change it or its winner any more (found by `tools.mutate`, seed 502: a loss
announced as soon as it was folded, before it was stable, went unnoticed)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

from nerts_p2p.game.cards import make_card
from nerts_p2p.game.moves import (
    FROM_NERTS,
    FROM_WASTE,
    NEW_FOUNDATION,
    TO_FOUNDATION,
    Move,
    play,
)
from nerts_p2p.table.replica import RaceLost
from nerts_p2p.table.round import FoldStep, ReplicatedRound
from nerts_p2p.table.stability import race_winner
from protocol.messages import Op
from tests.replication.test_races import _owner_of_2h_on, _race_table, _to_foundation


def test_a_lost_race_is_announced_once_it_is_stable_and_not_before() -> None:
    table, base = _race_table(3)
    for seat in range(3):
        player = table.players[seat]
        rnd = player.current_round
        assert rnd is not None
        assert not hasattr(player.play(_to_foundation(rnd.state, seat, "2H", base)), "reason")
    table.collect()  # the three plays cross on the wire
    table.deliver_all()  # every peer has every play, but no heartbeat has said so yet
    winner = _owner_of_2h_on(table.players[0], base)
    for seat in range(3):
        rnd = table.players[seat].current_round
        assert rnd is not None
        assert rnd.log.stable_count() < len(rnd.steps)  # the plays are not stable yet
        assert not [e for e in table.events[seat] if isinstance(e, RaceLost)]
    table.settle(1.0)
    for seat in range(3):
        lost = [e.winner_seat for e in table.events[seat] if isinstance(e, RaceLost)]
        assert lost == ([] if seat == winner else [winner])


def test_a_lost_race_is_not_announced_while_its_op_is_the_first_not_yet_stable() -> None:
    # The winner plays at Lamport time t; the loser turned its stock first, so its play
    # is stamped t + 1; the third seat's last op is stamped t. Every peer has heard every
    # participant up to t and no further: the winner's play is stable, the loser's is the
    # first op that is not. An op stamped t + 1 that sorts before it could still come (and
    # take the race): the loss is not announced yet.
    table, base = _race_table(2)
    plays = {}
    for seat in range(2):
        rnd = table.players[seat].current_round
        assert rnd is not None
        plays[seat] = _to_foundation(rnd.state, seat, "2H", base)
    loser, winner = 1, 0
    assert not hasattr(table.players[loser].play(Move(loser, "turn")), "reason")
    for seat in (winner, loser):
        assert not hasattr(table.players[seat].play(plays[seat]), "reason")
    for _ in range(2):  # the third seat's clock is one behind the racers' (the ace was its)
        assert not hasattr(table.players[2].play(Move(2, "turn")), "reason")
    table.collect()
    table.deliver_all()
    for seat in range(3):
        rnd = table.players[seat].current_round
        assert rnd is not None
        assert _owner_of_2h_on(table.players[seat], base) == winner
        lost_at = next(i for i, s in enumerate(rnd.steps) if s.move == plays[loser])
        assert rnd.log.stable_count() == lost_at  # the first op not yet stable
        assert not [e for e in table.events[seat] if isinstance(e, RaceLost)]
    table.settle(1.0)
    lost = [e.winner_seat for e in table.events[loser] if isinstance(e, RaceLost)]
    assert lost == [winner]


def _won_by(applied: Move, ours: Move) -> int | None:
    """The seat `race_winner` names for our `ours` when `applied` is the folded play."""
    rnd = SimpleNamespace(steps=[FoldStep(cast(Op, None), applied, True, "")])
    return race_winner(cast(ReplicatedRound, rnd), ours)


def test_a_race_for_the_ace_of_spades_names_a_joker_declared_as_it() -> None:
    # The ace of spades is face 0: a joker declared as it says declare=0, which is a
    # declaration all the same (found by tools.mutate, seed 605: `declare >= 0` made `>= 1`).
    spades_ace = play(0, make_card(0, 0), FROM_NERTS, TO_FOUNDATION, NEW_FOUNDATION)
    joker_as_ace = play(1, make_card(1, 52), FROM_WASTE, TO_FOUNDATION, NEW_FOUNDATION, 0)
    assert _won_by(joker_as_ace, spades_ace) == 1  # we lost to the joker
    assert _won_by(spades_ace, joker_as_ace) == 0  # our joker lost to the ace
    hearts_ace = play(1, make_card(1, 13), FROM_NERTS, TO_FOUNDATION, NEW_FOUNDATION)
    assert _won_by(hearts_ace, joker_as_ace) is None  # another foundation: no race
    # Faces next to each other are different races (the two of spades is face 1).
    their_two = play(1, make_card(1, 1), FROM_NERTS, TO_FOUNDATION, 0)
    our_two = play(0, make_card(0, 1), FROM_NERTS, TO_FOUNDATION, 0)
    assert _won_by(their_two, spades_ace) is None
    assert _won_by(joker_as_ace, our_two) is None
