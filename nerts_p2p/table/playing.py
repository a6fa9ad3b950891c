"""Playing one of our moves in a round: checked against our speculative state (no seat,
a restart still catching up, a mix nonce still missing, a partner's deal not here yet: a
Rejection in words), completed with the cards it turns up, then signed and sent.

Separate because it is the one path from a player's hand to the wire during a round, and
everything it refuses must be refused before anything is signed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nerts_p2p.game.engine import apply, complete
from nerts_p2p.game.errors import NertsError, Rejection, RejectReason
from nerts_p2p.game.moves import Move, move_text
from protocol.errors import LocalProtocolError
from protocol.messages import Kind, Op

if TYPE_CHECKING:
    from .replica import TableReplica


def play(replica: TableReplica, move: Move) -> Op | Rejection:
    """Play one of our moves: checked against our speculative state, completed with the
    cards it turns up, then signed and sent."""
    rnd = replica.current_round
    seat = replica.seat
    if rnd is None or seat is None or move.seat != seat:
        return Rejection(RejectReason.NO_SUCH_SEAT, "you have no seat in this round")
    if not replica.can_author:
        return Rejection(RejectReason.MISSING_REVEAL, "restarting: waiting for our own ops")
    if not replica.sync.start_confirmed(rnd.number):
        return Rejection(
            RejectReason.MISSING_REVEAL, "waiting for the table to confirm the round's start"
        )
    if any(
        p not in rnd.log.nonces and rnd.log.owes_nonce(p, (2**62, b""))
        for p in rnd.log.participants
    ):
        return Rejection(
            RejectReason.MISSING_REVEAL, "waiting for every player's mix nonce to arrive"
        )
    try:
        completed = complete(rnd.state, move)
    except NertsError:
        return Rejection(
            RejectReason.MISSING_REVEAL,
            "your partner's deal has not reached you yet: you cannot turn up cards of this seat",
        )
    result = apply(rnd.state, completed)
    if isinstance(result, Rejection):
        return result
    payload = move_text(completed).split(" ", 1)[1]
    try:
        op = replica.sync.author(Kind.MOVE, rnd.number, payload)
    except LocalProtocolError as exc:
        # Refused by our own gate (the table's Lamport time spent, say): never sent.
        return Rejection(RejectReason.ROUND_OVER, exc.message)
    if replica.on_signed is not None:
        replica.on_signed()  # on the wire before our own fold (crash-safe: stored first)
    replica._after_sync()
    return op
