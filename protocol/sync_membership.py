"""Who may do what at the table: membership checks of an op (OPEN, JOIN, ADMIT, LEAVE,
READY, START, MIX, DEPART), applying a delivered op to the membership, the round's
starter and successor, and the departures agreed by DEPART votes (PROTOCOL.md 6, 13, 17).

Separate because it is the table's rules of membership, not the mechanics of delivery:
delivery asks it whether an op may count and tells it when one did.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import admission, departure
from .clocks import VersionVector
from .errors import DropReason
from .messages import PLAYER, SPECTATOR, Kind, Kinds, Op
from .order import EpochLog, nonce_commitment, round_mix
from .signing import key_id
from .sync_events import DeparturesChanged, StartVoided

if TYPE_CHECKING:
    from .sync import SyncPeer


@dataclass
class Member:
    author: bytes
    public_key: bytes
    name: str
    role: int
    left: bool = False


def membership_problem(sync: SyncPeer, op: Op) -> tuple[DropReason, str] | None:
    kind, author = op.kind, op.author
    if kind == Kinds.OPEN:
        return None  # the table id is derived from the host key: only the host can
    if sync.open_op is None and kind != Kinds.JOIN:
        # Everything at a table happens after its OPEN; deps make that causal.
        return DropReason.NOT_A_MEMBER, "the table has not been opened"
    if kind == Kinds.JOIN:
        return admission.join_problem(sync, op)
    if kind == Kinds.ADMIT:
        return admission.admit_problem(sync, op)
    member = sync.members.get(author)
    if member is None or member.left:
        return DropReason.NOT_A_MEMBER, "the author is not a member of this table"
    if kind == Kinds.LEAVE:
        return None
    if kind == Kinds.READY:
        if member.role != PLAYER:
            return DropReason.SPECTATOR_OP, "a spectator cannot take part in a round"
        return None
    if kind == Kinds.START:
        if author != starter(sync, op.epoch, op):
            if author in former_starters(sync, op.epoch):
                # A starter voted out of an earlier round, whose START the votes had not
                # seen (13.3): delivered, so its chain goes on, and of no effect.
                return None
            return (
                DropReason.NOT_A_MEMBER,
                "only the table's host (or successor) starts a round",
            )
        if op.epoch in sync.epochs:
            return DropReason.SCHEMA, f"round {op.epoch} has already started"
        for p in op.payload[0]:
            m = sync.members.get(p)
            if m is None or m.left or m.role != PLAYER:
                return DropReason.NOT_A_MEMBER, "START names someone who is not a player here"
            if not sync.ready_for(op.epoch, p, op):
                return DropReason.SCHEMA, "START names a player who is not ready"
        return None
    epoch = sync.epochs.get(op.epoch)
    if epoch is None:
        return DropReason.SCHEMA, f"round {op.epoch} has not started"
    if author not in epoch.index:
        if member.role == SPECTATOR:
            return DropReason.SPECTATOR_OP, "a spectator authors no game ops"
        return DropReason.NOT_A_MEMBER, f"the author does not play round {op.epoch}"
    if kind == Kinds.MIX:
        return mix_problem(sync, op, epoch)
    if kind == Kinds.DEPART:
        return depart_problem(sync, op, epoch)
    return None


def ready_for(sync: SyncPeer, epoch: int, author: bytes, start: Op) -> Op | None:
    """The author's latest READY for `epoch` that `start` had seen."""
    seen = dict(zip(start.payload[0], start.round_deps, strict=False)).get(author, 0)
    candidates = [r for r in sync.readies.get((epoch, author), []) if r.seq <= seen]
    return candidates[-1] if candidates else None


#: The kinds that change the membership (or what it is judged by): the others, MOVEs above
#: all, pass straight through `apply_membership`.
MEMBERSHIP_KINDS = frozenset(
    {Kind.OPEN, Kind.JOIN, Kind.ADMIT, Kind.LEAVE, Kind.READY, Kind.REVEAL, Kind.START}
)


