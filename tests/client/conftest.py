"""Fixtures of the window's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pygame
import pytest


@pytest.fixture
def headless(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """The window on SDL's dummy drivers (no screen, no sound), its settings and data in
    this test's own folders, never the user's."""
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")
    monkeypatch.setenv("NERTS_P2P_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("NERTS_P2P_DATA_DIR", str(tmp_path / "data"))
    yield
    pygame.quit()
