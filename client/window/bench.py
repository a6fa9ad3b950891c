"""`nerts-p2p bench client`: frame times of the table screen during play with bots.

A window (the dummy SDL driver unless a display is set) at 1280x800 shows a practice
table, 4 and then 8 seats, bots playing the other seats. Time is stepped 1/60 s per frame,
so the bots play at their real pace relative to the frames, and each frame's work is timed:
`draw` is drawing the table, `frame` is everything a frame does (input, the table session
running to now with its replicas, drawing, flip). Percentiles per run, medians over runs.
"""

from __future__ import annotations

import os
import statistics
import time

FRAMES = 900  # 15 s of play per run
WARMUP = 120


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure_table(seats: int, *, seed: int, frames: int = FRAMES) -> dict[str, float]:
    """One run: p50 and p99 (milliseconds) of the draw and of the whole frame."""
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    import pygame

    from .app import open_window
    from .settings import Settings
    from .table_screen import TableScreen

    app = open_window(
        practice_seats=seats,
        level="expert",
        seed=seed,
        size=(1280, 800),
        settings=Settings(sound=False),
    )
    screen = app.screen
    assert isinstance(screen, TableScreen)
    draw: list[float] = []
    whole: list[float] = []
    now = 0.0
    try:
        for n in range(frames + WARMUP):
            now += 1 / 60
            t0 = time.perf_counter()
            pygame.event.pump()
            screen.update(now)
            t1 = time.perf_counter()
            screen.draw(app.surface, now)
            t2 = time.perf_counter()
            pygame.display.flip()
            t3 = time.perf_counter()
            if n >= WARMUP:
                draw.append((t2 - t1) * 1000)
                whole.append((t3 - t0) * 1000)
    finally:
        app.close()
    return {
        "draw_p50": _percentile(draw, 0.5),
        "draw_p99": _percentile(draw, 0.99),
        "frame_p50": _percentile(whole, 0.5),
        "frame_p99": _percentile(whole, 0.99),
    }


def client_benchmarks(*, repeats: int = 3) -> dict[str, dict[str, float]]:
    results: dict[str, dict[str, float]] = {}
    for seats in (4, 8):
        runs = [measure_table(seats, seed=100 + r) for r in range(repeats)]
        for key in ("draw_p50", "draw_p99", "frame_p50", "frame_p99"):
            values = [run[key] for run in runs]
            results[f"{seats} seats {key.replace('_', ' ')} (ms)"] = {
                "median": statistics.median(values),
                "min": min(values),
                "max": max(values),
                "runs": float(len(values)),
            }
    return results
