"""Input to intent, without a window: pointer and key events over a layout and a state."""

from __future__ import annotations

from client.window.intents import (
    Hint,
    InputController,
    Intent,
    KeyPress,
    PointerDown,
    PointerMove,
    PointerUp,
    PressButton,
    SubmitMove,
)
from client.window.layout import NERTS, STOCK, WASTE, WORK, PileRef, card_places
from nerts_p2p.game.cards import make_card, parse_face
from nerts_p2p.game.engine import apply
from nerts_p2p.game.errors import Rejection
from nerts_p2p.game.moves import (
    FROM_NERTS,
    FROM_WASTE,
    NEW_FOUNDATION,
    PLAY,
    RECYCLE,
    STUCK,
    TO_FOUNDATION,
    TO_NERTS,
    TO_UNDER,
    TO_WORK,
    TURN,
    Move,
)
from nerts_p2p.game.moves import (
    NERTS as CALL,
)
from nerts_p2p.game.position import parse_position
from nerts_p2p.game.state import GameState

from .window_helpers import EMPTY_STOCK, layout_for, place_of, two_seat_state, visible_point


def card(text: str, owner: int = 0) -> int:
    return make_card(owner, parse_face(text))


class Table:
    """A controller over the two-seat position, seat 0 playing."""

    def __init__(self, state: GameState | None = None, seat: int | None = 0) -> None:
        self.state = state or two_seat_state()
        self.seat = seat
        self.layout = layout_for(self.state, seat)
        self.places = card_places(self.layout, self.state)
        self.controller = InputController()

    def send(self, *events: object) -> list[Intent]:
        out: list[Intent] = []
        for event in events:
            out += self.controller.handle(
                event,  # type: ignore[arg-type]
                self.layout,
                self.state,
                self.seat,
                self.places,
            )
        return out

    def point(self, pile: PileRef, depth: int) -> tuple[float, float]:
        return visible_point(self.layout, self.state, place_of(self.places, pile, depth))

    def empty(self, pile: PileRef) -> tuple[float, float]:
        sl = self.layout.seats[pile.seat]
        region = sl.work[pile.number] if pile.kind == WORK else sl.nerts
        return region.x + region.w / 2, region.y + 10

    def drag(self, start: tuple[float, float], end: tuple[float, float]) -> list[Intent]:
        mid = ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2)
        return self.send(PointerDown(*start), PointerMove(*mid), PointerMove(*end), PointerUp(*end))

    def drop_on(self, start: tuple[float, float], target: tuple[float, float]) -> list[Intent]:
        """Drag so that the card's centre lands on `target` (drops aim with the card)."""
        grab_place = next(p for p in reversed(self.places) if p.rect.contains(*start))
        dx = start[0] - (grab_place.rect.x + grab_place.rect.w / 2)
        dy = start[1] - (grab_place.rect.y + grab_place.rect.h / 2)
        return self.drag(start, (target[0] + dx, target[1] + dy))


def moves(intents: list[Intent]) -> list[Move]:
    return [i.move for i in intents if isinstance(i, SubmitMove)]


def test_drag_the_nerts_top_to_an_empty_work_pile() -> None:
    t = Table()
    intents = t.drop_on(t.point(PileRef(0, NERTS), 11), t.empty(PileRef(0, WORK, 3)))
    assert moves(intents) == [Move(0, PLAY, card("5H"), FROM_NERTS, TO_WORK, 3)]
    submitted = intents[0]
    assert isinstance(submitted, SubmitMove)
    assert submitted.dropped_at is not None


def test_drag_a_run_of_a_work_pile_names_its_bottom_card() -> None:
    t = Table()
    intents = t.drop_on(t.point(PileRef(0, WORK, 0), 1), t.point(PileRef(0, WORK, 2), 0))
    # 9S with 8H on it, onto JH: the intent names the move; the engine says it does not fit.
    (move,) = moves(intents)
    assert move == Move(0, PLAY, card("9S"), 0, TO_WORK, 2)
    rejection = apply(t.state, move)
    assert isinstance(rejection, Rejection)
    assert "9 of spades" in rejection.message


