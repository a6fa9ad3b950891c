from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol import TokenBucketLimiter


def _allowed(limiter: TokenBucketLimiter, source: str, now: float, times: int) -> int:
    return sum(limiter.allow(source, now) for _ in range(times))


def test_burst_then_refill_at_the_rate() -> None:
    limiter = TokenBucketLimiter(rate_per_s=2.0, burst=3, max_sources=10)
    assert _allowed(limiter, "a", 0.0, 5) == 3
    assert _allowed(limiter, "a", 0.25, 5) == 0  # half a token so far
    assert _allowed(limiter, "a", 0.5, 5) == 1
    assert _allowed(limiter, "a", 1.5, 5) == 2
    # A long silence refills only up to the burst, not beyond.
    assert _allowed(limiter, "a", 100.0, 10) == 3


def test_denied_attempts_do_not_cost_tokens() -> None:
    limiter = TokenBucketLimiter(rate_per_s=1.0, burst=1, max_sources=10)
    assert limiter.allow("a", 0.0)
    assert not limiter.allow("a", 0.5)
    assert not limiter.allow("a", 0.9)
    assert limiter.allow("a", 1.0)


def test_sources_have_separate_buckets() -> None:
    limiter = TokenBucketLimiter(rate_per_s=1.0, burst=2, max_sources=10)
    assert _allowed(limiter, "a", 0.0, 5) == 2
    assert _allowed(limiter, "b", 0.0, 5) == 2
    assert ("127.0.0.1", 4000) not in limiter
    assert limiter.allow(("127.0.0.1", 4000), 0.0)  # any hashable source works


def test_time_going_backwards_adds_nothing_and_is_not_counted_twice() -> None:
    limiter = TokenBucketLimiter(rate_per_s=1.0, burst=2, max_sources=10)
    assert _allowed(limiter, "a", 10.0, 2) == 2
    assert _allowed(limiter, "a", 5.0, 3) == 0
    # One second after the latest time seen: one token, not six.
    assert _allowed(limiter, "a", 11.0, 3) == 1


def test_memory_is_bounded_by_evicting_the_least_recently_seen() -> None:
    limiter = TokenBucketLimiter(rate_per_s=1.0, burst=1, max_sources=3)
    for source in ["a", "b", "c"]:
        limiter.allow(source, 0.0)
    limiter.allow("a", 0.1)  # "a" is now more recent than "b"
    limiter.allow("d", 0.2)
    assert len(limiter) == 3
    assert "b" not in limiter
    assert "a" in limiter
    assert "d" in limiter
    for index in range(1000):
        limiter.allow(f"spoofed-{index}", 1.0)
    assert len(limiter) == 3


def test_an_evicted_source_comes_back_with_a_full_bucket() -> None:
    limiter = TokenBucketLimiter(rate_per_s=1.0, burst=2, max_sources=1)
    assert _allowed(limiter, "a", 0.0, 2) == 2
    assert not limiter.allow("a", 0.0)
    limiter.allow("b", 0.0)
    assert _allowed(limiter, "a", 0.0, 3) == 2


def test_forget_drops_a_source() -> None:
    limiter = TokenBucketLimiter(rate_per_s=1.0, burst=1, max_sources=5)
    limiter.allow("a", 0.0)
    limiter.forget("a")
    limiter.forget("never seen")
    assert "a" not in limiter
    assert len(limiter) == 0


@pytest.mark.parametrize(
    ("rate", "burst", "max_sources"),
    [(0.0, 1, 1), (-1.0, 1, 1), (float("nan"), 1, 1), (1.0, 0, 1), (1.0, 1, 0)],
)
def test_useless_settings_are_refused(rate: float, burst: int, max_sources: int) -> None:
    with pytest.raises(ValueError, match=r"\S"):
        TokenBucketLimiter(rate, burst, max_sources)


EVENTS = st.lists(
    st.tuples(st.sampled_from("abcdef"), st.floats(0.0, 2.0, allow_nan=False)),
    max_size=200,
)


@given(EVENTS, st.integers(1, 4))
def test_tracked_sources_never_exceed_the_bound(
    events: list[tuple[str, float]], max_sources: int
) -> None:
    limiter = TokenBucketLimiter(rate_per_s=3.0, burst=2, max_sources=max_sources)
    now = 0.0
    for source, step in events:
        now += step
        limiter.allow(source, now)
        assert len(limiter) <= max_sources


@given(EVENTS)
def test_no_source_ever_beats_burst_plus_rate_times_elapsed(
    events: list[tuple[str, float]],
) -> None:
    rate, burst = 3.0, 2
    # Room for every source: eviction resets a bucket by design, so the bound assumes none.
    limiter = TokenBucketLimiter(rate, burst, max_sources=6)
    now = 0.0
    allowed_at: dict[str, list[float]] = {}
    for source, step in events:
        now += step
        if limiter.allow(source, now):
            allowed_at.setdefault(source, []).append(now)
    for times in allowed_at.values():
        for first in range(len(times)):
            for last in range(first, len(times)):
                elapsed = times[last] - times[first]
                assert last - first + 1 <= burst + rate * elapsed + 1e-9
