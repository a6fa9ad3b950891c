"""Who starts each round, and when a START counts (PROTOCOL.md 5, 13.1, 13.3): the
host, or the heir of a starter voted out of the round before; a former starter's START
that the votes had not seen begins nothing (and a round it began here is voided); a
participant acts in a round only once its START is confirmed, that is once no agreement of
the round before can void it any more; and the rule that makes that knowable, a vote
signed after its author's READY for the next round counts only against its starter.

Separate from `sync_membership` because it is one question, asked from delivery, from the
departures and from the table: who may begin the next round, and is its beginning final.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from itertools import chain
from typing import TYPE_CHECKING

from . import departure
from .clocks import VersionVector
from .messages import Kinds, Op
from .order import EpochLog
from .sync_events import StartVoided

if TYPE_CHECKING:
    from .sync import SyncPeer


def starter(sync: SyncPeer, epoch: int, start: Op | None = None) -> bytes | None:
    """Who may START round `epoch`: the host, unless it departed from (or left) an
    earlier round; then the first participant of that round, in START order, still in
    it. Deterministic: every peer that holds the earlier round's agreement names the
    same successor.

    `start`, a START being judged: a starter voted out with a cut at or past that START's
    seq had been seen to sign it (a vote held it), so it is still the starter for it; and
    a starter's own delivered START came before any LEAVE of its author."""
    return _succession(sync, epoch, start)[-1]


def former_starter(sync: SyncPeer, op: Op) -> bool:
    """Is this START's author a starter of its round that the departures of earlier rounds
    passed over (13.3)? Its START is then delivered and begins nothing."""
    chain = _succession(sync, op.epoch, op)
    return op.author != chain[-1] and op.author in chain


def _succession(sync: SyncPeer, epoch: int, start: Op | None) -> list[bytes | None]:
    """The starters of round `epoch` in turn, from the host: the last one is the starter."""
    chain: list[bytes | None] = [sync.host]
    for number in sorted(sync.epochs):
        if number >= epoch or chain[-1] is None:
            break
        log = sync.epochs[number]
        nxt = _after_round(sync, log, chain[-1], log.departed, start)
        if nxt != chain[-1]:
            chain.append(nxt)
    return chain


def _after_round(
    sync: SyncPeer,
    log: EpochLog,
    starter: bytes | None,
    departed: Mapping[bytes, int],
    start: Op | None,
) -> bytes | None:
    """Who starts the round after `log`'s, if `starter` was to (with these departures)."""
    if starter is None:
        return None
    if start is not None and start.author == starter:
        # Its own START: signed before any LEAVE of its, and seen by a vote if its seq is
        # within the departure's cut.
        stays = starter not in departed or start.seq <= departed[starter]
    else:
        gone = sync.members.get(starter)
        stays = starter not in departed and (gone is None or not gone.left)
    if stays:
        return starter
    heir = _heir(sync, log, departed)
    return heir if heir is not None else starter


def _heir(sync: SyncPeer, log: EpochLog, gone: Container[bytes]) -> bytes | None:
    """PROTOCOL.md 5: the first participant of `log`'s round, in START order, that is not
    `gone`, was not expelled and has not left (a departed heir passes the start on, like
    the host before it)."""
    return next(
        (
            p
            for p in log.participants
            if p not in gone and p not in log.excluded and not sync.members[p].left
        ),
        None,
    )


def signed_before_its_start(sync: SyncPeer, op: Op) -> bool:
    """An op of round r that no START began here, from r's starter, whose own START of r
    comes later in its chain (held here, waiting for this op): it was signed in a START
    of round r that was voided, its author the heir that then started r itself (a
    modified client that acted before that START was confirmed, 13.3). It is delivered
    with no effect, judged by its chain and its clock alone, so that it holds back
    neither the START nor anything after it, and the same on every peer: no peer ever
    delivered it in the voided round (round ops wait for their START's confirmation)."""
    number = op.epoch
    if not number or op.kind == Kinds.START or number in sync.epochs:
        return False
    # Its author's later ops first (most ops waiting for their round's START are followed
    # by nothing, or by more ops of the round): who starts the round walks every round.
    queue = sync.pending.get(op.author, {})
    seq = op.seq + 1
    while (later := queue.get(seq)) is not None:
        if later.kind == Kinds.START and later.epoch == number:
            return starter(sync, number) == op.author
        seq += 1
    return False


