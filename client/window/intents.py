"""Input to intent: mouse and keys become moves, without a window and without rules.

`InputController` turns abstract input (`PointerDown`, `PointerMove`, `PointerUp`,
`KeyPress`) over a `TableLayout` and a state into intents: a `Move` to submit, a button
pressed, or a hint for the player. It only names what the player pointed at (card, source,
destination) in the engine's notation; whether the move is legal is the engine's answer,
which the window shows. Where the player did not say which foundation (a double click,
a right click, the F key, a drop in the open centre), the engine's own list of foundation
moves for that card picks one.

Keys (also on the help screen):
    Space / T   turn the stock (turns the waste over when the stock is empty)
    N  D        select the Nerts top / the waste top
    1..6        select work pile K (its exposed card), or with a card selected: move it there
    Up / Down   with a work pile selected: take one card more / fewer of its run
    F / Enter   the selected card to a foundation it fits
    U then 1..6 slide the selected card under work pile K
    S  stuck    C  call Nerts    Esc  clear the selection    H / F1  help    Q  leave
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from nerts_p2p.game.cards import CARD_MASK
from nerts_p2p.game.legal import foundation_moves
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
    NERTS as CALL_NERTS,
)
from nerts_p2p.game.state import GameState

from .layout import (
    BUTTON,
    CENTRE,
    FOUNDATION,
    NERTS,
    STOCK,
    WASTE,
    WORK,
    CardPlace,
    PileRef,
    TableLayout,
    foundation_order,
    hit,
)

DRAG_THRESHOLD = 5.0  # pixels a press must travel to become a drag


class PointerDown(NamedTuple):
    x: float
    y: float
    button: int = 1  # 1 left, 3 right
    double: bool = False


class PointerMove(NamedTuple):
    x: float
    y: float


class PointerUp(NamedTuple):
    x: float
    y: float
    button: int = 1


class KeyPress(NamedTuple):
    key: str  # a pygame key name: "space", "n", "1", "up", "return", "escape", "f1", ...


InputEvent = PointerDown | PointerMove | PointerUp | KeyPress


class SubmitMove(NamedTuple):
    move: Move
    #: Where the card was dropped (a drag), so a rejected card can snap back from there.
    dropped_at: tuple[float, float] | None = None


class PressButton(NamedTuple):
    name: str  # "help", "leave"


class Hint(NamedTuple):
    text: str  # a word for the player when the input named nothing playable


Intent = SubmitMove | PressButton | Hint


class Selection(NamedTuple):
    pile: PileRef
    depth: int  # the card of the pile (a work pile: the bottom card of the run taken)


@dataclass
class Drag:
    selection: Selection
    start: tuple[float, float]
    grab: tuple[float, float]  # pointer minus the card's top-left corner
    at: tuple[float, float]
    moving: bool = False

    @property
    def card_origin(self) -> tuple[float, float]:
        return self.at[0] - self.grab[0], self.at[1] - self.grab[1]


def source_of(pile: PileRef) -> int | None:
    """The engine's source number of one of our piles (None: not a source)."""
    if pile.kind == NERTS:
        return FROM_NERTS
    if pile.kind == WASTE:
        return FROM_WASTE
    if pile.kind == WORK:
        return pile.number
    return None


def selectable(state: GameState, seat: int, pile: PileRef, depth: int | None) -> Selection | None:
    """The selection a press on (pile, depth) makes, if it is one of our movable cards."""
    if pile.seat != seat:
        return None
    s = state.seats[seat]
    if pile.kind == NERTS and s.nerts_up:
        return Selection(pile, s.nerts_count - 1)
    if pile.kind == WASTE and s.waste:
        return Selection(pile, len(s.waste) - 1)
    if pile.kind == WORK and pile.number < len(s.work) and s.work[pile.number]:
        cards = s.work[pile.number]
        at = len(cards) - 1 if depth is None else min(depth, len(cards) - 1)
        return Selection(pile, at)
    return None


def selected_entry(state: GameState, seat: int, selection: Selection) -> int | None:
    s = state.seats[seat]
    pile = selection.pile
    if pile.kind == NERTS:
        return s.nerts_top
    if pile.kind == WASTE:
        return s.waste_top
    if pile.kind == WORK and pile.number < len(s.work):
        cards = s.work[pile.number]
        return cards[selection.depth] if 0 <= selection.depth < len(cards) else None
    return None


