"""Engine benchmarks (`nerts-p2p bench engine`). Measurements, not tests: medians of
repeated runs with their spread, since this machine is shared and noisy."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from contextlib import nullcontext

from nerts_p2p.game.bots import CASUAL, EXPERT, NOVICE, BotLevel
from nerts_p2p.game.deck import seat_seed
from nerts_p2p.game.engine import apply, omniscient_start
from nerts_p2p.game.errors import Rejection
from nerts_p2p.game.legal import legal_moves
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.simulate import simulate_round
from nerts_p2p.game.state import GameState
from tools.bench_baseline import BASELINE_COMMIT, baseline, current, rounds_per_second
from tools.progress import SILENT, ProgressLine


def summary(values: list[float]) -> dict[str, float]:
    """Median and spread of repeated measurements."""
    values = sorted(values)
    return {
        "median": statistics.median(values),
        "min": values[0],
        "max": values[-1],
        "runs": float(len(values)),
    }


def rate(
    run: Callable[[], int], repeats: int, clock: Callable[[], float] = time.perf_counter
) -> dict[str, float]:
    """Run `run` (which returns how many things it did) `repeats` times; rates per second
    of `clock` (wall time unless told; `time.process_time` for CPU time)."""
    rates = []
    for _ in range(repeats):
        start = clock()
        count = run()
        rates.append(count / (clock() - start))
    return summary(rates)


def engine_benchmarks(
    repeats: int = 7, seed: int = 1, *, compare: bool = True, progress: ProgressLine = SILENT
) -> dict[str, dict[str, float]]:
    """Moves applied, legal-move generations and whole 4-seat rounds per CPU second; with
    `compare`, the rounds also with the engine of `BASELINE_COMMIT` (before the bots' fast
    search), interleaved repeat by repeat, and the speed-up as the median of the per-repeat
    ratios. A repeat of rounds is `bench_baseline.ROUNDS` seeded rounds on each side."""
    rules = Rules(seats=4)
    seeds = [seat_seed(seed, 1, s) for s in range(4)]
    recorded = simulate_round(rules, seeds, [CASUAL] * 4, match_seed=seed, keep_log=True)
    start = omniscient_start(rules, seeds)
    moves = [move for _, move, ok in recorded.log if ok]
    states: list[GameState] = []
    state = start
    for move in moves:
        result = apply(state, move)
        assert not isinstance(result, Rejection)
        state = result
        states.append(state)

    def replay() -> int:
        s = start
        for move in moves:
            result = apply(s, move)
            if isinstance(result, Rejection):
                raise AssertionError(f"replayed move rejected: {result}")
            s = result
        return len(moves)

    def generate() -> int:
        for i, s in enumerate(states):
            legal_moves(s, i % 4)
        return len(states)

    # CPU time of this process, as for whole rounds: on a shared host, other processes'
    # load counts far less.
    progress.expect(2 + 2 * repeats)
    results = {"moves_applied_per_s": rate(replay, repeats, time.process_time)}
    progress.step("moves applied")
    results["legal_move_generations_per_s"] = rate(generate, repeats, time.process_time)
    progress.step("legal moves generated")
    # Whole rounds: this checkout and the old commit each in a child process of its own,
    # running the same script on the same seeded rounds, in turns of a few rounds.
    with current() as now_engine, baseline() if compare else nullcontext() as before:
        for level in (CASUAL, EXPERT):
            now: list[float] = []
            then: list[float] = []
            for _ in range(repeats):
                engines = [now_engine] if before is None else [now_engine, before]
                rates = rounds_per_second(engines, level.name, seed)
                now.append(rates[0])
                then.extend(rates[1:])
                progress.step(f"whole rounds, {level.name} bots")
            results[f"rounds_4_seat_{level.name}_per_s"] = summary(now)
            if then:
                results[f"rounds_4_seat_{level.name}_per_s_{BASELINE_COMMIT}"] = summary(then)
                results[f"speedup_4_seat_{level.name}_vs_{BASELINE_COMMIT}"] = summary(
                    [a / b for a, b in zip(now, then, strict=True)]
                )
    return results


def head_to_head(
    challenger: BotLevel, opponent: BotLevel, rounds: int, seats: int = 2
) -> dict[str, float]:
    """`challenger` at one seat against `opponent` at every other, over seeded rounds (the
    challenger's seat alternates between first and last). A round is won by the highest
    round score; the figures are shares of rounds and the mean score margin."""
    rules = Rules(seats=seats)
    wins = ties = 0
    margin = 0.0
    for i in range(rounds):
        seeds = [seat_seed(i, 1, s) for s in range(seats)]
        mine = 0 if i % 2 == 0 else seats - 1
        levels = [opponent] * seats
        levels[mine] = challenger
        result = simulate_round(rules, seeds, levels, match_seed=i)
        own = result.scores[mine].score
        best_other = max(s.score for s in result.scores if s.seat != mine)
        wins += own > best_other
        ties += own == best_other
        margin += own - best_other
    return {
        "win_rate": wins / rounds,
        "tie_rate": ties / rounds,
        "mean_margin": margin / rounds,
        "rounds": float(rounds),
    }


def bot_ladder(rounds: int = 300, progress: ProgressLine = SILENT) -> dict[str, dict[str, float]]:
    """Each level against the one below it, and the top against the bottom."""
    pairings = {
        "casual_vs_novice": (CASUAL, NOVICE, 2),
        "expert_vs_casual": (EXPERT, CASUAL, 2),
        "expert_vs_novice": (EXPERT, NOVICE, 2),
        "expert_vs_3_casual": (EXPERT, CASUAL, 4),
    }
    progress.expect(len(pairings))
    ladder = {}
    for name, (challenger, opponent, seats) in pairings.items():
        ladder[name] = head_to_head(challenger, opponent, rounds, seats)
        progress.step(name.replace("_", " "))
    return ladder
