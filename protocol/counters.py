"""Drop counters: every datagram or op the gate refuses is counted by reason.

DESIGN.md asks that bad input never raise out of the receive loop; counting is how it stays
visible instead. The fuzzer and the benchmarks read these numbers, so every reason is always
present in `as_dict` (zeros included) and in gate order, which keeps reports diffable.
"""

from __future__ import annotations

from typing import final

from .errors import DropReason, ProtocolError

__all__ = ["DropCounters"]


@final
class DropCounters:
    """How many drops each `DropReason` caused."""

    __slots__ = ("_counts",)

    def __init__(self) -> None:
        self._counts: dict[DropReason, int] = dict.fromkeys(DropReason, 0)

    def count(self, reason: DropReason, n: int = 1) -> None:
        """Record `n` drops for `reason`."""
        if n < 0:
            raise ValueError("drop counts only go up")
        # Counted for every duplicate a catching-up peer is sent: the enum's constructor
        # only for a plain value.
        self._counts[reason if type(reason) is DropReason else DropReason(reason)] += n

    def count_error(self, error: ProtocolError) -> None:
        """Record one drop for the reason carried by `error`."""
        self.count(error.reason)

    def __getitem__(self, reason: DropReason) -> int:
        return self._counts[DropReason(reason)]

    @property
    def total(self) -> int:
        return sum(self._counts.values())

    def as_dict(self) -> dict[str, int]:
        """Every reason's value (e.g. "bad_signature") -> count, zeros included, in gate order."""
        return {reason.value: count for reason, count in self._counts.items()}

    def __repr__(self) -> str:
        nonzero = ", ".join(f"{reason}={count}" for reason, count in self._counts.items() if count)
        return f"DropCounters({nonzero})"
