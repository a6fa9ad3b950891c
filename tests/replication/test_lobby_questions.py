"""The questions a shell asks the core between rounds (`nerts_p2p/table/status.py`): who is
present, whether the starter may start now, which round the lobby prepares, who left. The
window used to answer them itself (issue 8: the window never decides a rule)."""

from __future__ import annotations

from nerts_p2p.game.errors import Rejection
from nerts_p2p.game.moves import TURN, Move
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.status import (
    everyone_else_left,
    everyone_ready_to_start,
    has_left,
    lobby_round,
    may_start_full_table,
    moves_open,
    others_ready,
    players_to_start,
    present_players,
)
from protocol.sync import BROADCAST

from .table_helpers import ManualTable, fixed_randomness


def three_at_a_table_of_four() -> ManualTable:
    seeds = [fixed_randomness(bytes(32), f"s{i}")(32) for i in range(3)]
    return ManualTable(Rules(seats=4), seeds)


def test_a_round_needs_two_players_and_four_with_partnerships() -> None:
    assert players_to_start(Rules(seats=3)) == 2
    assert players_to_start(Rules(seats=2, partnerships=True)) == 4


def test_the_starter_may_start_once_every_player_present_is_ready() -> None:
    table = three_at_a_table_of_four()
    host, p1, p2 = table.players
    assert [name for _, name in present_players(host)] == ["p0", "p1", "p2"]
    assert not others_ready(host)
    assert not everyone_ready_to_start(host)
    p1.ready()
    table.collect()
    table.deliver_all()
    assert not others_ready(host), "p2 is not ready yet"
    p2.ready()
    table.collect()
    table.deliver_all()
    assert others_ready(host), "the host's Start can be pressed: its READY comes with it"
    assert not everyone_ready_to_start(host), "the host itself has not said ready"
    assert not others_ready(p1), "only the starter starts"
    host.ready()
    table.collect()
    table.deliver_all()
    assert everyone_ready_to_start(host)
    assert not everyone_ready_to_start(p1), "p1 is not the round's starter"
    assert not may_start_full_table(host), "three of four seats: a practice table waits"


def test_the_lobby_prepares_the_round_after_the_one_being_played() -> None:
    table = three_at_a_table_of_four()
    host = table.players[0]
    assert lobby_round(host) == 1
    table.start_round()
    assert host.current_round is not None
    assert lobby_round(host) == 2, "a READY for round 2 may come while round 1 is played"
    assert not everyone_ready_to_start(host), "round 1 is not final"
    assert not may_start_full_table(host), "round 1 is not final"
    for player in table.players[1:]:
        player.ready()  # for round 2, while round 1 is played
    table.collect()
    table.deliver_all()
    assert len(host.ready_players(2)) == 2
    assert not others_ready(host), "the others are ready for round 2, but round 1 is not final"


def test_who_left_is_the_cores_answer() -> None:
    table = three_at_a_table_of_four()
    host, p1, p2 = table.players
    assert not has_left(host, p1.me)
    assert not everyone_else_left(host)
    p1.leave()
    table.collect()
    table.deliver_all()
    assert has_left(host, p1.me)
    assert has_left(p1)
    assert [name for _, name in present_players(host)] == ["p0", "p2"]
    assert not everyone_else_left(host)
    p2.leave()
    table.collect()
    table.deliver_all()
    assert everyone_else_left(host)


def test_moves_open_once_every_players_mix_nonce_is_here() -> None:
    table = three_at_a_table_of_four()
    host, p1, _ = table.players
    table.ready_all()
    host.start()
    for destination, datagram in host.outgoing():  # the START reaches p1 alone
        if destination in (BROADCAST, 1):
            p1.receive(datagram, 0, table.now)
    rnd = p1.current_round
    assert rnd is not None
    assert p1.seat is not None
    assert not moves_open(rnd), "p2's mix nonce has not arrived"
    refused = p1.play(Move(p1.seat, TURN))
    assert isinstance(refused, Rejection), "play refuses exactly while moves are not open"
    table.collect()
    table.deliver_all()
    table.settle()
    assert p1.current_round is rnd
    assert moves_open(rnd)
    assert not isinstance(p1.play(Move(p1.seat, TURN)), Rejection)
