"""Positions and points shared by the window's tests."""

from __future__ import annotations

from client.window.layout import CardPlace, PileRef, TableLayout, card_places, table_layout
from client.window.session import Notice, TableView
from nerts_p2p.game.errors import Rejection, RejectReason
from nerts_p2p.game.moves import Move
from nerts_p2p.game.position import parse_position
from nerts_p2p.game.state import GameState

#: Seat 0: Nerts top 5H (4D under it), work piles TD 9S 8H | 3C | JH | (empty), waste
#: 7C KD AS (AS on top), 32 cards in stock. Seat 1: Nerts top 8C. One foundation: AH 2H
#: of seat 1, so 3H goes on next.
TWO_SEATS = (
    "nerts1 seats=2 play/0/0 AH@1.2H@1 ?10:4D.5H/TD.9S.8H,3C,JH,-/?32/7C.KD.AS/- "
    "?12:8C/5H,-,8S,2D/?34/-/-"
)


def _all_but(used: set[str]) -> list[str]:
    return [r + u for u in "SHDC" for r in "A23456789TJQK" if r + u not in used]


_SEAT0_UP = {"4D", "5H", "TD", "9S", "8H", "3C", "JH", "AS"}
#: The same, with seat 0's stock empty: every other card of seat 0 is on its waste (AS on top).
EMPTY_STOCK = (
    "nerts1 seats=2 play/0/0 AH@1.2H@1 ?10:4D.5H/TD.9S.8H,3C,JH,-/-/"
    + ".".join(_all_but(_SEAT0_UP)[:-10] + ["AS"])
    + "/- ?12:8C/5H,-,8S,2D/?34/-/-"
)


def two_seat_state() -> GameState:
    return parse_position(TWO_SEATS)


def layout_for(
    state: GameState, my_seat: int | None = 0, size: tuple[int, int] = (1280, 800)
) -> TableLayout:
    return table_layout(size[0], size[1], len(state.seats), my_seat, state.rules.work_piles)


def place_of(places: list[CardPlace], pile: PileRef, depth: int) -> CardPlace:
    return next(p for p in places if p.pile == pile and p.depth == depth)


def visible_point(layout: TableLayout, state: GameState, place: CardPlace) -> tuple[float, float]:
    """A point of `place` that no card drawn after it covers."""
    places = card_places(layout, state)
    later = places[places.index(place) + 1 :]
    rect = place.rect
    for fy in (0.5, 0.25, 0.1, 0.03):
        for fx in (0.5, 0.2, 0.08):
            x, y = rect.x + rect.w * fx, rect.y + rect.h * fy
            if not any(p.rect.contains(x, y) for p in later):
                return x, y
    raise AssertionError(f"no visible point on {place}")


class StaticSession:
    """A `TableSession` that shows one fixed view (rendering tests): moves are refused."""

    def __init__(self, view: TableView) -> None:
        self._view = view
        self.problem: str | None = None
        self.left = False
        self.submitted: list[Move] = []
        self.next_rounds = 0

    def view(self) -> TableView:
        return self._view

    def advance(self, now: float) -> None:
        pass

    def notices(self) -> list[Notice]:
        return []

    def submit(self, move: Move) -> Rejection | None:
        self.submitted.append(move)
        return Rejection(RejectReason.NO_SUCH_SEAT, "this table is a picture")

    def next_round(self) -> None:
        self.next_rounds += 1

    def leave(self) -> None:
        self.left = True
