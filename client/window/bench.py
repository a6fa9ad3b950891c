"""`nerts-p2p bench client`: frame times of the practice table during play with bots.

A window (the dummy SDL driver unless a display is set) at 1280x800 opens a practice table
exactly as `make play` does, 4 and then 8 seats: our node in the window's process, the
bots' nodes in their own process (`bot_house`), talking over UDP on 127.0.0.1. The window's
frame loop runs at 60 Hz in real time (trio), as `run_window` runs it, and only frames
while a round is being played count. Per frame:

- `draw`: drawing the table;
- `window`: what the frame itself does (input, the session's `advance`, the view, layout
  and card places, drawing, flip);
- `frame`: everything the window's thread does from one frame's start to the next: the
  window's part plus, between frames, our node taking in every datagram of the table
  (verifying and folding every op once, in our replica) and sending ours. This is what a
  player's process spends per frame with the other seats in play;
- `table moves per s`: every seat's moves our replica folded, per second of those frames
  (the play the frames carried);
- `bots`: the bots' process's CPU (all its seats' replicas and thinking) per frame on
  average, from its resource usage: work the machine does beside the window, said so the
  figures are honest, not part of any frame.

`cpu` is the CPU time of the window's thread (the work itself, which other processes on a
busy host do not inflate); `wall` is what this host delivered, preemption included.
Percentiles per run, medians over runs.
"""

from __future__ import annotations

import os
import resource
import statistics
import time

from nerts_p2p.game.errors import NertsError
from tools.progress import SILENT, ProgressLine

FRAMES = 900  # 15 s of play per run
FPS = 60
#: Give up on a run that has not seen its frames after this long (a broken table).
RUN_LIMIT = 120.0


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure_table(seats: int, *, seed: int, frames: int = FRAMES) -> dict[str, float]:
    """One run: p50 and p99 (milliseconds) of each measure, and the bots' CPU per frame."""
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    import trio

    from .app import open_window
    from .netsession import NetworkTable
    from .session import PLAYING
    from .settings import Settings
    from .table_screen import TableScreen

    app = open_window(
        practice_seats=seats,
        level="expert",
        seed=seed,
        size=(1280, 800),
        settings=Settings(sound=False),
    )
    app.data_dir = None
    kinds = ("draw", "window", "frame")
    samples: dict[str, list[float]] = {f"{k} {c}": [] for k in kinds for c in ("cpu", "wall")}
    children_before = _children_cpu()
    started = time.perf_counter()
    played: list[NetworkTable] = []

    async def run() -> None:
        import pygame

        period = 1.0 / FPS
        async with trio.open_nursery() as nursery:
            app.nursery = nursery
            app.started()
            deadline = trio.current_time() + RUN_LIMIT
            next_frame = trio.current_time()
            last: tuple[float, float, bool] | None = None  # the last frame's start, and
            # whether it counts
            while len(samples["frame cpu"]) < frames and trio.current_time() < deadline:
                w0, c0 = time.perf_counter(), time.thread_time()
                if last is not None and last[2]:
                    samples["frame cpu"].append((c0 - last[1]) * 1000)
                    samples["frame wall"].append((w0 - last[0]) * 1000)
                screen = app.screen
                pygame.event.pump()
                screen.update(trio.current_time())
                w1, c1 = time.perf_counter(), time.thread_time()
                screen.draw(app.surface, trio.current_time())
                w2, c2 = time.perf_counter(), time.thread_time()
                pygame.display.flip()
                w3, c3 = time.perf_counter(), time.thread_time()
                counts = (
                    isinstance(screen, TableScreen)
                    and isinstance(screen.session, NetworkTable)
                    and screen.view.phase == PLAYING
                )
                if counts and not played:
                    assert isinstance(screen, TableScreen)
                    assert isinstance(screen.session, NetworkTable)
                    played.append(screen.session)
                if counts:
                    samples["draw cpu"].append((c2 - c1) * 1000)
                    samples["draw wall"].append((w2 - w1) * 1000)
                    samples["window cpu"].append((c3 - c0) * 1000)
                    samples["window wall"].append((w3 - w0) * 1000)
                elif isinstance(screen, TableScreen) and screen.round_end is not None:
                    screen.session.next_round()  # the player goes on to the next round
                last = (w0, c0, counts)
                next_frame = max(next_frame + period, trio.current_time())
                await trio.sleep_until(next_frame)
            app.close()  # the table is left: the bots' process says goodbye and ends
            with trio.CancelScope(shield=True):
                await app.wind_down(10.0)
            nursery.cancel_scope.cancel()

    try:
        trio.run(run)
    finally:
        import pygame

        pygame.quit()
    if len(samples["frame cpu"]) < frames:
        raise NertsError(
            f"the practice table played only {len(samples['frame cpu'])} frames in "
            f"{RUN_LIMIT:g} s (its bots did not seat?)"
        )
    out = {}
    for name, values in samples.items():
        out[f"{name} p50"] = _percentile(values, 0.5)
        out[f"{name} p99"] = _percentile(values, 0.99)
    # How much play the frames carried: every seat's moves our replica folded, per second
    # of counted frames (a starved bots' process would show here as fewer moves).
    moves = sum(
        1
        for rnd in played[0].replica.rounds.values()
        for step in rnd.steps
        if step.move is not None
    )
    out["table moves per s"] = moves / (len(samples["window cpu"]) / FPS)
    # The bots' process has ended (wind_down waited for it): its whole CPU over the run,
    # per 1/60 s of it.
    periods = (time.perf_counter() - started) * FPS
    out["bots cpu per frame"] = (_children_cpu() - children_before) * 1000 / periods
    return out


def client_benchmarks(
    *, repeats: int = 3, progress: ProgressLine = SILENT
) -> dict[str, dict[str, float]]:
    if repeats < 1:
        raise ValueError(f"--repeats must be at least 1, got {repeats}")
    results: dict[str, dict[str, float]] = {}
    progress.expect(2 * repeats)
    for seats in (4, 8):
        runs = []
        for r in range(repeats):
            runs.append(measure_table(seats, seed=100 + r))
            progress.step(f"{seats} seats: table {r + 1} of {repeats}")
        for key in runs[0]:
            values = [run[key] for run in runs]
            unit = "" if key.endswith("per s") else " (ms)"
            results[f"{seats} seats {key}{unit}"] = {
                "median": statistics.median(values),
                "min": min(values),
                "max": max(values),
                "runs": float(len(values)),
            }
    return results
