"""`nerts-p2p bench client`: frame times of the table screen during play with bots.

A window (the dummy SDL driver unless a display is set) at 1280x800 shows a practice
table, 4 and then 8 seats, bots playing the other seats. Time is stepped 1/60 s per frame,
so the bots play at their real pace relative to the frames, and each frame's work is timed:

- `draw`: drawing the table;
- `window`: what the window itself does in a frame (input, reading the view, layout and card
  places, drawing, flip): the frame of a window at a network table, where the other seats
  are other machines;
- `session`: the practice table running to now, which in this one process is every seat's
  replica (signing, verifying and folding every op 8 times over) and the bots' thinking;
- `frame`: the two together, what a practice frame costs.

Each is measured twice: as CPU time of this thread (the work itself, which other processes
on a busy host do not inflate) and as wall-clock time (what this host delivered, preemption
included). Percentiles per run, medians over runs.
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
    kinds = ("draw", "window", "session", "frame")
    samples: dict[str, list[float]] = {f"{k} {c}": [] for k in kinds for c in ("cpu", "wall")}
    session = screen.session
    advance = session.advance
    spent = [0.0, 0.0]  # the session's cpu and wall seconds in this frame

    def timed_advance(now: float) -> None:
        w, c = time.perf_counter(), time.thread_time()
        advance(now)
        spent[0] += time.thread_time() - c
        spent[1] += time.perf_counter() - w

    setattr(session, "advance", timed_advance)  # noqa: B010 - a method replaced for timing
    now = 0.0
    try:
        for n in range(frames + WARMUP):
            now += 1 / 60
            spent[0] = spent[1] = 0.0
            w0, c0 = time.perf_counter(), time.thread_time()
            pygame.event.pump()
            screen.update(now)
            w1, c1 = time.perf_counter(), time.thread_time()
            screen.draw(app.surface, now)
            w2, c2 = time.perf_counter(), time.thread_time()
            pygame.display.flip()
            w3, c3 = time.perf_counter(), time.thread_time()
            if n >= WARMUP:
                samples["draw cpu"].append((c2 - c1) * 1000)
                samples["draw wall"].append((w2 - w1) * 1000)
                samples["frame cpu"].append((c3 - c0) * 1000)
                samples["frame wall"].append((w3 - w0) * 1000)
                samples["session cpu"].append(spent[0] * 1000)
                samples["session wall"].append(spent[1] * 1000)
                samples["window cpu"].append((c3 - c0 - spent[0]) * 1000)
                samples["window wall"].append((w3 - w0 - spent[1]) * 1000)
    finally:
        app.close()
    out = {}
    for name, values in samples.items():
        out[f"{name} p50"] = _percentile(values, 0.5)
        out[f"{name} p99"] = _percentile(values, 0.99)
    return out


def client_benchmarks(*, repeats: int = 3) -> dict[str, dict[str, float]]:
    if repeats < 1:
        raise ValueError(f"--repeats must be at least 1, got {repeats}")
    results: dict[str, dict[str, float]] = {}
    for seats in (4, 8):
        runs = [measure_table(seats, seed=100 + r) for r in range(repeats)]
        for key in runs[0]:
            values = [run[key] for run in runs]
            results[f"{seats} seats {key} (ms)"] = {
                "median": statistics.median(values),
                "min": min(values),
                "max": max(values),
                "runs": float(len(values)),
            }
    return results
