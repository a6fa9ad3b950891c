"""Where a move's latency goes: the move latency round of `nerts-p2p bench net`, with each
player process traced stage by stage.

    python3 tools/netns_run.py -- .venv/bin/python -m tools.bench_net_trace [--rounds N]
        [--realtime] [--stages] [--profile FILE] [--untraced]

`--realtime` runs the players (and the floor's receiver) at real-time priority (as root):
the other work on a busy host out of the way. `--stages` times the parts of a receive and of
our own play; `--untraced` gives only the benchmark's own figures for each round, with its
six slowest folds and when in the round they came.

Not part of `bench net` itself: tracing costs a little (a receive with the kernel's arrival
time, a trio instrument, a note around each piece of work), so the benchmark's own figures are
taken untraced. Inside `tools/netns_run.py`, like the benchmark.

For every MOVE folded at another process, on the machine's monotonic clock:

- at the author: signing the op, folding it there (until its play returns);
- played -> on the receiver's socket: the author's send, and the loopback (the kernel's
  receive timestamp, `SO_TIMESTAMPNS`), for each receiver by the order they got it; and the
  same from signing (the sends one after another, before the author's own fold);
- on the socket -> read by the node: split into the receiver being busy with work of its own
  (its bot thinking, another datagram, a tick, its own move) and the receiver being asleep in
  `epoll_wait` and waking: the kernel waking it and the CPU it waits for (to its return from
  `epoll_wait`), then trio's run loop reaching the receive task;
- read -> folded: the node's step to the replica, then the replica's receive (gate,
  delivery, fold, the replica's bookkeeping).
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import statistics
import sys
from collections import defaultdict
from typing import Any

from tools.bench_net import _floor, _percentile, _run_players, _woken_floor


def _p(values: list[float], q: float) -> float:
    return _percentile(values, q) * 1000 if values else float("nan")


def analyse(results: list[dict[str, Any]]) -> dict[str, Any]:
    authored = {(a, q): signing for r in results for a, q, signing, _ in r["authored"]}
    played = {(a, q): at for r in results for a, q, _, at in r["authored"]}
    stages: dict[str, list[float]] = defaultdict(list)
    busy_kinds: dict[str, float] = defaultdict(float)
    moves = 0
    for r in results:
        trace = r["trace"]
        waits = trace["io_waits"]  # [[start, end], ...] in order
        spans = trace["spans"]  # [[kind, start, end], ...]
        wait_ends = [end for _, end in waits]
        for a, q, done, _spent, kernel, user, start, own in trace["moves"]:
            if (a, q) not in authored or not own:
                continue
            moves += 1
            t0 = authored[(a, q)]
            stages["total"].append(done - t0)
            stages["author: signed and folded there"].append(played[(a, q)] - t0)
            stages["played -> on the socket"].append(kernel - played[(a, q)])
            stages["on the socket -> read"].append(user - kernel)
            stages["node: read -> receive"].append(start - user)
            stages["receive: gate, delivery, fold"].append(done - start)
            # Was the process asleep in epoll_wait when the datagram arrived?
            i = bisect.bisect_left(wait_ends, kernel)
            asleep = i < len(waits) and waits[i][0] <= kernel <= waits[i][1] <= user
            if asleep:
                woke = waits[i][1]
                stages["asleep: to return from epoll_wait"].append(woke - kernel)
                stages["asleep: trio to the receive task"].append(user - woke)
                stages["busy: own work first"].append(0.0)
            else:
                stages["busy: own work first"].append(user - kernel)
                for kind, s, e in spans:
                    overlap = min(e, user) - max(s, kernel)
                    if overlap > 0:
                        busy_kinds[kind] += overlap
            stages["asleep (share)"].append(1.0 if asleep else 0.0)
    # The same move reaches its receivers one after another (one send each): by rank.
    arrivals: dict[tuple[str, int], list[float]] = defaultdict(list)
    for r in results:
        for a, q, _, _, kernel, _, _, own in r["trace"]["moves"]:
            if own and (a, q) in authored:
                arrivals[(a, q)].append(kernel)
    for (a, q), times in arrivals.items():
        for rank, value in enumerate(sorted(times)):
            stages[f"played -> on the socket, receiver {rank + 1}"].append(value - played[(a, q)])
            # from signing: the author's sends, one after another, without its fold after
            stages[f"signing -> on the socket, receiver {rank + 1}"].append(
                value - authored[(a, q)]
            )
    out: dict[str, Any] = {"moves": moves}
    for name, values in stages.items():
        if name == "asleep (share)":
            out[name] = round(statistics.fmean(values), 3)
        else:
            out[name] = {
                "p50": round(_p(values, 0.5), 3),
                "p90": round(_p(values, 0.9), 3),
                "p99": round(_p(values, 0.99), 3),
                "mean": round(statistics.fmean(values) * 1000, 3),
            }
    total_busy = sum(busy_kinds.values()) or 1.0
    out["busy time by kind (share)"] = {
        k: round(v / total_busy, 3) for k, v in sorted(busy_kinds.items(), key=lambda kv: -kv[1])
    }
    spans_all: dict[str, list[float]] = defaultdict(list)
    for r in results:
        for kind, s, e in r["trace"]["spans"]:
            spans_all[kind].append(e - s)
    out["work spans (ms: count, p50, p99, total per process per s)"] = {
        kind: [
            len(v),
            round(_p(v, 0.5), 3),
            round(_p(v, 0.99), 3),
            round(sum(v) * 1000 / sum(r["cpu_s"][0][1] for r in results), 2),
        ]
        for kind, v in sorted(spans_all.items())
    }
    parts: dict[str, list[float]] = defaultdict(list)
    for r in results:
        for stages_of_one in r["trace"]["stages"]:
            for name in set(stages_of_one) | {n for d in r["trace"]["stages"] for n in d}:
                parts[name].append(stages_of_one.get(name, 0.0))
    if parts:
        out["receive of a move by part (ms: p50, mean)"] = {
            name: [round(_p(v, 0.5), 3), round(statistics.fmean(v) * 1000, 3)]
            for name, v in sorted(parts.items())
        }
    ours: dict[str, list[float]] = defaultdict(list)
    for r in results:
        names = {n for d in r["trace"].get("author stages", []) for n in d}
        for stages_of_one in r["trace"].get("author stages", []):
            for name in names:
                ours[name].append(stages_of_one.get(name, 0.0))
    if ours:
        out["author's play of a move by part, from signing (ms: p50, mean)"] = {
            name: [round(_p(v, 0.5), 3), round(statistics.fmean(v) * 1000, 3)]
            for name, v in sorted(ours.items())
        }
    out["cpu share per process"] = [round(r["cpu_s"][0][0] / r["cpu_s"][0][1], 3) for r in results]
    return out


def untraced(seed: int, realtime: bool) -> dict[str, Any]:
    """One round as `bench net` times it (optionally at real-time priority): p50 and p99
    from signing, both floors and the ratios."""
    results = _run_players(seed, 4, ["--realtime"] if realtime else [])
    signed = {(a, q): signing for r in results for a, q, signing, _ in r["authored"]}
    folds = [
        (t - signed[(a, q)], signed[(a, q)]) for r in results for a, q, t, _ in r["folded"]
        if (a, q) in signed
    ]  # fmt: skip
    latencies = [latency for latency, _ in folds]
    # When in the round the slowest folds came: bunched at its start, they wait for
    # something the round's first moves need (the tail of 12-02 was the last joiner's
    # address, PROTOCOL.md N.2); spread over the round, for a CPU.
    first = min(signed.values())
    slowest = [
        [round(latency * 1000, 2), round(at - first, 3)] for latency, at in sorted(folds)[-6:][::-1]
    ]
    floor = statistics.median(_woken_floor(realtime=realtime)) * 1000
    one_process = statistics.median(_floor()) * 1000
    p50 = _p(latencies, 0.5)
    return {
        "seed": seed,
        "p50 (ms)": round(p50, 3),
        "p99 (ms)": round(_p(latencies, 0.99), 3),
        "floor (ms)": round(floor, 3),
        "p50 / floor (x)": round(p50 / floor, 2),
        "one-process floor (ms)": round(one_process, 3),
        "p50 / one-process floor (x)": round(p50 / one_process, 2),
        "load average": round(os.getloadavg()[0], 2),
        "slowest folds (ms, s into the round)": slowest,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", help="also profile every receive into FILE.<index>")
    parser.add_argument(
        "--realtime",
        action="store_true",
        help="players at real-time priority (root): other work on this host out of the way",
    )
    parser.add_argument("--stages", action="store_true", help="time the parts of a receive")
    parser.add_argument(
        "--untraced",
        action="store_true",
        help="no tracing: only the benchmark's own latency figures (with --realtime: a quiet "
        "host's scheduling on a busy one)",
    )
    args = parser.parse_args()
    if args.untraced:
        for seed in range(args.seed, args.seed + args.rounds):
            json.dump(untraced(seed, args.realtime), sys.stdout)
            print()
        return
    extra = ["--trace"] + (["--profile", args.profile] if args.profile else [])
    extra += ["--realtime"] if args.realtime else []
    extra += ["--stages"] if args.stages else []
    for seed in range(args.seed, args.seed + args.rounds):
        results = _run_players(seed, 4, extra)
        report = analyse(results)
        floor = statistics.median(_woken_floor(realtime=args.realtime)) * 1000
        report["floor: sign, UDP to a sleeping process, verify, p50 (ms)"] = round(floor, 3)
        report["one-process floor p50 (ms)"] = round(statistics.median(_floor()) * 1000, 3)
        report["total p50 / floor (x)"] = round(report["total"]["p50"] / floor, 2)
        report["load average"] = [round(x, 2) for x in os.getloadavg()]
        json.dump(report, sys.stdout, indent=1)
        print()


if __name__ == "__main__":
    main()