def test_a_drop_on_nothing_or_on_its_own_pile_sends_nothing() -> None:
    t = Table()
    start = t.point(PileRef(0, WORK, 1), 0)
    assert t.drag(start, (start[0] + 3, t.layout.status.y - 40)) == []
    assert t.drag(start, (start[0] + 20, start[1] + 5)) == []
    assert t.controller.drag is None
    assert t.controller.selection is None


def test_drop_on_a_foundation_names_that_foundation() -> None:
    t = Table()
    slot = t.layout.foundation_slots[0]
    intents = t.drop_on(t.point(PileRef(0, WORK, 0), 2), slot.center)
    base = card("AH", owner=1)
    assert moves(intents) == [Move(0, PLAY, card("8H"), 0, TO_FOUNDATION, base)]
    empty_slot = t.layout.foundation_slots[3]
    intents = t.drop_on(t.point(PileRef(0, WASTE), 2), empty_slot.center)
    assert moves(intents) == [Move(0, PLAY, card("AS"), FROM_WASTE, TO_FOUNDATION, NEW_FOUNDATION)]


def test_drop_on_another_seats_nerts_pile_builds_on_it() -> None:
    t = Table()
    target = t.point(PileRef(1, NERTS), 12)
    intents = t.drop_on(t.point(PileRef(0, NERTS), 11), target)
    assert moves(intents) == [Move(0, PLAY, card("5H"), FROM_NERTS, TO_NERTS, 1)]


def test_drop_where_the_button_is_released_without_a_last_motion_event() -> None:
    """Regression: the drop target was taken from the last motion event, not the release."""
    t = Table()
    start = t.point(PileRef(0, NERTS), 11)
    target = t.empty(PileRef(0, WORK, 3))
    intents = t.send(
        PointerDown(*start), PointerMove(start[0] + 30, start[1] - 30), PointerUp(*target)
    )
    assert moves(intents) == [Move(0, PLAY, card("5H"), FROM_NERTS, TO_WORK, 3)]


def test_two_click_move() -> None:
    t = Table()
    source = t.point(PileRef(0, NERTS), 11)
    assert t.send(PointerDown(*source), PointerUp(*source)) == []
    assert t.controller.selection is not None
    target = t.empty(PileRef(0, WORK, 3))
    intents = t.send(PointerDown(*target), PointerUp(*target))
    assert moves(intents) == [Move(0, PLAY, card("5H"), FROM_NERTS, TO_WORK, 3)]
    assert t.controller.selection is None


def test_clicking_the_selected_card_again_unselects_it() -> None:
    t = Table()
    source = t.point(PileRef(0, WASTE), 2)
    t.send(PointerDown(*source), PointerUp(*source))
    t.send(PointerDown(*source), PointerUp(*source))
    assert t.controller.selection is None


def test_double_click_and_right_click_send_a_card_to_a_foundation() -> None:
    t = Table()
    ace = t.point(PileRef(0, WASTE), 2)
    intents = t.send(PointerDown(*ace, 1, True), PointerUp(*ace))
    assert moves(intents) == [Move(0, PLAY, card("AS"), FROM_WASTE, TO_FOUNDATION, NEW_FOUNDATION)]
    # A card deep in a work pile: only the exposed card of that pile can go up.
    deep = t.point(PileRef(0, WORK, 0), 0)
    intents = t.send(PointerDown(*deep, 3), PointerUp(*deep, 3))
    (move,) = moves(intents)
    assert move.card == card("8H")
    assert move.dest_kind == TO_FOUNDATION


def test_a_foundation_that_fits_is_preferred_to_a_new_one() -> None:
    state = parse_position(
        "nerts1 seats=2 play/0/0 AH@1.2H@1 ?10:4D.3H/TD.9S.8H,3C,JH,-/?32/7C.KD.AS/- "
        "?12:8C/5H,-,8S,2D/?34/-/-"
    )
    t = Table(state)
    top = t.point(PileRef(0, NERTS), 11)
    intents = t.send(PointerDown(*top, 3))
    assert moves(intents) == [Move(0, PLAY, card("3H"), FROM_NERTS, TO_FOUNDATION, card("AH", 1))]


