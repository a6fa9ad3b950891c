"""Who may do what at the table: membership checks of an op (OPEN, JOIN, ADMIT, LEAVE,
READY, START, MIX, DEPART), applying a delivered op to the membership, and the
departures agreed by DEPART votes (PROTOCOL.md 6, 13, 17). Who starts a round, and when
a START counts, is `sync_starters`.

Separate because it is the table's rules of membership, not the mechanics of delivery:
delivery asks it whether an op may count and tells it when one did.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import admission, departure, sync_starters
from .errors import DropReason
from .messages import PLAYER, SPECTATOR, Kind, Kinds, Op
from .order import EpochLog, nonce_commitment, round_mix
from .signing import key_id
from .sync_events import DeparturesChanged

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
        if author != sync_starters.starter(sync, op.epoch, op):
            if sync_starters.former_starter(sync, op):
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
        if not sync_starters.start_counts(sync, op):
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
        agreed = departure.resolve(epoch, sync_starters.vote_counts(sync, epoch))
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
        sync_starters.void_starts(sync)
    return changed
