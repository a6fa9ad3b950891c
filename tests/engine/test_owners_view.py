"""A seat's owner (and the simulator) knows its face-down cards: turning the stock in that
view, with a move that names no cards, turns up exactly the cards it knows (there is no
claim to check). Found by `tools.mutate`."""

from __future__ import annotations

from nerts_p2p.game.engine import apply
from nerts_p2p.game.moves import parse_move
from nerts_p2p.game.state import GameState
from tests.engine.helpers import knowing, position, seat, seat_text


def _waste(state: GameState, seat_no: int) -> str:
    return seat_text(state, seat_no).split("/")[3]


def test_turning_the_stock_in_the_owners_view_turns_up_the_cards_it_knows() -> None:
    for seat_no, known in ((0, "2H,7C,9D"), (1, "AS,QD,3C")):
        state = knowing(position(seat(), seat()), seat_no, stock=known)
        move = parse_move(f"{seat_no} turn")
        assert not move.reveals  # nothing claimed: the view's own knowledge decides
        turned = apply(state, move)
        assert isinstance(turned, GameState), turned
        assert _waste(turned, seat_no) == known.replace(",", ".")  # bottom to top
        assert _waste(turned, 1 - seat_no) == "-"
