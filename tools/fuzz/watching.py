"""What the fuzzer watches at every step of a table: what each peer signs (a seq signed
twice), every game event (divergence reports, honest peers expelled or called cheaters,
round results that do not add up) and every state a peer's fold produces (no card in two
places, every deck whole)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

from nerts_p2p.table.replica import (
    Divergence,
    GameEvent,
    PeerExpelled,
    ProtocolViolation,
    RaceLost,
    RoundEnded,
    RoundFinal,
    RoundStarted,
    RoundVoided,
    SeatDeparted,
)
from protocol.errors import RemoteProtocolError
from protocol.messages import Heartbeat, Message, Op, decode
from protocol.sync import BROADCAST
from tools.fuzz.invariants import conservation_problems, score_problems

if TYPE_CHECKING:
    from nerts_p2p.game.state import GameState
    from tools.fuzz.peers import Peer
    from tools.fuzz.table import FuzzTable


def decoded(datagram: bytes, table: bytes) -> Message | None:
    """The message in `datagram` for this table, or None if a peer would drop it unread."""
    try:
        return decode(datagram, table=table)
    except RemoteProtocolError:
        return None


def persist(table: FuzzTable, peer: Peer, out: list[tuple[Hashable, bytes]]) -> None:
    """Store own ops before they are sent; watch for a seq signed twice."""
    replica = peer.replica
    me = replica.me
    peer.store.secrets.update(replica.my_secrets)
    peer.store.lamport = max(peer.store.lamport, replica.sync.clock.value)
    for destination, datagram in out:
        if destination != BROADCAST:
            continue
        message = decoded(datagram, table.table_id)
        if isinstance(message, Heartbeat):
            table.last_heartbeat[peer.index] = datagram
            continue
        if not isinstance(message, Op) or message.author != me:
            continue
        earlier = peer.authored.get(message.seq)
        if earlier is None:
            peer.authored[message.seq] = message.body
            if message.seq == len(peer.store.ops) + 1:
                peer.store.ops.append(datagram)
        elif earlier != message.body and peer.honest:
            table.problem(
                "seq_reuse",
                peer.index,
                f"peer {peer.index} signed two different ops with seq {message.seq}",
            )


def on_event(table: FuzzTable, peer: Peer, event: GameEvent) -> None:
    peer.events.append(event)
    if isinstance(event, RoundFinal):
        # The totals before this round: the previous round's, as this peer announced them (a
        # restarted peer announces its rounds again from its store).
        previous = peer.finals.get(event.round - 1)
        before = dict(enumerate(previous.totals)) if previous is not None else {}
        peer.finals[event.round] = event
        table.record(
            "round_final",
            peer=peer.index,
            round=event.round,
            scores=[s.score for s in event.scores],
            cheaters=sorted(event.cheaters),
        )
        rnd = peer.replica.rounds[event.round]
        for text in score_problems(event, rnd.states[-1], before):
            table.problem("score", peer.index, text)
        honest_seats = {s for s, author in rnd.dealer.items() if table.is_honest_author(author)}
        if event.cheaters & honest_seats:
            table.problem(
                "cheater",
                peer.index,
                f"round {event.round}: honest seat(s) {sorted(event.cheaters & honest_seats)} "
                "called cheaters",
            )
    elif isinstance(event, RoundStarted):
        table.record("round_started", peer=peer.index, round=event.round, seat=event.seat)
    elif isinstance(event, RoundVoided):
        who = table.index_of(event.author)
        table.record("round_voided", peer=peer.index, round=event.round, starter=who)
    elif isinstance(event, RoundEnded):
        table.record("round_ended", peer=peer.index, round=event.round, by=event.ended_by)
    elif isinstance(event, RaceLost):
        table.record("race_lost", peer=peer.index, move=str(event.move), winner=event.winner_seat)
    elif isinstance(event, SeatDeparted):
        who = table.index_of(event.author)
        table.record("departed", peer=peer.index, round=event.round, seat=event.seat, who=who)
    elif isinstance(event, PeerExpelled):
        table.record("expelled", peer=peer.index, author=event.author.hex(), seq=event.seq)
        if peer.honest and table.is_honest_author(event.author):
            table.problem(
                "expelled",
                peer.index,
                f"honest peer {table.index_of(event.author)} expelled from seq {event.seq}",
            )
    elif isinstance(event, ProtocolViolation):
        table.record("violation", peer=peer.index, author=event.author.hex(), reason=event.reason)
    elif isinstance(event, Divergence):
        table.record("divergence", peer=peer.index, other=event.peer.hex())
        other = table.index_of(event.peer)
        if peer.honest and other is not None and table.peers[other].honest:
            expelled = sorted(peer.replica.sync.expelled)
            table.problem(
                "divergence_after_expulsion" if expelled else "divergence",
                peer.index,
                f"peer {peer.index} and peer {other} hold the same ops but different states"
                + (
                    f" (peer {peer.index} has expelled {len(expelled)} author(s); the vector"
                    " does not say so)"
                    if expelled
                    else ""
                ),
            )


def check_states(table: FuzzTable, peer: Peer) -> None:
    """Invariants on every state the peer's fold produced since the last check."""
    if not peer.honest:
        return
    rnd = peer.replica.current_round
    if rnd is None:
        return
    states, checked = rnd.states, peer.checked
    if not (checked and len(checked) == len(states) and checked[-1] is states[-1]):
        _check_new_states(table, peer, rnd.number, states)
    # Move latency: from a bot's intent to its op in the peer's stable prefix (looked for
    # only when the prefix has grown: a flood of datagrams that change nothing costs nothing).
    stable = rnd.log.stable_count()
    if peer.pending_moves and peer.latency_seen != (rnd.number, stable):
        peer.latency_seen = (rnd.number, stable)
        for op in rnd.log.ops[:stable]:
            played = peer.pending_moves.pop(op.hash, None)
            if played is not None:
                peer.move_latency.append(table.now - played)


def _check_new_states(table: FuzzTable, peer: Peer, number: int, states: list[GameState]) -> None:
    """Conservation on the states the fold produced since the last check (a refold
    replaces a tail of them)."""
    checked = peer.checked
    start = len(checked)
    if start > len(states) or (start and states[start - 1] is not checked[start - 1]):
        start = 0
        while start < min(len(states), len(checked)) and states[start] is checked[start]:
            start += 1
    for state in states[start:]:
        for text in conservation_problems(state):
            table.problem("invariant", peer.index, f"round {number}: {text}")
            break
    peer.checked = list(states)
