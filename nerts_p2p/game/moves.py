"""Moves as small hashable values with a text form that round-trips.

A move names what it moves: its card, where from and where to (DESIGN.md section 2).

    0 5H n-w2 +7C     seat 0 plays 5H from its Nerts pile to work pile 2; 7C is turned up
    1 9S w0-w3        seat 1 moves 9S and every card on it from work pile 0 to work pile 3
    2 AH d-f          seat 2 starts a foundation with the AH on its waste
    2 2H w1-fAH       ... builds on the foundation started by its own AH
    3 3H@2 n-fAH@2    seat 3 plays seat 2's 3H (received by a Nerts build) on seat 2's AH pile
    0 X1=5H w0-fAH@1  a joker declared as 5H goes to a foundation
    0 8D n-u2         slide_under: 8D goes under work pile 2 (a work pile must be empty)
    0 6H w1-n2        nerts_builds: 6H onto seat 2's Nerts pile
    0 turn +5H+7C+9D  turn the stock; the cards are named as they land on the waste
    0 recycle | 0 rotate | 0 stuck | 0 nerts

Sources: ``n`` Nerts top, ``d`` waste top, ``wK`` work pile K. Destinations: ``wK``,
``f`` (a new foundation), ``f<base>`` (the foundation started by that card), ``uK`` (under
work pile K), ``nS`` (seat S's Nerts pile). A card without ``@`` belongs to the mover.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from nerts_p2p.game.cards import card_text, face_text, is_joker, parse_card, parse_face
from nerts_p2p.game.errors import NotationError

PLAY: Final = "play"
TURN: Final = "turn"
RECYCLE: Final = "recycle"
ROTATE: Final = "rotate"
STUCK: Final = "stuck"
NERTS: Final = "nerts"
SIMPLE_ACTIONS = (TURN, RECYCLE, ROTATE, STUCK, NERTS)

# Sources (work piles are 0..5).
FROM_NERTS: Final = -1
FROM_WASTE: Final = -2

# Destination kinds.
TO_WORK: Final = "w"
TO_FOUNDATION: Final = "f"
TO_UNDER: Final = "u"
TO_NERTS: Final = "n"
NEW_FOUNDATION: Final = -1


class Move(NamedTuple):
    seat: int
    action: str
    card: int = -1  # the card moved (the bottom card of a moved sub-stack)
    source: int = 0  # FROM_NERTS, FROM_WASTE or a work pile index
    dest_kind: str = ""
    dest: int = 0  # work pile, foundation base (NEW_FOUNDATION for a new one) or seat
    declare: int = -1  # the face a joker takes on a foundation
    reveals: tuple[int, ...] = ()  # cards turned face up by this move, in order

    def __str__(self) -> str:
        return move_text(self)

    def without_reveals(self) -> Move:
        return self._replace(reveals=()) if self.reveals else self


def play(seat: int, card: int, source: int, dest_kind: str, dest: int, declare: int = -1) -> Move:
    return Move(seat, PLAY, card, source, dest_kind, dest, declare)


def _source_text(source: int) -> str:
    if source == FROM_NERTS:
        return "n"
    if source == FROM_WASTE:
        return "d"
    return f"w{source}"


def move_text(move: Move) -> str:
    reveals = "".join("+" + card_text(c, default_owner=move.seat) for c in move.reveals)
    if move.action != PLAY:
        return f"{move.seat} {move.action}" + (" " + reveals if reveals else "")
    card = card_text(move.card, default_owner=move.seat)
    if move.declare >= 0:
        card = (
            card.replace("@", "=" + face_text(move.declare) + "@", 1)
            if "@" in card
            else (card + "=" + face_text(move.declare))
        )
    if move.dest_kind == TO_FOUNDATION:
        dest = (
            "f"
            if move.dest == NEW_FOUNDATION
            else "f" + card_text(move.dest, default_owner=move.seat)
        )
    else:
        dest = f"{move.dest_kind}{move.dest}"
    text = f"{move.seat} {card} {_source_text(move.source)}-{dest}"
    return text + (" " + reveals if reveals else "")


def _parse_index(text: str, what: str, original: str) -> int:
    if not (text.isascii() and text.isdigit()) or len(text) > 2:
        raise NotationError(f"{original!r}: {what} must be a number, got {text!r}")
    return int(text)


def parse_move(text: str) -> Move:
    """Read the text written by `move_text` (see the module docstring for the grammar)."""
    parts = text.split()
    if len(parts) < 2:
        raise NotationError(f"{text!r} is not a move: write the seat, then the move, like '0 turn'")
    seat = _parse_index(parts[0], "the seat", text)
    if seat > 7:
        raise NotationError(f"{text!r}: seats are numbered 0..7")
    # Every received MOVE is read here once: plain loops, not generators, on this path.
    reveals_at = len(parts)
    for i, part in enumerate(parts):
        if part[0] == "+":
            reveals_at = i
            break
    reveals: tuple[int, ...] = ()
    if reveals_at < len(parts):
        reveals = tuple(
            [
                parse_card(token, default_owner=seat)
                for token in "".join(parts[reveals_at:]).split("+")[1:]
            ]
        )
    head = parts[1:reveals_at]
    if head and head[0] in SIMPLE_ACTIONS:
        if len(head) != 1:
            raise NotationError(f"{text!r}: {head[0]!r} takes no card or pile")
        if reveals and head[0] != TURN:
            raise NotationError(f"{text!r}: only 'turn' names revealed cards after +")
        return Move(seat, head[0], reveals=reveals)
    if len(head) != 2 or head[1].count("-") != 1:
        raise NotationError(
            f"{text!r} is not a move: write seat, card and source-destination, like '0 5H n-w2'"
        )
    card_part, route = head
    declare = -1
    base, eq, rest = card_part.partition("=")
    if eq:
        face_part, _, owner_part = rest.partition("@")
        declare = parse_face(face_part)
        if declare >= 52:
            raise NotationError(f"{text!r}: a joker must be declared as an ordinary card")
        card_part = base + ("@" + owner_part if owner_part else "")
    card = parse_card(card_part, default_owner=seat)
    if declare >= 0 and not is_joker(card):
        raise NotationError(f"{text!r}: only a joker can be declared with =")
    src_text, dst_text = route.split("-")
    if src_text == "n":
        source = FROM_NERTS
    elif src_text == "d":
        source = FROM_WASTE
    elif src_text[:1] == "w":
        source = _parse_index(src_text[1:], "the work pile", text)
    else:
        raise NotationError(f"{text!r}: the source must be n (Nerts), d (waste) or wK (work pile)")
    kind, target = dst_text[:1], dst_text[1:]
    if kind == TO_FOUNDATION:
        dest = NEW_FOUNDATION if target == "" else parse_card(target, default_owner=seat)
    elif kind in (TO_WORK, TO_UNDER, TO_NERTS):
        dest = _parse_index(target, "the destination", text)
    else:
        raise NotationError(
            f"{text!r}: the destination must be wK, f, f<card>, uK (under) or nS (Nerts pile)"
        )
    if len(reveals) > 1:
        raise NotationError(f"{text!r}: a card move turns up at most one card")
    return Move(seat, PLAY, card, source, kind, dest, declare, reveals)
