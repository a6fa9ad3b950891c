"""Per-source token buckets: the second step of the receive gate.

Sans-I/O like the rest of `protocol`: the caller passes the current time in, so tests drive the
limiter with exact timestamps and the node uses `trio.current_time()`.

Memory is bounded by `max_sources`: a flood of spoofed source addresses evicts the least recently
seen sources instead of growing the table. An evicted source that comes back starts with a full
bucket, which makes the limiter more lenient under such a flood, never less: a rate limiter must
not become the way an attacker silences honest peers.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import final

__all__ = ["TokenBucketLimiter"]


@final
class TokenBucketLimiter:
    """Allow each source `burst` datagrams at once, refilled at `rate_per_s` datagrams a second."""

    __slots__ = ("_buckets", "burst", "max_sources", "rate_per_s")

    def __init__(self, rate_per_s: float, burst: int, max_sources: int) -> None:
        if not rate_per_s > 0:
            raise ValueError("rate_per_s must be positive")
        if burst < 1:
            raise ValueError("burst must be at least 1, or no datagram would ever pass")
        if max_sources < 1:
            raise ValueError("max_sources must be at least 1")
        self.rate_per_s = rate_per_s
        self.burst = burst
        self.max_sources = max_sources
        # source -> (tokens, time of last refill); order is least recently seen first.
        self._buckets: OrderedDict[Hashable, tuple[float, float]] = OrderedDict()

    def allow(self, source: Hashable, now: float) -> bool:
        """Take one token from `source`'s bucket if it has one; say whether it had.

        `now` is in seconds on any monotonic clock. If it goes backwards (a caller mixing
        clocks), no tokens are added rather than the bucket being emptied or overfilled.
        """
        bucket = self._buckets.pop(source, None)
        if bucket is None:
            tokens, refilled_at = float(self.burst), now
        else:
            tokens, last = bucket
            refilled_at = max(now, last)
            tokens = min(float(self.burst), tokens + (refilled_at - last) * self.rate_per_s)
        allowed = tokens >= 1.0
        if allowed:
            tokens -= 1.0
        # Denied datagrams refresh recency too: a source that keeps sending stays throttled
        # instead of being evicted and coming back with a full bucket.
        self._buckets[source] = (tokens, refilled_at)
        while len(self._buckets) > self.max_sources:
            self._buckets.popitem(last=False)
        return allowed

    def forget(self, source: Hashable) -> None:
        """Drop `source`'s bucket, e.g. when a peer leaves the table."""
        self._buckets.pop(source, None)

    def __len__(self) -> int:
        """How many sources are being tracked (at most `max_sources`)."""
        return len(self._buckets)

    def __contains__(self, source: object) -> bool:
        return source in self._buckets