def to_foundation(
    state: GameState, seat: int, selection: Selection, base: int | None = None
) -> Move | None:
    """A move of the selected card to a foundation: `base` if given (NEW_FOUNDATION for
    an empty place), else the first foundation the engine lists for it, else a new one
    (which the engine will refuse, with its reason, for anything but an Ace)."""
    entry = selected_entry(state, seat, selection)
    source = source_of(selection.pile)
    if entry is None or source is None:
        return None
    options = foundation_moves(state, seat, entry, source)
    if base is not None:
        chosen = [m for m in options if m.dest == base]
        if chosen:
            return chosen[0]
        return Move(seat, PLAY, entry & CARD_MASK, source, TO_FOUNDATION, base)
    if options:
        return options[0]
    return Move(seat, PLAY, entry & CARD_MASK, source, TO_FOUNDATION, NEW_FOUNDATION)


def move_to(state: GameState, seat: int, selection: Selection, target: PileRef) -> Move | None:
    """The move that takes the selection to `target`, or None if the target is no pile a
    card can be played to (the card just goes back)."""
    entry = selected_entry(state, seat, selection)
    source = source_of(selection.pile)
    if entry is None or source is None:
        return None
    card = entry & CARD_MASK
    if target.kind == WORK and target.seat == seat:
        if selection.pile == target:
            return None
        return Move(seat, PLAY, card, source, TO_WORK, target.number)
    if target.kind == FOUNDATION:
        bases = foundation_order(state)
        base = bases[target.number] if target.number < len(bases) else NEW_FOUNDATION
        return to_foundation(state, seat, selection, base)
    if target.kind == CENTRE:
        return to_foundation(state, seat, selection)
    if target.kind == NERTS and target.seat != seat and target.seat >= 0:
        return Move(seat, PLAY, card, source, TO_NERTS, target.seat)
    return None


def turn_move(state: GameState, seat: int) -> Move:
    return Move(seat, TURN if state.seats[seat].stock else RECYCLE)


WORK_KEYS = {str(k): k for k in range(1, 7)}


