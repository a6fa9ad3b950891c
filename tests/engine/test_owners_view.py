"""A seat's owner (and the simulator) knows its face-down cards: turning the stock in that
view turns up exactly the cards it knows, with no claim to check (found by `tools.mutate`)."""

from __future__ import annotations

from tests.engine.helpers import after, knowing, position, seat, seat_text


def _waste(text: str) -> str:
    return text.split("/")[3]


def test_turning_the_stock_in_the_owners_view_turns_up_the_cards_it_knows() -> None:
    for seat_no, known in ((0, "2H,7C,9D"), (1, "AS,QD,3C")):
        state = knowing(position(seat(), seat()), seat_no, stock=known)
        turned = after(state, f"{seat_no} turn")
        assert _waste(seat_text(turned, seat_no)) == known.replace(",", ".")  # bottom to top
        assert _waste(seat_text(turned, 1 - seat_no)) == "-"
