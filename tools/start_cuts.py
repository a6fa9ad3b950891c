"""A campaign of cuts around the next round's START (PROTOCOL.md 13.3).

Each run is a `PeerMesh` table of 3 to 5 players that plays round 1; the moment the host
signs round 2's START, a group of players (the host's side or the other one, any size) is
cut off from the rest, after a small offset and for a while (past the silence bound or
not). Every run must end with round 2 final on every peer, the same result everywhere and
no divergence; a stall (`MeshStalledError`) or anything else is a finding, printed with
what reproduces it. Not part of `make test` (a run plays two rounds: seconds each).

    .venv/bin/python -m tools.start_cuts --seconds 600 [--seed S] [--json]

Exit 0 if every run passed, 1 if any did not, 2 for bad usage.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from nerts_p2p.game.rules import Rules
from protocol.messages import Op
from tools.mesh import MeshIdleError, MeshStalledError, PeerMesh

OFFSETS = (0.0, 0.002, 0.01, 0.03, 0.08, 0.2)  # seconds after the START is signed
LENGTHS = (4.0, 11.0, 15.0, 25.0)  # below and past the 10 s silence bound


@dataclass(frozen=True)
class Cut:
    players: int
    seed: int
    group: tuple[int, ...]
    offset: float
    length: float


def draw(rng: random.Random) -> Cut:
    players = rng.choice((3, 4, 4, 5))
    group = tuple(sorted(rng.sample(range(players), rng.randint(1, players - 1))))
    return Cut(players, rng.randint(1, 10**6), group, rng.choice(OFFSETS), rng.choice(LENGTHS))


def cut_at_next_start(
    mesh: PeerMesh, group: frozenset[int], *, offset: float = 0.0, length: float
) -> None:
    """Cut `group` off from the other peers `offset` seconds after the host signs round 2's
    START (the moment it is signed, before it goes out, with no offset), for `length`."""
    host = mesh.replicas[0]
    sign_start = host.start

    def start() -> Op:
        op = sign_start()
        if op.epoch == 2 and not mesh.faults.partitions:
            begin = mesh.now + offset
            partition = ((begin, begin + length, group),)
            mesh.faults = dataclasses.replace(mesh.faults, partitions=partition)
        return op

    host.start = start  # type: ignore[method-assign]


def play(cut: Cut) -> str | None:
    """The finding of one run, in words, or None if it passed."""
    mesh = PeerMesh(players=cut.players, rules=Rules(seats=cut.players, target=500), seed=cut.seed)
    cut_at_next_start(mesh, frozenset(cut.group), offset=cut.offset, length=cut.length)
    try:
        mesh.run(until=1500, rounds=2)
    except MeshStalledError as exc:
        return f"stalled: {exc}"
    except MeshIdleError as exc:
        return f"stuck: {exc}"
    if any(2 not in finals for finals in mesh.finals):
        return f"round 2 not final everywhere: {[sorted(f) for f in mesh.finals]}"
    if len({(f[2].scores, f[2].totals) for f in mesh.finals}) != 1:
        return "round 2's results differ between peers"
    if mesh.divergences():
        return f"{mesh.divergences()} divergences"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.start_cuts", description=__doc__)
    parser.add_argument("--seconds", type=float, default=600.0, help="how long to run")
    parser.add_argument("--seed", type=int, default=1, help="which cuts are drawn")
    parser.add_argument("--json", action="store_true", help="one JSON object at the end")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    deadline = time.monotonic() + args.seconds
    runs, findings = 0, []
    try:
        while time.monotonic() < deadline:
            cut = draw(rng)
            finding = play(cut)
            runs += 1
            if finding is not None:
                findings.append({**dataclasses.asdict(cut), "finding": finding})
            if not args.json:
                print(f"{'FINDING' if finding else 'ok'} {cut}{': ' + finding if finding else ''}")
        summary = {"runs": runs, "findings": findings}
        print(json.dumps(summary) if args.json else f"{runs} runs, {len(findings)} findings")
    except BrokenPipeError:
        sys.stderr.close()  # a closed pipe (| head) ends the campaign quietly
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