def start_counts(sync: SyncPeer, op: Op) -> bool:
    """Whether a START begins its round: its author is the starter, judged with the
    departures held here (PROTOCOL.md 13.3)."""
    return op.author == starter(sync, op.epoch, op)


def void_starts(sync: SyncPeer) -> None:
    """Departures agreed just now may show that a round's START came from a starter already
    voted out: that round did not begin (its successor's START begins it). No honest
    participant authored in it: a START is acted on only once confirmed
    (`start_confirmed`), and a confirmed START is never voided."""
    for number in sorted(sync.epochs):
        log = sync.epochs.get(number)
        if log is not None and not start_counts(sync, log.start):
            del sync.epochs[number]
            sync.revealed = {(e, a) for e, a in sync.revealed if e != number}
            sync._events.append(StartVoided(number, log.start))


def start_confirmed(sync: SyncPeer, number: int) -> bool:
    """May a participant act in round `number` (reveal its nonce, move, vote)? Only once
    its START can never be voided (PROTOCOL.md 13.3). Voiding it takes an agreement of
    the round before that departs its author with a cut below it: every stayer voted
    against the author without having seen the START, and the stayers are a quorum. A
    participant that acknowledged the START in its latest heartbeat (a promise: it can no
    longer sign a vote holding less of the author), with no such vote among its ops up to
    that heartbeat, never does: it would have to depart with the author, so the stayers
    would need votes against it. A participant that said READY for this round votes after
    that only against the starter (`vote_counts`), so its votes against anyone else are
    all here. So the START is safe once the participants that could still be such
    stayers are no quorum. Once true, true for good."""
    log = sync.epochs.get(number)
    if log is None:
        return False
    if log.confirmed:
        return True
    log.confirmed = _confirmable(sync, number, log)
    if log.confirmed:
        # The round's parked ops may have waited for this alone, and it may be found here
        # outside a delivery pass: they are looked at again at the next one
        # (`after_acknowledgment`), not only when some other op arrives.
        sync._unscanned = True
    return log.confirmed


def _confirmable(sync: SyncPeer, number: int, log: EpochLog) -> bool:
    if sync.log_closed and not _may_still_void(sync, number, log.start):
        # A whole log (a replay file): what the earlier rounds hold is all they will ever
        # hold, so a START their departures have not voided never will be.
        return True
    previous = sync.epochs.get(number - 1)
    author = log.start.author
    if previous is None or author not in previous.index:
        # The first round, or a starter that did not play the round before: no vote of
        # that round can name it (earlier rounds' votes are in the START's causal past).
        return True
    live = [
        p
        for p in previous.participants
        if p != author and p not in previous.departed and p not in previous.excluded
    ]
    ackers = {p for p in live if _acknowledged(sync, p, log.start, previous)}
    could_stay = {
        p for p in live if p not in ackers and _may_stay(sync, p, ackers, log.start, previous)
    }
    return not departure.has_quorum(previous.participants, could_stay)


def _may_still_void(sync: SyncPeer, number: int, start: Op) -> bool:
    """In a whole log: may an op of an earlier round that waits here still void `start`?
    Only a vote that had not seen it can (its cut would be below the START's seq). An op
    that names the starter's ops up to the START has seen it, and so have its author's
    later ops (deps only grow); one waiting behind a missing op of its own author may
    have unknown ops below it, and one that names fewer did not see it. An op that can
    count as no vote (malformed deps) is passed over: waiting for it would stop the
    replay, though it is refused once its turn comes. (Such an op can
    wait on an op of this very round: a late vote of the round before, signed after this
    round's ops reached its author. Waiting for it would then wait for ever.)"""
    for author, queue in sync.pending.items():
        ops = [op for op in queue.values() if 0 < op.epoch < number]
        if not ops:
            continue
        lowest, highest = min(queue), max(queue)
        if lowest != sync.delivered(author) + 1 or highest - lowest + 1 != len(queue):
            return True  # a hole in its author's chain (below it, or above: not told apart)
        for op in ops:
            earlier = sync.epochs.get(op.epoch)
            if earlier is None or len(op.round_deps) != len(earlier.participants):
                # Counts as no vote: its deps are not one per participant (the checks
                # refuse it once its turn comes), or it was signed in a voided round.
                continue
            seen = dict(zip(earlier.participants, op.round_deps, strict=True))
            if seen.get(start.author, 0) < start.seq:
                return True
    return False


