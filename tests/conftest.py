"""Hypothesis profiles, and which tests share one worker when the suite runs on two.

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
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("project", deadline=None)
settings.register_profile("long", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "project"))

LONG_FACTOR = 10
LONG_MINIMUM = 1000


#: Tests that open real sockets, run mDNS, start processes or a display. `make test` runs the
#: suite on two workers (pytest-xdist, `--dist loadgroup`); these all go to one of them, one
#: at a time as before: two tables announced at once on the suite's loopback would show up in
#: each other's `list`, and two displays or LANs would fight over names. The other worker
#: takes the simulated tests, which share nothing.
REAL_IO = ("net", "client", "fuzz", "test_cli.py", "test_network_rule.py")
_TESTS = Path(__file__).resolve().parent


def _uses_real_io(item: pytest.Item) -> bool:
    try:
        parts = Path(str(item.path)).resolve().relative_to(_TESTS).parts
    except ValueError:
        return False
    return bool(parts) and parts[0] in REAL_IO


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _uses_real_io(item):
            item.add_marker(pytest.mark.xdist_group("real_io"))
    _raise_property_counts(items)


def _raise_property_counts(items: list[pytest.Item]) -> None:
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
