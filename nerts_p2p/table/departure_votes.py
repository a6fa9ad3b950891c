"""Presence during a round (PROTOCOL.md 13): flag a seat whose player has not acknowledged
what the others hold (`SeatLagging`), and vote a silent participant out with a DEPART.

Separate because it is the only part of the replica driven by the clock (`tick`) rather
than by delivered ops; the bookkeeping it reads is `presence.Presence`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.clocks import VersionVector
from protocol.errors import LocalProtocolError
from protocol.messages import Kind

from .events import ProtocolViolation, SeatLagging
from .presence import LAG_WARN, PRESENCE_CHECK

if TYPE_CHECKING:
    from .replica import TableReplica


def watch_presence(replica: TableReplica, now: float) -> None:
    """Flag lagging seats; vote a silent (or hopelessly lagging) participant out."""
    rnd = replica.current_round
    if rnd is None or replica.me not in rnd.log.index or replica.me in rnd.log.excluded:
        return
    log, presence = rnd.log, replica.presence
    if presence.round != rnd.number:
        presence.reset(rnd.number)
    presence.round_seen(rnd.number, now)
    looked = rnd.final is not None
    if rnd.final is None and now >= presence.next_check:
        looked = True
        # Four looks a second are plenty for bounds of seconds, and cheap.
        presence.next_check = now + PRESENCE_CHECK
        vectors = dict(replica.sync.acks)
        vectors[replica.me] = VersionVector(replica.sync.vector())
        presence.update(log, vectors, now)
        presence.note_silences(replica.sync.signs_of_life(), now)
        for p in log.participants:
            lag = presence.lag(p, now)
            if lag >= LAG_WARN and p not in presence.warned and p != replica.me:
                presence.warned.add(p)
                replica._events.append(SeatLagging(rnd.number, rnd.seat_of[p], p, lag))
    if not replica.can_author or not looked:
        # Votes only right after a look: the acknowledgments and the signs of life are
        # then of the same moment (a heartbeat heard since would look unacknowledged).
        return
    silent = presence.silent(
        log, replica.sync.signs_of_life(), replica.me, now, playing=rnd.final is None
    )
    for target in silent:
        if target in log.departed:
            continue
        if rnd.final is not None and (
            replica.sync.starter(rnd.number + 1) != target or rnd.number + 1 in replica.sync.epochs
        ):
            continue  # after a final round only a vanished starter matters
        held = replica.sync.delivered(target)
        if presence.voted.get((rnd.number, target), -1) >= held:
            continue
        presence.voted[(rnd.number, target)] = held
        try:
            replica.sync.author(Kind.DEPART, rnd.number, [target, held])
        except LocalProtocolError as exc:
            replica._events.append(ProtocolViolation(replica.me, exc.message))
    replica._after_sync()
