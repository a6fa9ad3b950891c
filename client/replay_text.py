"""`nerts-p2p replay FILE`: verify a saved match and print its rounds as text.

Exit status: 0 when every op verified and every round's audit is clean; 1 when something
did not verify, a round could not be audited, or the audit named a cheater; a file that is
not a replay, or is damaged, gets one plain line and status 1. The last round of an
interrupted match has no end to audit yet: it is said, and is no finding.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from nerts_p2p.net.records import network_match_record
from nerts_p2p.net.replay import ReplayResult, load_replay
from nerts_p2p.net.store import StoreError
from protocol.messages import quoted_name

from .table_text import seats_text, step_text


def print_replay(path: Path, *, as_json: bool) -> int:
    try:
        result = load_replay(path)
    except StoreError as exc:
        print(f"nerts-p2p: {exc}", file=sys.stderr)
        return 1
    try:
        return _print(result, as_json=as_json)
    except BrokenPipeError:
        # `| head`: the reader has gone; end quietly (and keep Python's exit flush quiet too).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _print(result: ReplayResult, *, as_json: bool) -> int:
    replica = result.replica
    findings = 0
    if not as_json:
        print(f"table {quoted_name(result.name)} ({result.table.hex()}): {result.ops} signed ops")
        if result.verified:
            print("signatures, chains and clocks: all verified")
    if not result.verified:
        findings += 1
        reasons = ", ".join(f"{n} {reason}" for reason, n in sorted(result.refused.items()))
        print(f"nerts-p2p: ops that do not verify: {reasons}", file=sys.stderr)
    finals = {f.round: f for f in result.finals}
    for number, rnd in sorted(replica.rounds.items()):
        final = finals.get(number)
        if as_json:
            continue
        print(f"\nround {number}: {seats_text(replica, rnd)}")
        for step in rnd.steps:
            line = step_text(step)
            if line is not None:
                print(line)
        if final is None:
            if number == max(replica.rounds):
                # The match was interrupted in this round (saved as it stood): nothing wrong
                # with the file, there is just no end to audit yet.
                print(f"round {number} was interrupted before it ended: nothing to audit")
            else:
                findings += 1  # later rounds began: this one should have ended
                print(f"round {number} never became final: it cannot be audited")
            continue
        state = rnd.states[-1]
        called = "" if state.called_by is None else f" by seat {state.called_by}"
        print(f"ended: {state.ended_by}{called}")
        for score in final.scores:
            departed = score.seat in final.departed
            gone = "  departed: voted out as silent, scored as it lay" if departed else ""
            print(
                f"  seat {score.seat}: {score.score:+d}  (total {final.totals[score.seat]}){gone}"
            )
        if final.cheaters:
            findings += 1
            print(f"audit: seats {sorted(final.cheaters)} do not match their commitments")
        else:
            print("audit: every reveal matches its seed")
    if as_json:
        for record in result.records():
            print(json.dumps(record, separators=(",", ":")))
    ordered = [finals[n] for n in sorted(finals)]
    match = network_match_record(
        ordered, target_reached=bool(ordered) and ordered[-1].match_winner is not None
    )
    if as_json:
        print(json.dumps(match, separators=(",", ":")))
    else:
        winner = match["match_winner"]
        shown = "none" if winner is None else f"seat {winner}"
        print(f"\nmatch: totals {match['totals']}, winner {shown}")
    return 1 if findings else 0
