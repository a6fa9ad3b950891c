"""The end-of-round audit: replay a round knowing every seed and check every reveal.

During play a peer can only check that a revealed card exists in the seat's deck and was
not seen before. Once the seeds are revealed, the round is replayed from the all-knowing
start: a seat that showed or turned up a card its seed does not put there is a cheater.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from nerts_p2p.game.cards import card_name
from nerts_p2p.game.engine import (
    apply,
    declare_gone,
    omniscient_start,
    redact_seat,
    reveals_needed,
    shown_cards,
)
from nerts_p2p.game.errors import Rejection, RejectReason
from nerts_p2p.game.moves import Move
from nerts_p2p.game.position import position_text
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.state import GameState, slot_card


class RevealMismatch(NamedTuple):
    seat: int
    op_index: int  # -1 for the cards shown at the deal
    move: Move | None
    message: str


class AuditReport(NamedTuple):
    mismatches: tuple[RevealMismatch, ...]
    #: The replay did not reach the same public state as the fold it audits.
    diverged: bool

    @property
    def cheaters(self) -> frozenset[int]:
        return frozenset(m.seat for m in self.mismatches)

    @property
    def honest(self) -> bool:
        return not self.mismatches and not self.diverged


def audit_round(
    rules: Rules,
    seeds: Sequence[bytes],
    public_start: GameState,
    ops: Iterable[tuple[Move, bool] | int],
    public_end: GameState | None = None,
) -> AuditReport:
    """Replay `ops` (each move with its in-the-air flag, in fold order, rejected ones
    included; a bare int is a seat declared gone, `declare_gone`) from the seeds, and report
    every reveal that does not match."""
    state = omniscient_start(rules, seeds)
    mismatches: list[RevealMismatch] = []
    for seat in range(rules.seats):
        dealt, shown = shown_cards(state, seat), shown_cards(public_start, seat)
        if dealt != shown:
            mismatches.append(
                RevealMismatch(seat, -1, None, f"seat {seat} showed cards its seed does not deal")
            )
            state = redact_seat(state, seat)
            state = _replace_shown(state, public_start, seat)
    for index, item in enumerate(ops):
        if isinstance(item, int):
            state = declare_gone(state, item)
            continue
        move, in_the_air = item
        result = apply(state, move, in_the_air=in_the_air)
        if isinstance(result, Rejection) and result.reason == RejectReason.REVEAL_MISMATCH:
            # Judge only reveals the round accepted: a move the public fold rejected anyway
            # (partners turning the same stock at once, say) put no false card on the table.
            public = apply(redact_seat(state, move.seat), move, in_the_air=in_the_air)
            if isinstance(public, Rejection):
                continue
            expected = [slot_card(s) for s in reveals_needed(state, move) if s <= -2]
            mismatches.append(
                RevealMismatch(
                    move.seat,
                    index,
                    move,
                    f"{result.message} (move {index}: {move}; the deck had "
                    f"{', '.join(card_name(c) for c in expected)})",
                )
            )
            # Once caught, the seat's later reveals are taken at its word, as the fold did.
            state = redact_seat(state, move.seat)
            result = public
        if not isinstance(result, Rejection):
            state = result
    diverged = public_end is not None and position_text(state) != position_text(public_end)
    return AuditReport(tuple(mismatches), diverged)


def _replace_shown(state: GameState, public_start: GameState, seat: int) -> GameState:
    shown = public_start.seats[seat]
    s = state.seats[seat]
    seats = list(state.seats)
    seats[seat] = s._replace(nerts_up=shown.nerts_up, work=shown.work, seen=shown.seen)
    return state._replace(seats=tuple(seats))
