"""Scoring a round and keeping a match's totals to the target score."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from nerts_p2p.game.cards import owner_of
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.state import GameState


class SeatScore(NamedTuple):
    seat: int
    foundation_cards: int  # this seat's own cards on the foundations, completed piles included
    nerts_left: int  # cards left in its Nerts pile, whoever owns them
    called: bool
    score: int


def score_round(
    state: GameState, *, cheaters: frozenset[int] = frozenset()
) -> tuple[SeatScore, ...]:
    """+1 per own card on a foundation, -penalty per card left in the Nerts pile, plus the
    caller's bonus. A seat caught cheating by the audit scores zero for the round, whatever
    its cards say (it still counts as having played)."""
    rules = state.rules
    on_foundations = [0] * rules.seats
    for foundation in state.foundations.values():
        for entry in foundation.cards:
            on_foundations[owner_of(entry)] += 1
    scores = []
    for i, s in enumerate(state.seats):
        called = state.called_by == i
        points = on_foundations[i] - rules.nerts_penalty * s.nerts_count
        if called:
            points += rules.caller_bonus
        if i in cheaters:
            points = min(points, 0)
        scores.append(SeatScore(i, on_foundations[i], s.nerts_count, called, points))
    return tuple(scores)


def match_over(totals: Sequence[int], rules: Rules, rounds: int) -> bool:
    """Whether the match may end after `rounds` rounds with these totals: some total reached
    the target, or (the German text) the agreed number of rounds is played, or the first
    total leads the last by the agreed spread."""
    best = max(totals)
    return (
        best >= rules.target
        or (rules.match_rounds > 0 and rounds >= rules.match_rounds)
        or (rules.match_spread > 0 and best - min(totals) >= rules.match_spread)
    )


def match_winner(totals: Sequence[int], rules: Rules, rounds: int) -> int | None:
    """The seat that has won the match after `rounds` rounds: the match is over
    (`match_over`) and this seat's total is alone at the top. A tie at the top, whatever
    ended the match, is played off with another round."""
    best = max(totals)
    if not match_over(totals, rules, rounds) or list(totals).count(best) > 1:
        return None
    return list(totals).index(best)


@dataclass
class MatchScore:
    """Totals across rounds. The match ends after a round in which some seat reaches the
    target (or, under the German options, after `match_rounds` rounds or once the spread of
    the totals reaches `match_spread`); the highest total wins, and a tie at the top is
    played off with another round."""

    rules: Rules
    totals: list[int] = field(default_factory=list)
    rounds: int = 0

    def __post_init__(self) -> None:
        if not self.totals:
            self.totals = [0] * self.rules.seats

    def add_round(self, scores: Sequence[SeatScore]) -> None:
        for s in scores:
            self.totals[s.seat] += s.score
        self.rounds += 1

    @property
    def winner(self) -> int | None:
        return match_winner(self.totals, self.rules, self.rounds)

    @property
    def finished(self) -> bool:
        return self.winner is not None
