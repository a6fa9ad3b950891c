"""What must hold after every fold, whatever the network did: the fuzzer's invariants.

These are checked by the fuzzer from the outside, on each peer's own (speculative) state, so
a planted or real bug in the fold shows up at the first state that breaks them, not only in
a final comparison:

- every seat's deck is accounted for exactly once (no card in two places, none lost);
- a round's scores are the rules' scores of its end state, and match totals add up.
"""

from __future__ import annotations

from collections.abc import Mapping

from nerts_p2p.game.cards import CARD_MASK, owner_of
from nerts_p2p.game.scoring import score_round
from nerts_p2p.game.state import GameState, slot_card
from nerts_p2p.table.replica import RoundFinal


def conservation_problems(state: GameState) -> list[str]:
    """Why `state` loses or doubles a card (empty when every deck is whole).

    Works on a peer's own view too: its own face-down cards are private slots (<= -2),
    which name the card; unknown slots (-1) stand for one card of the pile's owner."""
    rules = state.rules
    problems: list[str] = []
    known: list[list[int]] = [[] for _ in range(rules.seats)]
    unknown = [0] * rules.seats

    def note(entry: int, where: str) -> None:
        card = entry & CARD_MASK
        owner = owner_of(card)
        if owner >= rules.seats:
            problems.append(f"{where} holds a card of seat {owner}; the table has {rules.seats}")
            return
        known[owner].append(card & 63)

    for i, seat in enumerate(state.seats):
        for name, pile in (("nerts pile", seat.nerts_up), ("waste", seat.waste)):
            for entry in pile:
                note(entry, f"seat {i}'s {name}")
        for w, pile in enumerate(seat.work):
            for entry in pile:
                note(entry, f"seat {i}'s work pile {w + 1}")
        for name, slots in (("face-down nerts", seat.nerts_hidden), ("stock", seat.stock)):
            for slot in slots:
                if slot == -1:
                    unknown[i] += 1
                elif slot <= -2:
                    note(slot_card(slot), f"seat {i}'s {name}")
                else:
                    note(slot, f"seat {i}'s {name}")
    for base, foundation in state.foundations.items():
        for entry in foundation.cards:
            note(entry, f"foundation {base}")
    for owner in range(rules.seats):
        cards = known[owner]
        doubled = sorted({c for c in cards if cards.count(c) > 1})
        if doubled:
            problems.append(f"seat {owner}'s card(s) {doubled} are in two places at once")
        if len(cards) + unknown[owner] != rules.deck_size:
            problems.append(
                f"seat {owner}'s cards add up to {len(cards) + unknown[owner]}, "
                f"not {rules.deck_size}"
            )
    return problems


def score_problems(
    final: RoundFinal, end: GameState, totals_before: Mapping[int, int]
) -> list[str]:
    """Why a round's announced result does not follow from its end state and the totals
    before it (`totals_before`: seat -> total after the previous round, 0 if none)."""
    problems: list[str] = []
    expected = score_round(end, cheaters=final.cheaters)
    if tuple(expected) != tuple(final.scores):
        problems.append(
            f"round {final.round}: scores {[s.score for s in final.scores]} are not the "
            f"rules' scores of its end state {[s.score for s in expected]}"
        )
    for score in final.scores:
        want = totals_before.get(score.seat, 0) + score.score
        if final.totals[score.seat] != want:
            problems.append(
                f"round {final.round}: seat {score.seat}'s total {final.totals[score.seat]} "
                f"is not {totals_before.get(score.seat, 0)} + {score.score}"
            )
    return problems
