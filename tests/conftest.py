"""Hypothesis profiles: `HYPOTHESIS_PROFILE=long make test` runs the properties that do not
fix their own example count 1000 times each (a campaign, not part of the ten-minute run)."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("long", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
