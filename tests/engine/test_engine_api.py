"""What the engine's functions besides `apply` promise their callers (the replicated table,
the audit, the shells): `play` raises on what `apply` refuses and counts a move in the air
only when told so, `declare_gone` leaves an ended round as it is, `reveals_needed` and
`complete` answer a move that turns nothing or already names its card. Found by
`tools.mutate` (exhaustive run of engine.py)."""

from __future__ import annotations

import pytest

from nerts_p2p.game.engine import complete, declare_gone, play, reveals_needed
from nerts_p2p.game.errors import IllegalMoveError, RejectReason
from nerts_p2p.game.moves import parse_move
from nerts_p2p.game.position import position_text
from nerts_p2p.game.state import ENDED_NERTS, GameState

from .helpers import after, position, seat, work_text

R = RejectReason


def called_round() -> GameState:
    """Seat 0 has called Nerts; seat 1 had its 4C still to move."""
    return after(position(seat("-:-", work="5D,-,-,-"), seat(work="4C,-,-,-")), "0 nerts")


def test_play_raises_for_a_move_the_rules_refuse_with_the_reason_attached() -> None:
    with pytest.raises(IllegalMoveError) as info:
        play(called_round(), parse_move("1 4C w0-w1"))
    assert info.value.reason == R.ROUND_OVER
    assert str(info.value) == "the round is over"


def test_play_counts_a_card_move_after_the_call_only_when_told_it_was_in_the_air() -> None:
    # By default a move after the call is late; the replication layer says when its author
    # had not seen the call (DESIGN.md section 3).
    move = parse_move("1 4C w0-w1")
    with pytest.raises(IllegalMoveError):
        play(called_round(), move)
    assert work_text(play(called_round(), move, in_the_air=True), 1) == "-,4C,-,-"


def test_a_seat_that_leaves_after_the_round_ended_changes_nothing() -> None:
    # PROTOCOL.md 13: leaving freezes a seat as stuck so the others can end the round; once
    # the round is over there is nothing to end, and the final position (which every peer
    # hashes) must stay as it was.
    called = called_round()
    for seat_no in (0, 1):
        gone = declare_gone(called, seat_no)
        assert position_text(gone) == position_text(called)
        assert (gone.ended_by, gone.called_by) == (ENDED_NERTS, 0)


@pytest.mark.parametrize("move", ["0 5D w0-w1", "0 5D w0-f", "1 recycle", "0 nerts"])
def test_a_move_that_turns_no_card_face_up_needs_no_reveals(move: str) -> None:
    # An empty tuple, which callers (the audit) iterate, not None.
    state = position(seat("-:-", work="5D,-,-,-"), seat("*:KS", stock="-", waste="7C"))
    assert reveals_needed(state, parse_move(move)) == ()


def test_completing_a_move_that_already_names_its_card_keeps_the_name() -> None:
    # A view that cannot know seat 0's next Nerts card (a public one, relaying the author's
    # move) completes nothing: the move's own claim stands, for `apply` to judge.
    state = position(seat("?11:7C", work="8H,-,-,-"), seat())
    named = parse_move("0 7C n-w0 +9D")
    assert complete(state, named) == named