def apply_membership(sync: SyncPeer, op: Op) -> None:
    kind, author = op.kind, op.author
    if kind not in MEMBERSHIP_KINDS:
        return
    if kind == Kinds.OPEN:
        sync.open_op, sync.host = op, author
        pk, name = op.payload[0], op.payload[1]
        sync.members[author] = Member(author, pk, name, PLAYER)
    elif kind == Kinds.JOIN:
        pk, name, role = op.payload
        existing = sync.members.get(author)
        if existing is None:
            sync.members[author] = Member(author, pk, name, role)
    elif kind == Kinds.ADMIT:
        pk, role = op.payload
        sync.admits[key_id(pk)] = (op.seq, role)
        sync.keys.setdefault(key_id(pk), pk)
    elif kind == Kinds.LEAVE:
        sync.members[author].left = True
    elif kind == Kinds.READY:
        sync.readies.setdefault((op.payload[0], author), []).append(op)
    elif kind == Kinds.REVEAL:
        sync.revealed.add((op.epoch, author))
    elif kind == Kinds.START:
        if not start_counts(sync, op):
            return  # a former starter's START: in its author's chain, and nothing more
        participants = tuple(op.payload[0])
        readies = [sync.ready_for(op.epoch, p, op) for p in participants]
        commitments = [r.payload[1] for r in readies if r is not None]
        log = EpochLog(
            op.epoch,
            participants,
            # The host may start a round it does not play: its START is still ordered.
            {p: sync.keys[p] for p in (*participants, author)},
            round_mix(commitments),
            op,
        )
        for expelled, seq in sync.expelled.items():
            log.exclude(expelled, seq)
        for p in participants:
            log.hear(p, sync.logs[p][-1].lamport if sync.logs.get(p) else 0)
        sync.epochs[op.epoch] = log


def starter(sync: SyncPeer, epoch: int, start: Op | None = None) -> bytes | None:
    """Who may START round `epoch`: the host, unless it departed from (or left) an
    earlier round; then the first participant of that round, in START order, still in
    it. Deterministic: every peer that holds the earlier round's agreement names the
    same successor.

    `start`, a START being judged: a starter voted out with a cut at or past that START's
    seq had been seen to sign it (a vote held it), so it is still the starter for it; and
    a starter's own delivered START came before any LEAVE of its author."""
    return _succession(sync, epoch, start)[-1]


def former_starters(sync: SyncPeer, epoch: int) -> tuple[bytes | None, ...]:
    """The starters of round `epoch` before the present one, voted out or gone in turn."""
    return tuple(_succession(sync, epoch, None)[:-1])


def _succession(sync: SyncPeer, epoch: int, start: Op | None) -> list[bytes | None]:
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
    gone = sync.members.get(starter)
    cut = departed.get(starter)
    own = start is not None and start.author == starter
    voted_out = cut is not None and not (own and start is not None and start.seq <= cut)
    if not voted_out and (own or gone is None or not gone.left):
        return starter
    # PROTOCOL.md 5: the first participant that neither departed, was expelled, nor
    # left (a departed heir passes the start on, like the host before it).
    return next(
        (
            p
            for p in log.participants
            if p not in departed and p not in log.excluded and not sync.members[p].left
        ),
        starter,
    )


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
    previous = sync.epochs.get(number - 1)
    author = log.start.author
    if previous is None or author not in previous.index:
        # The first round, or a starter that did not play the round before: no vote of
        # that round can name it (earlier rounds' votes are in the START's causal past).
        log.confirmed = True
        return True
    live = [
        p
        for p in previous.participants
        if p != author and p not in previous.departed and p not in previous.excluded
    ]
    ackers = {p for p in live if _acknowledged(sync, p, log.start, previous)}
    could_stay = {p for p in live if p not in ackers and _may_stay(sync, p, ackers, previous)}
    log.confirmed = not departure.has_quorum(previous.participants, could_stay)
    return log.confirmed


