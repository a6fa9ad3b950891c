"""Our secrets in a round (PROTOCOL.md 6): revealing our mix nonce (MIX), sealing our seat's
seed to our partner and opening the one our partner sealed to us (SEED_SHARE), and our
REVEAL once the round's end is stable.

Separate because these are the only ops the replica authors by itself, from inside event
handling, and each must be sent at most once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nerts_p2p.game.engine import public_start, shown_cards
from protocol.errors import RemoteProtocolError
from protocol.messages import Kind, Op
from protocol.sealed import open_from, seal_for

from .commitments import END_MARKER, deal_commitment
from .events import ProtocolViolation
from .round import ReplicatedRound

if TYPE_CHECKING:
    from .replica import TableReplica


def reveal_nonce(replica: TableReplica, rnd: ReplicatedRound) -> None:
    """As a participant, reveal our mix nonce once the round has started (every
    commitment is fixed by then)."""
    log = rnd.log
    if replica.me not in log.index or replica.me in log.nonces:
        return
    nonce = replica.my_nonces.get(rnd.number)
    if nonce is not None:
        replica._author_now(Kind.MIX, rnd.number, nonce)


def reveal(replica: TableReplica, rnd: ReplicatedRound) -> None:
    """Every participant's end of the round: a dealer reveals its seed and salt; a partner
    that deals no seed sends a REVEAL of zero bytes (`END_MARKER`), which says the same
    thing: it has seen the end, and it makes no more moves in this round."""
    if replica.me in rnd.dealer.values():
        if rnd.number not in replica.my_secrets:
            return  # nothing to reveal with (a restart without its seed)
        seed, salt = replica.my_secrets[rnd.number]
    else:
        seed, salt = END_MARKER
    rnd.revealed = True
    replica._author_now(Kind.REVEAL, rnd.number, [seed, salt])


def take_partner_seed(replica: TableReplica, rnd: ReplicatedRound, op: Op) -> bool:
    """Our partner (the seat's dealer) sealed the seat's seed to us: from now on we know
    the seat's face-down cards too. True if our view of the round was rebuilt."""
    seat = rnd.seat_of.get(replica.me)
    if seat is None or rnd.dealer.get(seat) != op.author or op.author == replica.me:
        replica._events.append(
            ProtocolViolation(op.author, "a seed share from someone who does not deal our seat")
        )
        return False
    try:
        secret = open_from(replica.sync.key, replica.sync.keys[op.author], op.payload[1])
    except RemoteProtocolError as exc:
        replica._events.append(ProtocolViolation(op.author, exc.message))
        return False
    seed, salt = secret[:32], secret[32:]
    if deal_commitment(seed, salt) != rnd.commitments[op.author]:
        replica._events.append(
            ProtocolViolation(op.author, "the shared seed does not match the partner's commitment")
        )
        return False
    shown = [list(shown_cards(rnd.start_state, s)) for s in range(rnd.rules.seats)]
    rnd.start_state = public_start(rnd.rules, shown, own_seat=seat, own_seed=seed)
    rnd.states = [rnd.start_state]
    # The steps (and the end they reached) stay until the caller folds the round again
    # from its start: that re-fold compares them with the new ones to tell us which of our
    # moves no longer fit, and an end it reaches again is not announced a second time.
    return True


def share_seed(replica: TableReplica, rnd: ReplicatedRound) -> None:
    """As a seat's dealer, seal the seed to our partner, once."""
    rnd.shared = True
    seat = rnd.seat_of.get(replica.me)
    if seat is None or rnd.dealer.get(seat) != replica.me or rnd.number not in replica.my_secrets:
        return
    seed, salt = replica.my_secrets[rnd.number]
    for partner, partner_seat in rnd.seat_of.items():
        if partner_seat == seat and partner != replica.me:
            sealed = seal_for(
                replica.sync.key, replica.sync.keys[partner], seed + salt, replica.randomness(24)
            )
            replica._author_now(Kind.SEED_SHARE, rnd.number, [partner, sealed])
