"""The total order's tie-break is fair, and stability waits for every participant."""

from __future__ import annotations

import hashlib
from collections import Counter

from protocol.clocks import tiebreak
from protocol.order import round_mix
from protocol.signing import SigningKeyPair

KEYS = [SigningKeyPair(hashlib.sha256(f"tie/{i}".encode()).digest()).public_key for i in range(4)]


def test_each_seat_wins_about_its_share_of_exact_ties_over_many_rounds() -> None:
    rounds = 2000
    wins: Counter[int] = Counter()
    for r in range(rounds):
        commitments = [hashlib.sha256(f"commit/{r}/{i}".encode()).digest() for i in range(4)]
        mix = round_mix(commitments)
        first = min(range(4), key=lambda i: tiebreak(mix, KEYS[i]))
        wins[first] += 1
    # Binomial(2000, 1/4): sd ~ 19; every seat within 4 sd of 500.
    assert all(abs(wins[i] - rounds / 4) < 80 for i in range(4)), wins


def test_the_tie_winner_changes_between_rounds_and_is_not_the_smallest_key() -> None:
    by_key = min(range(4), key=lambda i: KEYS[i])
    winners = []
    for r in range(40):
        mix = round_mix([hashlib.sha256(f"c/{r}/{i}".encode()).digest() for i in range(4)])
        winners.append(min(range(4), key=lambda i: tiebreak(mix, KEYS[i])))
    assert len(set(winners)) == 4
    assert winners.count(by_key) < 40
