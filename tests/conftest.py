"""Hypothesis profiles.

- `project` (the default): hypothesis' own example counts, but no per-example deadline. A
  deadline is a timing check, and on a shared two-core machine it fails for reasons that have
  nothing to do with the code (speed is measured by `nerts-p2p bench`, never by tests).
- `long` (`HYPOTHESIS_PROFILE=long`): a campaign, not part of the ten-minute `make test`.
  Every property runs at least 1000 times, or ten times its own count where a test fixes its
  own (`@settings(max_examples=...)`), whichever is more: a property that fixes a small count
  because each example is slow is the one a campaign most needs to run longer.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

settings.register_profile("project", deadline=None)
settings.register_profile("long", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "project"))

LONG_FACTOR = 10
LONG_MINIMUM = 1000


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under the long profile, raise every property's example count, own counts included."""
    if settings().max_examples < LONG_MINIMUM:
        return  # not a campaign
    for item in items:
        test = getattr(item, "obj", None)
        if test is None or not hasattr(test, "hypothesis"):
            continue
        own: settings | None = getattr(test, "_hypothesis_internal_use_settings", None)
        count = own.max_examples if own is not None else settings().max_examples
        test._hypothesis_internal_use_settings = settings(
            own, max_examples=max(count * LONG_FACTOR, LONG_MINIMUM), deadline=None
        )