class InputController:
    """The selection, the drag and the keyboard mode of one player at one table."""

    def __init__(self) -> None:
        self.selection: Selection | None = None
        self.drag: Drag | None = None
        self.under_mode = False  # U pressed: the next digit slides under that pile

    def reset(self) -> None:
        self.selection, self.drag, self.under_mode = None, None, False

    def handle(
        self,
        event: InputEvent,
        layout: TableLayout,
        state: GameState | None,
        seat: int | None,
        places: list[CardPlace] | None = None,
    ) -> list[Intent]:
        if isinstance(event, KeyPress):
            return self._key(event.key, state, seat)
        if isinstance(event, PointerDown):
            return self._down(event, layout, state, seat, places)
        if isinstance(event, PointerMove):
            if self.drag is not None:
                self.drag.at = (event.x, event.y)
                sx, sy = self.drag.start
                if abs(event.x - sx) + abs(event.y - sy) >= DRAG_THRESHOLD:
                    self.drag.moving = True
            return []
        return self._up(event, layout, state, seat, places)

    # --- the mouse -------------------------------------------------------------------

    def _down(
        self,
        event: PointerDown,
        layout: TableLayout,
        state: GameState | None,
        seat: int | None,
        places: list[CardPlace] | None,
    ) -> list[Intent]:
        target = hit(layout, state, event.x, event.y, places)
        if target is not None and target.pile.kind == BUTTON:
            return self._button(target.pile.name, state, seat)
        if state is None or seat is None or target is None:
            self.selection = None
            return []
        pile = target.pile
        if pile.kind == STOCK and pile.seat == seat and event.button == 1:
            self.selection = None
            return [SubmitMove(turn_move(state, seat))]
        picked = selectable(state, seat, pile, target.depth)
        if event.button == 3 or event.double:
            self.selection = None
            self.drag = None
            if picked is None:
                return []
            if pile.kind == WORK:  # only the exposed card can go up
                picked = Selection(pile, len(state.seats[seat].work[pile.number]) - 1)
            move = to_foundation(state, seat, picked)
            return [SubmitMove(move)] if move is not None else []
        if self.selection is not None and (picked is None or picked.pile != self.selection.pile):
            # Two-click move: the second click names the target.
            move = move_to(state, seat, self.selection, pile)
            self.selection = None
            if move is not None:
                return [SubmitMove(move)]
            if picked is None:
                return []
        if picked is None:
            self.selection = None
            return []
        rect = next(
            (p.rect for p in places or [] if p.pile == picked.pile and p.depth == picked.depth),
            None,
        )
        grab = (event.x - rect.x, event.y - rect.y) if rect is not None else (0.0, 0.0)
        self.drag = Drag(picked, (event.x, event.y), grab, (event.x, event.y))
        return []

    def _up(
        self,
        event: PointerUp,
        layout: TableLayout,
        state: GameState | None,
        seat: int | None,
        places: list[CardPlace] | None,
    ) -> list[Intent]:
        drag, self.drag = self.drag, None
        if drag is None or state is None or seat is None or event.button != 1:
            return []
        drag.at = (event.x, event.y)  # the card is let go where the pointer is now
        if (
            not drag.moving
            and abs(event.x - drag.start[0]) + abs(event.y - drag.start[1]) >= DRAG_THRESHOLD
        ):
            drag.moving = True
        if not drag.moving:
            # A click without a drag: select (or unselect) for a two-click move.
            same = self.selection is not None and self.selection == drag.selection
            self.selection = None if same else drag.selection
            return []
        self.selection = None
        # The drop target is what lies under the dragged card's centre, not under the
        # pointer: a card held by its corner lands where it is seen.
        ox, oy = drag.card_origin
        sl = layout.seats[seat]
        cx, cy = ox + sl.card_w / 2, oy + sl.card_h / 2
        target = hit(layout, state, cx, cy, places) or hit(layout, state, event.x, event.y, places)
        if target is None:
            return []
        move = move_to(state, seat, drag.selection, target.pile)
        return [SubmitMove(move, (ox, oy))] if move is not None else []

    def _button(self, name: str, state: GameState | None, seat: int | None) -> list[Intent]:
        self.selection = None
        if name == "nerts" and seat is not None:
            return [SubmitMove(Move(seat, CALL_NERTS))]
        if name == "stuck" and seat is not None:
            return [SubmitMove(Move(seat, STUCK))]
        return [PressButton(name)]

    # --- the keyboard ----------------------------------------------------------------

    def _key(self, key: str, state: GameState | None, seat: int | None) -> list[Intent]:
        key = key.lower()
        if key in ("h", "f1", "?"):
            return [PressButton("help")]
        if key == "q":
            return [PressButton("leave")]
        if key == "escape":
            if self.selection is None and not self.under_mode:
                return [PressButton("escape")]
            self.selection, self.under_mode = None, False
            return []
        if state is None or seat is None:
            return []
        s = state.seats[seat]
        if key in ("space", "t"):
            return [SubmitMove(turn_move(state, seat))]
        if key == "s":
            return [SubmitMove(Move(seat, STUCK))]
        if key == "c":
            return [SubmitMove(Move(seat, CALL_NERTS))]
        if key == "n":
            return self._select(
                selectable(state, seat, PileRef(seat, NERTS), None), "your Nerts pile is empty"
            )
        if key == "d":
            return self._select(
                selectable(state, seat, PileRef(seat, WASTE), None), "your waste is empty"
            )
        if key == "u":
            if self.selection is None:
                return [Hint("select a card first (N, D or a pile number), then U and a pile")]
            self.under_mode = True
            return []
        if key in WORK_KEYS:
            pile = WORK_KEYS[key] - 1
            if pile >= len(s.work):
                return [Hint(f"you have work piles 1 to {len(s.work)}")]
            if self.selection is not None:
                selection, under = self.selection, self.under_mode
                self.selection, self.under_mode = None, False
                if under:
                    entry = selected_entry(state, seat, selection)
                    source = source_of(selection.pile)
                    if entry is None or source is None:
                        return []
                    return [SubmitMove(Move(seat, PLAY, entry & CARD_MASK, source, TO_UNDER, pile))]
                move = move_to(state, seat, selection, PileRef(seat, WORK, pile))
                if move is None:  # the same pile again: the selection is dropped
                    return []
                return [SubmitMove(move)]
            return self._select(
                selectable(state, seat, PileRef(seat, WORK, pile), None),
                f"work pile {pile + 1} is empty",
            )
        if key in ("up", "down") and self.selection is not None:
            sel = self.selection
            if sel.pile.kind == WORK:
                count = len(s.work[sel.pile.number])
                depth = sel.depth - 1 if key == "up" else sel.depth + 1
                self.selection = Selection(sel.pile, max(0, min(count - 1, depth)))
            return []
        if key in ("f", "return", "enter"):
            if self.selection is None:
                return [Hint("select a card first: N, D or a pile number")]
            sel, self.selection = self.selection, None
            if sel.pile.kind == WORK:
                sel = Selection(sel.pile, len(s.work[sel.pile.number]) - 1)
            move = to_foundation(state, seat, sel)
            return [SubmitMove(move)] if move is not None else []
        return []

    def _select(self, selection: Selection | None, empty: str) -> list[Intent]:
        self.under_mode = False
        if selection is None:
            self.selection = None
            return [Hint(empty)]
        self.selection = None if self.selection == selection else selection
        return []
