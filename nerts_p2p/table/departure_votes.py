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
    from .round import ReplicatedRound


def watch_presence(replica: TableReplica, now: float) -> None:
    """Flag lagging seats; vote a silent (or hopelessly lagging) participant out."""
    rnd = replica.current_round
    if rnd is None or replica.me not in rnd.log.index or replica.me in rnd.log.excluded:
        return
    if not replica.sync.start_confirmed(rnd.number):
        return  # the round has not begun for us (PROTOCOL.md 13.3): no clock runs in it yet
    log, presence = rnd.log, replica.presence
    if presence.round != rnd.number:
        presence.reset(rnd.number)
    presence.round_seen(rnd.number, now)
    playing = rnd.final is None
    if playing:
        if now < presence.next_check:
            return  # votes only right after a look (below)
        heard = _look(replica, rnd, now)
    else:
        heard = replica.sync.signs_of_life()
    if not replica.can_author:
        return
    # Votes only right after a look: the acknowledgments and the signs of life are then of
    # the same moment (a heartbeat heard since would look unacknowledged).
    silent = presence.silent(log, heard, replica.me, now, playing=playing)
    # A participant proven to cheat is voted out at once (PROTOCOL.md 10): one vote departs
    # it, and its seat freezes and says stuck; else a round whose other seats are all stuck
    # could never end (only departed seats said stuck).
    cheats = (
        [p for p in log.participants if p in log.excluded and p != replica.me] if playing else []
    )
    for target in silent + cheats:
        if target in log.departed:
            continue
        if not playing and (
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


def _look(replica: TableReplica, rnd: ReplicatedRound, now: float) -> dict[bytes, float]:
    """A look at the acknowledgments while the round is played: ask each participant what
    the others acknowledge, count its silences, flag the seats lagging. Returns the signs of
    life it judged by, for the votes of the same moment."""
    presence = replica.presence
    # Four looks a second are plenty for bounds of seconds, and cheap.
    presence.next_check = now + PRESENCE_CHECK
    vectors = dict(replica.sync.acks)
    vectors[replica.me] = VersionVector(replica.sync.vector())
    presence.update(rnd.log, vectors, now)
    heard = replica.sync.signs_of_life()
    presence.note_silences(heard, now)
    for p in rnd.log.participants:
        lag = presence.lag(p, now)
        if lag >= LAG_WARN and p not in presence.warned and p != replica.me:
            presence.warned.add(p)
            replica._events.append(SeatLagging(rnd.number, rnd.seat_of[p], p, lag))
    return heard
