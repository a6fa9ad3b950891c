"""A round's beginning: a delivered START turned into the round's rules, seating,
commitments, dealers and public start state (the host runs the same setup before it signs
a START), and our own deal seed and mix nonce recovered from the escrow in our READY.

Separate because a START that makes no sense as a game must be refused the same way on
every peer, from the START and its causal past only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from nerts_p2p.game.cards import make_card
from nerts_p2p.game.engine import public_start
from nerts_p2p.game.errors import NertsError
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.state import GameState
from protocol.errors import RemoteProtocolError
from protocol.messages import Op
from protocol.order import nonce_commitment

from .commitments import deal_commitment
from .events import ProtocolViolation, RoundStarted
from .gate import seating_problem
from .presence import open_escrow
from .round import ReplicatedRound
from .wire import rules_from_wire

if TYPE_CHECKING:
    from .replica import TableReplica


def begin_round(replica: TableReplica, op: Op) -> None:
    """A START delivered: the round's public start state from the players' READYs. A
    START that makes no sense as a game is reported and the round never starts here, the
    same on every peer (the check depends on the START and its causal past only)."""
    participants = op.payload[0]
    readies = {p: replica.sync.ready_for(op.epoch, p, op) for p in participants}
    try:
        rules, seat_of, commitments, dealer, start = round_setup(
            replica, op.epoch, op.payload, readies
        )
    except NertsError as exc:
        replica._events.append(ProtocolViolation(op.author, f"round cannot start: {exc}"))
        return
    log = replica.sync.epochs[op.epoch]
    replica.rounds[op.epoch] = ReplicatedRound(
        op.epoch, rules, log, seat_of, commitments, dealer, start
    )
    replica.rounds[op.epoch].fold_one(op)
    replica._events.append(RoundStarted(op.epoch, seat_of.get(replica.me)))


def round_setup(
    replica: TableReplica, number: int, payload: Sequence[Any], readies: dict[bytes, Op | None]
) -> tuple[Rules, dict[bytes, int], dict[bytes, bytes], dict[int, bytes], GameState]:
    """Rules, seating, commitments, dealers and public start state of a round from its
    START payload and the READY each participant's entry uses. Raises NertsError (in
    words) if the round cannot start: the host checks this before it signs a START."""
    participants, seats, wire_rules = payload
    rules = rules_from_wire(wire_rules)
    problem = seating_problem(rules, seats)
    if problem is not None:
        raise NertsError(problem)
    seat_of = dict(zip(participants, seats, strict=True))
    commitments: dict[bytes, bytes] = {}
    shown_by_seat: dict[int, list[int]] = {}
    dealer: dict[int, bytes] = {}
    for author in participants:
        ready = readies.get(author)
        if ready is None:
            raise NertsError("a participant has no READY for this round")
        commitments[author] = ready.payload[1]
        seat = seat_of[author]
        if seat not in dealer:
            dealer[seat] = author
            shown_by_seat[seat] = [make_card(seat, i) for i in ready.payload[2]]
    shown = [shown_by_seat[s] for s in range(rules.seats)]
    my_seat = seat_of.get(replica.me)
    own_seed = None
    if my_seat is not None:
        recover_secrets(replica, number, readies.get(replica.me))
    if my_seat is not None and dealer.get(my_seat) == replica.me:
        own_seed = replica.my_secrets.get(number, (None, None))[0]
    start = public_start(rules, shown, own_seat=my_seat, own_seed=own_seed)
    return rules, seat_of, commitments, dealer, start


def recover_secrets(replica: TableReplica, number: int, ready: Op | None) -> None:
    """Our deal seed and mix nonce for a round must be those of our READY the START used.
    After a restart they are gone from memory; and if we said READY again while the START
    was on its way, the ones in memory are our later READY's. Either way that READY
    escrowed them to ourselves: open it."""
    if ready is None:
        return
    held, nonce = replica.my_secrets.get(number), replica.my_nonces.get(number)
    if (
        held is not None
        and nonce is not None
        and deal_commitment(*held) == ready.payload[1]
        and nonce_commitment(nonce) == ready.payload[3]
    ):
        return  # the very READY the START used
    try:
        seed, salt, nonce = open_escrow(replica.sync.key, ready.payload[4])
    except RemoteProtocolError as exc:
        replica._events.append(ProtocolViolation(replica.me, f"our own escrow: {exc.message}"))
        return
    if deal_commitment(seed, salt) == ready.payload[1]:
        replica.my_secrets[number] = (seed, salt)
    if nonce_commitment(nonce) == ready.payload[3]:
        replica.my_nonces[number] = nonce
