"""Hypothesis-style shrinking of a failing case: the smallest sub-list that still fails.

`ddmin` is Zeller's delta debugging over a list (fault schedules, injected datagrams): it
tries dropping halves, then quarters, and so on, keeping any smaller list for which `fails`
still holds, and finishes by dropping single items. The result is 1-minimal: removing any
one item makes the failure go away. `budget` bounds the number of runs, because each run of
a table takes a while; what the budget allows is still a valid reproducer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def ddmin(items: Sequence[T], fails: Callable[[list[T]], bool], *, budget: int = 60) -> list[T]:
    current = list(items)
    runs = 0
    if fails([]):
        return []
    granularity = 2
    while len(current) >= 2 and runs < budget:
        chunk = max(1, len(current) // granularity)
        reduced = False
        for start in range(0, len(current), chunk):
            if runs >= budget:
                break
            complement = current[:start] + current[start + chunk :]
            runs += 1
            if complement and fails(complement):
                current = complement
                granularity = max(granularity - 1, 2)
                reduced = True
                break
        if not reduced:
            if chunk == 1:
                break
            granularity = min(granularity * 2, len(current))
    return current
