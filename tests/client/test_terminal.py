"""The terminal practice game, driven without a terminal."""

from __future__ import annotations

from client.terminal import PracticeSession, render, resolve_command
from nerts_p2p.game.bots import NOVICE
from nerts_p2p.game.moves import FROM_NERTS, FROM_WASTE, RECYCLE, TO_WORK, TURN, Move
from nerts_p2p.game.position import parse_position
from nerts_p2p.game.rules import Rules

# Seat 0: Nerts top 5H over 11 unknown cards; work piles 6S, KD, 9C and an empty one;
# waste 2C. Seat 1 has started a foundation with its ace of hearts.
POSITION = "nerts1 seats=2 play/0/0 AH@1 ?11:5H/6S,KD,9C,-/?36/2C/- ?12:8C/5D,2H,8S,2D/?34/-/-"


def test_short_commands_become_moves() -> None:
    state = parse_position(POSITION)
    to_work = resolve_command(state, 0, "n 0")
    assert isinstance(to_work, Move)
    assert (to_work.source, to_work.dest_kind, to_work.dest) == (FROM_NERTS, TO_WORK, 0)
    waste_to_hole = resolve_command(state, 0, "d 3")
    assert isinstance(waste_to_hole, Move)
    assert (waste_to_hole.source, waste_to_hole.dest) == (FROM_WASTE, 3)
    assert resolve_command(state, 0, "t") == Move(0, TURN)


def test_impossible_and_garbled_commands_say_why() -> None:
    state = parse_position(POSITION)
    assert resolve_command(state, 0, "n f") == "that move is not possible now"
    assert "not a pile" in str(resolve_command(state, 0, "q 2"))
    assert "not a destination" in str(resolve_command(state, 0, "n zz"))
    assert "not a card" in str(resolve_command(state, 0, "0 ZZ n-w1"))
    assert resolve_command(state, 0, "1 turn") == "you play seat 0"
    assert resolve_command(state, 0, "n 9") == "there is no work pile 9: your work piles are 0 to 3"
    assert resolve_command(state, 0, "7 f") == "there is no work pile 7: your work piles are 0 to 3"


def test_turn_becomes_recycle_once_the_stock_is_empty() -> None:
    session = PracticeSession(Rules(seats=2), NOVICE, seed=3)
    while session.state.seats[0].stock:
        assert session.type_line("t") == ""
    assert resolve_command(session.state, 0, "t") == Move(0, RECYCLE)
    assert session.type_line("t") == ""
    assert session.state.seats[0].waste == ()


def test_typed_moves_change_the_table_and_bots_play_as_time_passes() -> None:
    session = PracticeSession(Rules(seats=2), NOVICE, seed=3)
    before = session.state
    assert session.type_line("t") == ""
    assert len(session.state.seats[0].waste) == 3
    assert session.state.seats[1] == before.seats[1]  # no time has passed for the bot
    session.tick(120.0)
    assert session.state.seats[1] != before.seats[1]
    screen = render(session.state, 0, session.names)
    assert "You (seat 0)" in screen
    assert "seat 1 (novice)" in screen


def test_rejections_are_explained_in_words() -> None:
    session = PracticeSession(Rules(seats=2), NOVICE, seed=3)
    before = session.state
    assert "Nerts only with an empty Nerts pile" in session.type_line("0 nerts")
    assert session.state == before


def test_rotate_and_stuck_at_the_practice_table_follow_the_rules() -> None:
    session = PracticeSession(Rules(seats=2), NOVICE, seed=3)
    session.state = parse_position(POSITION)
    before = session.state
    # Seat 0 can still play (5H onto 6S, 2C into the empty pile): it is not stuck.
    assert "only a stuck seat may move its top stock card" in session.type_line("rotate")
    assert "you are not stuck" in session.type_line("stuck")
    assert session.state == before
    stuck_able = parse_position(
        "nerts1 seats=2 play/0/0 - ?12:KS/5D,9C,QH,QD.JS/?34/-/- ?12:KH/5S,9D,QC,JD/?35/-/-"
    )
    session.state = stuck_able
    assert session.type_line("stuck") == ""
    assert session.type_line("rotate") == ""
    assert session.state.seats[0].stuck