def _acknowledged(sync: SyncPeer, p: bytes, start: Op, previous: EpochLog) -> bool:
    """p's latest heartbeat holds `start`, and none of its ops up to that heartbeat is a
    vote of the round before against the START's author that had not seen it."""
    # Our own acknowledgment is what we hold now: we sign no vote unseen of what we hold.
    ack = VersionVector(sync.vector()) if p == sync.me else sync.acks.get(p)
    if ack is None or ack.seq(start.author) < start.seq:
        return False
    votes = _votes_up_to(sync, p, ack.seq(p), previous)
    return votes is not None and not any(
        target == start.author and held < start.seq for target, held in votes
    )


def _may_stay(sync: SyncPeer, p: bytes, ackers: set[bytes], start: Op, previous: EpochLog) -> bool:
    """Could p be a stayer of an agreement that departs every acknowledger? Yes while it
    may still vote against anyone (no READY for the next round from it here); after its
    READY only if its votes before it already name every acknowledger. A member that left
    signs nothing more: only if its votes name every acknowledger and the starter."""
    member = sync.members.get(p)
    if member is not None and member.left:
        votes = _votes_up_to(sync, p, sync.delivered(p), previous) or ()
        return ackers | {start.author} <= {target for target, _ in votes}
    readies = sync.readies.get((previous.epoch + 1, p))
    if not readies:
        return True
    votes = _votes_up_to(sync, p, readies[0].seq, previous) or ()
    return ackers <= {target for target, _ in votes}


def _votes_up_to(
    sync: SyncPeer, p: bytes, upto: int, previous: EpochLog
) -> list[tuple[bytes, int]] | None:
    """p's DEPART votes of round `previous` among its ops 1..upto, delivered or waiting
    here, as (target, held); None if some of those ops have not come. Every one of them
    counts (PROTOCOL.md 13.3 (a)), wherever it lies in p's chain: a late vote of an older
    round may sit above one of this round. The delivered ones are read from the round's
    order (p is a participant that is not expelled, so each of its delivered ops of the
    round is there): one round's ops, however long the table's chains."""
    queue = sync.pending.get(p, {})
    waiting: list[Op] = []
    for seq in range(sync.delivered(p) + 1, upto + 1):
        op = queue.get(seq)
        if op is None:
            return None
        waiting.append(op)
    delivered = (op for op in previous.ops if op.author == p and op.seq <= upto)
    return [
        (op.payload[0], op.payload[1])
        for op in chain(delivered, waiting)
        if op.kind == Kinds.DEPART and op.epoch == previous.epoch
    ]


def vote_counts(sync: SyncPeer, log: EpochLog) -> departure.VoteRule:
    """PROTOCOL.md 13.1: a vote of round r signed after its author's READY for round r+1
    counts only against round r+1's starter (as the departures before it in the walk
    leave it). A peer says READY once round r is final for it, and from then on it has
    nobody else to vote against: this makes that a rule, on which the confirmation of
    the next START relies (`start_confirmed`)."""
    entering = starter(sync, log.epoch)

    def counts(op: Op, departed: Mapping[bytes, int]) -> bool:
        readies = sync.readies.get((log.epoch + 1, op.author))
        if not readies or readies[0].seq > op.seq:
            return True
        return bool(op.payload[0] == _after_round(sync, log, entering, departed, None))

    return counts


def successor_waits(sync: SyncPeer, op: Op) -> bool:
    """A START from someone other than the host is judged once this peer knows the
    host has departed (until then it waits, like an op whose deps are missing)."""
    host = sync.host
    if op.kind != Kinds.START or host is None or op.author == host:
        return False
    previous = sync.epochs.get(op.epoch - 1)
    if previous is None or sync.starter(op.epoch) != host:
        return False
    heir = _heir(sync, previous, {host})
    return op.author == heir  # anyone else is refused at once