def _acknowledged(sync: SyncPeer, p: bytes, start: Op, previous: EpochLog) -> bool:
    """p's latest heartbeat holds `start`, and none of its ops up to that heartbeat is a
    vote of the round before against the START's author that had not seen it."""
    # Our own acknowledgment is what we hold now: we sign no vote unseen of what we hold.
    ack = VersionVector(sync.vector()) if p == sync.me else sync.acks.get(p)
    if ack is None or ack.seq(start.author) < start.seq:
        return False
    votes = _votes_up_to(sync, p, ack.seq(p), previous.epoch)
    return votes is not None and not any(
        target == start.author and held < start.seq for target, held in votes
    )


def _may_stay(sync: SyncPeer, p: bytes, ackers: set[bytes], previous: EpochLog) -> bool:
    """Could p be a stayer of an agreement that departs every acknowledger? Yes while it
    may still vote against anyone (no READY for the next round from it here); after its
    READY only if its votes before it already name every acknowledger."""
    readies = sync.readies.get((previous.epoch + 1, p))
    if not readies:
        return True
    votes = _votes_up_to(sync, p, readies[0].seq, previous.epoch) or ()
    return ackers <= {target for target, _ in votes}


def _votes_up_to(sync: SyncPeer, p: bytes, upto: int, epoch: int) -> list[tuple[bytes, int]] | None:
    """p's DEPART votes of round `epoch` among its ops 1..upto, delivered or waiting here,
    as (target, held); None if some of those ops have not come. Read from the newest back
    to p's last op of an earlier round (an author's rounds follow each other in its
    chain), so a long table costs no more than one round."""
    log = sync.logs.get(p) or []
    queue = sync.pending.get(p, {})
    votes: list[tuple[bytes, int]] = []
    for seq in range(upto, 0, -1):
        op = log[seq - 1] if seq <= len(log) else queue.get(seq)
        if op is None:
            return None
        if 0 < op.epoch < epoch:
            break
        if op.kind == Kinds.DEPART and op.epoch == epoch:
            votes.append((op.payload[0], op.payload[1]))
    return votes


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
    if op.kind != Kinds.START or op.author == sync.host:
        return False
    previous = sync.epochs.get(op.epoch - 1)
    if previous is None or sync.starter(op.epoch) != sync.host:
        return False
    heir = next(
        (
            p
            for p in previous.participants
            if p != sync.host and p not in previous.excluded and not sync.members[p].left
        ),
        None,
    )
    return op.author == heir  # anyone else is refused at once


def mix_problem(sync: SyncPeer, op: Op, epoch: EpochLog) -> tuple[DropReason, str] | None:
    if op.author in epoch.nonces:
        return DropReason.SCHEMA, f"a second MIX in round {op.epoch}"
    ready = sync.ready_for(op.epoch, op.author, epoch.start)
    if ready is None or nonce_commitment(op.payload) != ready.payload[3]:
        return DropReason.SCHEMA, "the mix nonce does not open its author's READY commitment"
    return None


def depart_problem(sync: SyncPeer, op: Op, epoch: EpochLog) -> tuple[DropReason, str] | None:
    target, held = op.payload
    if target not in epoch.index or target == op.author:
        return DropReason.SCHEMA, "a DEPART names another participant of its round"
    if held != op.round_deps[epoch.index[target]]:
        return (
            DropReason.SCHEMA,
            "a DEPART names the target's seq its deps hold, no more and no less",
        )
    return None


def resolve_departures(sync: SyncPeer) -> bool:
    """Work out the departures again where a DEPART or an expulsion came in; True if
    any round's departures changed."""
    changed = False
    for epoch in sync.epochs.values():
        seen = (epoch.depart_ops, len(epoch.excluded))
        if seen == epoch.depart_seen:
            continue  # no new vote and no expulsion: nothing to work out again
        epoch.depart_seen = seen
        agreed = departure.resolve(epoch, vote_counts(sync, epoch))
        departed = {a: cut for a, (cut, _) in agreed.items()}
        if departed == epoch.departed:
            continue
        added = tuple(a for a in departed if a not in epoch.departed)
        epoch.departed = departed
        epoch.departed_at = {a: key for a, (_, key) in agreed.items()}
        sync._events.append(DeparturesChanged(epoch.epoch, dict(departed), added))
        sync._unscanned = True  # a successor's START may be deliverable now
        changed = True
    if changed:
        void_starts(sync)
    return changed
