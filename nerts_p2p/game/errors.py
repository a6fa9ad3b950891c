"""The engine's own exceptions and the reasons a move can be rejected.

Errors split by cause, as in python-chess: text that cannot be read at all
(`NotationError`) versus a well-formed move that the position does not allow
(`IllegalMoveError`). Inside a replicated fold an illegal move is not an
exception but a `Rejection` value (see `engine.apply`), because a move that
lost a foundation race is a normal event, not a fault.
"""

from __future__ import annotations

import enum
from typing import NamedTuple


class NertsError(Exception):
    """Base class of every error the engine raises on purpose."""


class NotationError(NertsError, ValueError):
    """Text that is not a card, a move, a position or a rule option."""


class RulesError(NertsError, ValueError):
    """A rule option outside what the game allows (for example 9 seats)."""


class RejectReason(enum.StrEnum):
    ROUND_OVER = "round_over"
    NO_SUCH_SEAT = "no_such_seat"
    NO_SUCH_PILE = "no_such_pile"
    EMPTY_PILE = "empty_pile"
    NOT_ON_TOP = "not_on_top"
    NOT_IN_PILE = "not_in_pile"
    DOES_NOT_FIT = "does_not_fit"
    NO_SUCH_FOUNDATION = "no_such_foundation"
    NEEDS_ACE = "needs_ace"
    JOKER_UNDECLARED = "joker_undeclared"
    BAD_DECLARATION = "bad_declaration"
    VARIANT_OFF = "variant_off"
    ACES_FIRST = "aces_first"
    BAD_REVEAL = "bad_reveal"
    MISSING_REVEAL = "missing_reveal"
    REVEAL_MISMATCH = "reveal_mismatch"
    STOCK_EMPTY = "stock_empty"
    STOCK_NOT_EMPTY = "stock_not_empty"
    ALREADY_STUCK = "already_stuck"
    NOT_STUCK = "not_stuck"
    NERTS_NOT_EMPTY = "nerts_not_empty"


class Rejection(NamedTuple):
    """A move that has no effect, with the reason in a player's words."""

    reason: RejectReason
    message: str

    def __str__(self) -> str:
        return self.message


class IllegalMoveError(NertsError):
    """Raised by `engine.play` when the position does not allow a move."""

    def __init__(self, rejection: Rejection) -> None:
        super().__init__(rejection.message)
        self.rejection = rejection

    @property
    def reason(self) -> RejectReason:
        return self.rejection.reason
