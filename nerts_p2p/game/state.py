"""The public state of a round: what every peer may know.

Face-down piles (the hidden part of a Nerts pile, the stock) are *slots*. A slot is
``UNKNOWN`` (-1) when nobody but the owner knows the card, a card id (>= 0) once the card's
identity is public (a recycled stock was seen on the waste), or ``private_slot(card)`` (<= -2)
in a view that also holds private knowledge: the owner's own view, the simulator's
all-knowing view, or the audit's. `state_hash` always hashes the public projection, so a
peer's private knowledge never makes its hash differ from anyone else's.

All values are immutable tuples so that a fold can keep old states as checkpoints for free.
"""

from __future__ import annotations

from typing import NamedTuple

from nerts_p2p.game.cards import CARD_MASK, owner_of
from nerts_p2p.game.rules import Rules

UNKNOWN = -1


def private_slot(card: int) -> int:
    return -card - 2


def slot_card(slot: int) -> int:
    """The card a private slot holds (only meaningful for slots <= -2)."""
    return -slot - 2


class SeatState(NamedTuple):
    nerts_hidden: tuple[int, ...]  # face-down slots, bottom to top
    nerts_up: tuple[int, ...]  # face-up entries, bottom to top; the last is playable
    work: tuple[tuple[int, ...], ...]  # each pile bottom to top; the last card is exposed
    stock: tuple[int, ...]  # slots, top first
    waste: tuple[int, ...]  # face-up, bottom to top; the last is playable
    seen: int  # bit i set: this seat's card with index i is public knowledge
    stuck: bool

    @property
    def nerts_count(self) -> int:
        return len(self.nerts_hidden) + len(self.nerts_up)

    @property
    def nerts_top(self) -> int | None:
        return self.nerts_up[-1] if self.nerts_up else None

    @property
    def waste_top(self) -> int | None:
        return self.waste[-1] if self.waste else None


class Foundation(NamedTuple):
    """A pile in the centre, named by the card that started it (its Ace or a joker as Ace),
    so that its name never depends on the order in which foundations were started."""

    base: int
    suit: int
    cards: tuple[int, ...]  # entries bottom to top; a joker entry carries its declared face

    @property
    def top_rank(self) -> int:
        return len(self.cards)

    @property
    def complete(self) -> bool:
        return len(self.cards) == 13

    def wants_face(self) -> int:
        """The face index that may go on next (-1 once the King is on)."""
        return -1 if self.complete else self.suit * 13 + len(self.cards)


ENDED_NERTS = "nerts"
ENDED_STALEMATE = "stalemate"


class GameState(NamedTuple):
    rules: Rules
    seats: tuple[SeatState, ...]
    #: base card -> foundation; never mutated (a move that changes it builds a new dict).
    foundations: dict[int, Foundation]
    #: face index -> bases of the foundations that take that card next.
    wants: dict[int, tuple[int, ...]]
    ended_by: str | None
    called_by: int | None
    #: All-stuck stock rotations so far, and whether any card moved since the last one.
    rotations: int
    progress: bool

    @property
    def ended(self) -> bool:
        return self.ended_by is not None


def index_wants(foundations: dict[int, Foundation]) -> dict[int, tuple[int, ...]]:
    wants: dict[int, list[int]] = {}
    for base in sorted(foundations):
        face = foundations[base].wants_face()
        if face >= 0:
            wants.setdefault(face, []).append(base)
    return {face: tuple(bases) for face, bases in wants.items()}


def seen_mask(seats: tuple[SeatState, ...], foundations: dict[int, Foundation], seat: int) -> int:
    """Which of `seat`'s cards are public: every one that is anywhere face up or known."""
    mask = 0

    def note(entry: int) -> None:
        nonlocal mask
        if entry >= 0 and owner_of(entry) == seat:
            mask |= 1 << (entry & 63)

    for s in seats:
        for pile in (s.nerts_hidden, s.nerts_up, s.stock, s.waste, *s.work):
            for entry in pile:
                note(entry & CARD_MASK if entry >= 0 else entry)
    for foundation in foundations.values():
        for entry in foundation.cards:
            note(entry & CARD_MASK)
    return mask


def forget_private(seat: SeatState) -> SeatState:
    """The seat with its private slots forgotten (public cards in its stock stay known)."""

    def forget(slots: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(UNKNOWN if s < 0 else s for s in slots)

    return seat._replace(nerts_hidden=forget(seat.nerts_hidden), stock=forget(seat.stock))


def public_projection(state: GameState) -> GameState:
    """The state with every private slot forgotten: what an onlooker knows."""
    return state._replace(seats=tuple(forget_private(s) for s in state.seats))


def cards_of_seat(state: GameState, seat: int) -> list[int]:
    """Every entry and slot that holds one of `seat`'s cards, or an unknown slot of its own
    piles: used to check that cards are conserved."""
    found: list[int] = []
    for i, s in enumerate(state.seats):
        for pile in (s.nerts_up, s.waste, *s.work):
            found.extend(e & CARD_MASK for e in pile if owner_of(e) == seat)
        if i == seat:
            found.extend(slot for slot in s.nerts_hidden + s.stock)
    for foundation in state.foundations.values():
        found.extend(e & CARD_MASK for e in foundation.cards if owner_of(e) == seat)
    return found


__all__ = [
    "ENDED_NERTS",
    "ENDED_STALEMATE",
    "UNKNOWN",
    "Foundation",
    "GameState",
    "SeatState",
    "cards_of_seat",
    "index_wants",
    "private_slot",
    "public_projection",
    "seen_mask",
    "slot_card",
]
