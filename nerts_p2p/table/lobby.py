"""The lobby's intents: joining (knock, then JOIN once the host's ADMIT is here), READY
with a fresh committed deal, and START of the next round with the ready players.

Separate because these run between rounds, on the membership side of the table, and the
host checks a START here before it signs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nerts_p2p.game.deck import SALT_BYTES, SEED_BYTES, deal_seat
from nerts_p2p.game.errors import NertsError
from nerts_p2p.game.rules import Rules
from protocol.errors import LocalProtocolError
from protocol.messages import MIX_NONCE_LEN, PLAYER, Kinds, Op
from protocol.order import nonce_commitment

from . import round_start
from .commitments import deal_commitment
from .presence import seal_escrow
from .status import ready_to_play
from .wire import rules_to_wire

if TYPE_CHECKING:
    from .replica import TableReplica


def join(replica: TableReplica) -> Op | None:
    """Join the table: ask the host to admit us (PROTOCOL.md 17), and JOIN once its
    ADMIT is here. Returns the JOIN if it could be signed now; else it is signed by
    itself when the admission arrives (`admission_refused` says if it never will)."""
    if replica.sync.open_op is None:
        raise NertsError("the table's OPEN has not arrived yet")
    door = replica.sync.admission
    door.knock(replica.role, replica.name, door.now)
    op = join_if_admitted(replica)
    replica._after_sync()
    return op


def join_if_admitted(replica: TableReplica) -> Op | None:
    sync = replica.sync
    door = sync.admission
    if door.wanted is None or replica.is_member or not replica.can_author:
        return None
    admitted = sync.admits.get(replica.me)
    if admitted is None or sync.host is None or sync.delivered(sync.host) < admitted[0]:
        return None
    try:
        return sync.author(Kinds.JOIN, 0, [sync.key.public_key, replica.name, replica.role])
    except LocalProtocolError:
        return None  # not yet (a restart waits for its own chain): asked again later


def ready(replica: TableReplica) -> Op:
    """Commit to a fresh deal for the next round and show its face-up cards."""
    rules = replica.rules
    if rules is None or replica.role != PLAYER:
        raise NertsError("only a player at an open table can be ready")
    number = (max(replica.rounds) if replica.rounds else 0) + 1
    seed, salt = replica.randomness(SEED_BYTES), replica.randomness(SALT_BYTES)
    nonce = replica.randomness(MIX_NONCE_LEN)
    deal = deal_seat(rules, 0, seed)
    shown = [deal.nerts[-1] & 63, *(c & 63 for c in deal.work)]
    escrow = seal_escrow(replica.sync.key, seed + salt + nonce, replica.randomness(24))
    op = replica.sync.author(
        Kinds.READY,
        0,
        [number, deal_commitment(seed, salt), shown, nonce_commitment(nonce), escrow],
    )
    replica.my_secrets[number] = (seed, salt)
    replica.my_nonces[number] = nonce
    replica._after_sync()
    return op


def start(replica: TableReplica) -> Op:
    """(Host) start the next round with every player who is ready for it."""
    rules = replica.rules
    number = (max(replica.rounds) if replica.rounds else 0) + 1
    starter = replica.sync.starter(number)
    if rules is None or starter != replica.me:
        if starter != replica.sync.host:
            raise NertsError("only the departed host's successor starts this round")
        raise NertsError("only the table's host starts a round")
    if replica.rounds and replica.rounds[number - 1].final is None:
        raise NertsError(f"round {number - 1} is not final yet")
    per_seat = 2 if rules.partnerships else 1
    # Not one who vanished after its READY (a closed lid, a killed process): the round
    # would wait for its mix nonce until the votes drop it, ten seconds in.
    players = ready_to_play(replica, number)[: rules.seats * per_seat]
    players = players[: len(players) - len(players) % per_seat]
    if len(players) < 2 * per_seat:
        raise NertsError(f"a round needs at least {2 * per_seat} ready players")
    seats = [i // per_seat for i in range(len(players))]
    seated = Rules.from_dict({**rules.to_dict(), "seats": len(players) // per_seat})
    payload = [players, seats, rules_to_wire(seated)]
    # A START that would fail here would fail everywhere and use up round `number` for
    # good: check the round can start before signing it.
    latest = {p: replica.sync.readies[(number, p)][-1] for p in players}
    round_start.round_setup(replica, number, payload, dict(latest))
    try:
        op = replica.sync.author(Kinds.START, number, payload)
    except LocalProtocolError as exc:
        # Refused before it was signed or sent: round `number` is still free to start.
        raise NertsError(f"round {number} cannot start: {exc.message}") from exc
    replica._after_sync()
    return op
