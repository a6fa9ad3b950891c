"""Hypothesis profiles.

- `project` (the default): hypothesis' own example counts, but no per-example deadline. A
  deadline is a timing check, and on a shared two-core machine it fails for reasons that have
  nothing to do with the code (speed is measured by `nerts-p2p bench`, never by tests).
- `long` (`HYPOTHESIS_PROFILE=long`): the properties that do not fix their own example count
  run 1000 times each. A campaign, not part of the ten-minute `make test`.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("project", deadline=None)
settings.register_profile("long", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "project"))
