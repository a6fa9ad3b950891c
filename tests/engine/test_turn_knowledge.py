"""What a turn of the stock may name, and who can name it (found by `tools.mutate`, seed 503):
a card that went round the waste is public, whichever card it is (the ace of spades of seat
0 is card 0, the one value a `> 0` test for "public" would miss); and a view that does not
know a seat's face-down cards cannot complete that seat's turn for it."""

from __future__ import annotations

import pytest

from nerts_p2p.game.engine import apply, complete
from nerts_p2p.game.errors import NertsError
from nerts_p2p.game.moves import parse_move
from nerts_p2p.game.state import GameState
from tests.engine.helpers import knowing, position, seat, seat_text


def _waste(state: GameState, seat_no: int) -> str:
    return seat_text(state, seat_no).split("/")[3]


@pytest.mark.parametrize("seat_no", [0, 1])
def test_the_ace_of_spades_turned_up_again_after_a_recycle_is_accepted(seat_no: int) -> None:
    three = seat("*:KS", stock="?3")  # a stock of three cards, the rest in the Nerts pile
    fields = [three, seat()] if seat_no == 0 else [seat(), three]
    state = knowing(position(*fields), seat_no, stock="AS,QD,3C")
    seen = ""
    for text in ("turn", "recycle"):
        moved = apply(state, parse_move(f"{seat_no} {text}"))
        assert isinstance(moved, GameState), moved
        state = moved
        seen = seen or _waste(state, seat_no)
    assert "AS" in seen
    # Everyone saw these three on the waste: the turn names them, and no view may say no.
    again = complete(state, parse_move(f"{seat_no} turn"))
    turned = apply(state, again)
    assert isinstance(turned, GameState), turned
    # The same three cards (the rules may rotate the stock by one on a recycle).
    assert sorted(_waste(turned, seat_no).split(".")) == sorted(seen.split("."))


def test_a_view_that_does_not_know_a_seats_stock_cannot_complete_its_turn() -> None:
    state = knowing(position(seat(), seat()), 0, stock="2H,7C,9D")
    assert complete(state, parse_move("0 turn")).reveals  # the owner's view can
    with pytest.raises(NertsError, match="cannot know the card"):
        complete(state, parse_move("1 turn"))
