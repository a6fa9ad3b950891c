"""Cards as small integers, and their text form.

A card is an `int`: ``owner * 64 + index`` where ``index`` is ``suit * 13 + rank - 1``
for the 52 ordinary cards and 52 / 53 for the two jokers. Every seat plays its own deck,
so the owner is part of the card's identity (it decides who scores it).

Inside piles a joker may carry the identity it has been given (on a work pile when a card
was played on it, on a foundation when it was declared). Such a pile *entry* keeps the card
in its low 10 bits and ``face + 1`` above them, so piles stay plain tuples of ints; for an
ordinary card the entry is the card itself.

Text: rank ``A23456789TJQK`` (``10`` is read too) then suit ``S H D C``; jokers are
``X1`` and ``X2``. The owner follows ``@`` where it is not implied by context (``5H@2``);
a joker's given identity follows ``=`` (``X1=9H``).
"""

from __future__ import annotations

import functools

from nerts_p2p.game.errors import NotationError

SUITS = "SHDC"
SUIT_NAMES = ("spades", "hearts", "diamonds", "clubs")
RANKS = "A23456789TJQK"
RANK_NAMES = (
    "ace", "2", "3", "4", "5", "6", "7", "8", "9", "10", "jack", "queen", "king",
)  # fmt: skip
JOKER_INDEXES = (52, 53)
CARDS_PER_OWNER = 64
CARD_MASK = 1023
FACE_SHIFT = 10

# Lookup tables by face index (0..53): far cheaper than arithmetic in the hot path.
RANK_OF: tuple[int, ...] = tuple([i % 13 + 1 for i in range(52)] + [0, 0])
SUIT_OF: tuple[int, ...] = tuple([i // 13 for i in range(52)] + [-1, -1])
RED_OF: tuple[bool, ...] = tuple([i // 13 in (1, 2) for i in range(52)] + [False, False])


def make_card(owner: int, index: int) -> int:
    return owner * CARDS_PER_OWNER + index


def owner_of(card: int) -> int:
    return (card & CARD_MASK) >> 6


def face_index(rank: int, suit: int) -> int:
    return suit * 13 + rank - 1


def is_joker(entry: int) -> bool:
    return (entry & 63) >= 52


def face_of(entry: int) -> int:
    """The face index an entry shows: its own, or the one a joker was given (52/53 if none)."""
    if entry >= 1 << FACE_SHIFT:
        return (entry >> FACE_SHIFT) - 1
    return entry & 63


def with_face(card: int, face: int) -> int:
    """A pile entry for `card` (a joker) showing `face`."""
    return (card & CARD_MASK) | ((face + 1) << FACE_SHIFT)


def colour_suit(red: bool) -> int:
    """The suit a joker fixed on a work pile shows: only its colour matters there."""
    return 1 if red else 0


def face_text(face: int) -> str:
    if face >= 52:
        return f"X{face - 51}"
    return RANKS[face % 13] + SUITS[face // 13]


def card_text(entry: int, *, default_owner: int | None = None) -> str:
    """``5H``, ``5H@2``, ``X1=9H@0``: the compact form of a card or pile entry."""
    card = entry & CARD_MASK
    text = face_text(card & 63)
    if entry >= 1 << FACE_SHIFT:
        text += "=" + face_text(face_of(entry))
    owner = owner_of(card)
    if owner != default_owner:
        text += f"@{owner}"
    return text


def face_name(face: int) -> str:
    if face >= 52:
        return "joker"
    return f"{RANK_NAMES[face % 13]} of {SUIT_NAMES[face // 13]}"


def card_name(entry: int) -> str:
    """Words for a player: ``7 of clubs``, ``joker (as 9 of hearts)``."""
    if is_joker(entry):
        if entry >= 1 << FACE_SHIFT:
            return f"joker (as {face_name(face_of(entry))})"
        return "joker"
    return face_name(entry & 63)


def parse_face(text: str) -> int:
    """Read ``5H``, ``10h``, ``X2`` as a face index."""
    t = text.strip().upper()
    if t in ("X1", "X2"):
        return 51 + int(t[1])
    if len(t) == 3 and t.startswith("10"):
        t = "T" + t[2]
    if len(t) != 2 or t[0] not in RANKS or t[1] not in SUITS:
        raise NotationError(
            f"{text!r} is not a card: write a rank (A 2-9 T J Q K) and a suit (S H D C), "
            "like 7C or TH, or X1/X2 for a joker"
        )
    return face_index(RANKS.index(t[0]) + 1, SUITS.index(t[1]))


# Remembered: every received MOVE names its cards in text, and a round names the same few
# hundred again and again (a wrong text raises, and an exception is never remembered).
@functools.lru_cache(maxsize=4096)
def parse_card(text: str, *, default_owner: int | None = None, max_owner: int = 7) -> int:
    """Read a card or pile entry (``5H@2``, ``X1=9H``) written by `card_text`."""
    body, sep, owner_text = text.partition("@")
    if sep:
        if not (owner_text.isascii() and owner_text.isdigit()) or int(owner_text) > max_owner:
            raise NotationError(f"{text!r}: the owner after @ must be a seat number 0..{max_owner}")
        owner = int(owner_text)
    elif default_owner is None:
        raise NotationError(f"{text!r}: say whose card it is, like {text}@0")
    else:
        owner = default_owner
    base, eq, given = body.partition("=")
    card = make_card(owner, parse_face(base))
    if not eq:
        return card
    if not is_joker(card):
        raise NotationError(f"{text!r}: only a joker can be given another identity with =")
    face = parse_face(given)
    if face >= 52:
        raise NotationError(f"{text!r}: a joker must stand for an ordinary card")
    return with_face(card, face)
