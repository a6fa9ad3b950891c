"""A round as text, one line per move: what `nerts-p2p replay` prints of a saved match and
a spectator prints live (`nerts-p2p spectate` without --json).

Separate because both read the same fold (`ReplicatedRound.steps`) and must print it the
same way: a match watched live and its replay read alike.
"""

from __future__ import annotations

from nerts_p2p.game.moves import move_text
from nerts_p2p.table.replica import TableReplica
from nerts_p2p.table.round import FoldStep, ReplicatedRound
from protocol.messages import printable_name


def seats_text(replica: TableReplica, rnd: ReplicatedRound) -> str:
    """Who sits where, by the names the players chose (printable: other peers chose them);
    partners share a seat, in the order the round's START lists them."""
    names: dict[int, list[str]] = {}
    for author in rnd.log.participants:
        seat = rnd.seat_of.get(author)
        if seat is not None:
            names.setdefault(seat, []).append(printable_name(replica.sync.members[author].name))
    return ", ".join(f"seat {seat} {' & '.join(names[seat])}" for seat in sorted(names))


def step_text(step: FoldStep) -> str | None:
    """One folded op as a line: its Lamport time and the move (None: not a move)."""
    if step.move is None:
        return None
    mark = "" if step.applied else f"   (rejected: {step.reason})"
    air = "  (in the air)" if step.in_the_air else ""
    return f"  {step.op.lamport:>6}  {move_text(step.move)}{air}{mark}"