def test_clicking_the_stock_turns_it_or_turns_the_waste_over() -> None:
    t = Table()
    stock = t.point(PileRef(0, STOCK), 0)
    assert moves(t.send(PointerDown(*stock), PointerUp(*stock))) == [Move(0, TURN)]
    empty = Table(parse_position(EMPTY_STOCK))
    sl = empty.layout.seats[0]
    assert moves(empty.send(PointerDown(*sl.stock.center))) == [Move(0, RECYCLE)]


def test_buttons() -> None:
    t = Table()
    b = t.layout.buttons
    assert moves(t.send(PointerDown(*b["nerts"].center))) == [Move(0, CALL)]
    assert moves(t.send(PointerDown(*b["stuck"].center))) == [Move(0, STUCK)]
    assert t.send(PointerDown(*b["help"].center)) == [PressButton("help")]
    assert t.send(PointerDown(*b["leave"].center)) == [PressButton("leave")]


def test_full_keyboard_play() -> None:
    t = Table()
    assert moves(t.send(KeyPress("space"))) == [Move(0, TURN)]
    assert moves(t.send(KeyPress("n"), KeyPress("4"))) == [
        Move(0, PLAY, card("5H"), FROM_NERTS, TO_WORK, 3)
    ]
    # Pile 1 (TD 9S 8H): Up takes one card more each time, then onto pile 4.
    assert moves(t.send(KeyPress("1"), KeyPress("up"), KeyPress("up"), KeyPress("4"))) == [
        Move(0, PLAY, card("TD"), 0, TO_WORK, 3)
    ]
    assert moves(t.send(KeyPress("1"), KeyPress("up"), KeyPress("down"), KeyPress("2"))) == [
        Move(0, PLAY, card("8H"), 0, TO_WORK, 1)
    ]
    assert moves(t.send(KeyPress("d"), KeyPress("f"))) == [
        Move(0, PLAY, card("AS"), FROM_WASTE, TO_FOUNDATION, NEW_FOUNDATION)
    ]
    assert moves(t.send(KeyPress("n"), KeyPress("u"), KeyPress("2"))) == [
        Move(0, PLAY, card("5H"), FROM_NERTS, TO_UNDER, 1)
    ]
    assert moves(t.send(KeyPress("s"))) == [Move(0, STUCK)]
    assert moves(t.send(KeyPress("c"))) == [Move(0, CALL)]
    assert t.send(KeyPress("h")) == [PressButton("help")]


def test_keys_that_name_nothing_say_why() -> None:
    t = Table()
    (hint,) = t.send(KeyPress("4"))
    assert isinstance(hint, Hint)
    assert "work pile 4 is empty" in hint.text
    (hint,) = t.send(KeyPress("f"))
    assert isinstance(hint, Hint)
    assert "select a card first" in hint.text
    (hint,) = t.send(KeyPress("6"))
    assert isinstance(hint, Hint)
    assert "1 to 4" in hint.text
    t.send(KeyPress("n"))
    assert t.send(KeyPress("escape")) == []
    assert t.controller.selection is None
    assert t.send(KeyPress("escape")) == [PressButton("escape")]


def test_a_spectator_moves_nothing() -> None:
    t = Table(seat=None)
    places = t.places
    for place in places[:10]:
        x, y = visible_point(t.layout, t.state, place)
        assert moves(t.send(PointerDown(x, y), PointerMove(x + 40, y), PointerUp(x + 40, y))) == []
    assert moves(t.send(KeyPress("space"), KeyPress("n"), KeyPress("1"), KeyPress("c"))) == []
    assert t.send(KeyPress("h")) == [PressButton("help")]


def test_another_seats_cards_cannot_be_picked_up() -> None:
    t = Table()
    theirs = t.point(PileRef(1, WORK, 0), 0)
    assert moves(t.drag(theirs, t.empty(PileRef(0, WORK, 3)))) == []
    assert t.controller.selection is None
