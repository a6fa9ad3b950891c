"""A network match's signed log (`nerts_p2p.net.replay`, `.nrp`) as a window replay.

The log is verified exactly as `nerts-p2p replay` does it (every signature, chain and
Lamport stamp through a fresh spectator's replica, each round audited from its revealed
seeds); the rounds that replica folded become a `Replay` the replay screen plays back. A
signed log has no clock (its order is Lamport's), so its moves are played back at an even
pace, `MOVE_PACE` seconds apart at speed 1.
"""

from __future__ import annotations

from pathlib import Path

from nerts_p2p.net.replay import load_replay as load_signed_log
from nerts_p2p.net.store import StoreError
from nerts_p2p.table.replica import TableReplica

from .recorder import folded_round
from .replay_file import Replay, ReplayError
from .replica_view import seat_names

#: Seconds between two moves of a signed log played back at speed 1.
MOVE_PACE = 0.35
#: The file name ending of a signed log.
SUFFIX = ".nrp"


def replay_from_replica(replica: TableReplica) -> Replay:
    """Every round the replica folded, each with its own seating and names."""
    rounds = []
    for number in sorted(replica.rounds):
        rnd = replica.rounds[number]
        names = seat_names(replica, rnd, rnd.rules.seats)
        rounds.append(folded_round(number, rnd, lambda _step, index: index * MOVE_PACE, names))
    if not rounds:
        raise ReplayError("the match has no round to play back")
    first = rounds[0]
    assert first.seated is not None
    assert first.names is not None
    return Replay(first.seated, first.names, tuple(rounds))


def load_signed_replay(path: Path) -> Replay:
    """A `.nrp` file verified and turned into a `Replay`; `ReplayError` says in plain words
    what is wrong with a file that is not one, is damaged, or holds a forged op."""
    try:
        result = load_signed_log(path)
    except StoreError as exc:
        raise ReplayError(str(exc)) from exc
    forged = {reason: n for reason, n in result.refused.items() if reason != "missing_deps"}
    if forged:
        said = ", ".join(f"{n} {reason}" for reason, n in sorted(forged.items()))
        raise ReplayError(f"{path.name} does not verify: ops refused ({said})")
    return replay_from_replica(result.replica)
