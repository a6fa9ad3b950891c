"""Why an op cannot be delivered: its hash chain, Lamport discipline, deps shape, what its
author may not take back (deps never shrink, nothing after its REVEAL), membership and the
game's own check. Pure questions, no side effects.

Separate so the rules an op is judged by read in one place, apart from the queue that
applies them; authoring runs the same checks on our own op before sending it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from . import sync_membership, sync_starters
from .errors import DropReason
from .messages import NO_PREV, Kinds, Op
from .sync_limits import MAX_LAMPORT_STEP

if TYPE_CHECKING:
    from .sync import SyncPeer


def problem(sync: SyncPeer, op: Op) -> tuple[DropReason, str, tuple[bytes, int] | None] | None:
    """Why `op` cannot be delivered (reason, words, the dep it failed on), or None.
    Chain, Lamport discipline, deps shape and membership; no side effects."""
    # Every delivered op passes here: each lookup is made once (a catching-up peer runs
    # this for every op of the table).
    author = op.author
    log = sync.logs.get(author)
    previous = log[-1] if log else None
    if op.prev != (previous.hash if previous is not None else NO_PREV):
        return (
            DropReason.BROKEN_CHAIN,
            f"op {op.seq} does not chain to the author's op {op.seq - 1}",
            None,
        )
    lamport = op.lamport
    if previous is not None and lamport <= previous.lamport:
        return (
            DropReason.BACKDATED,
            "its Lamport time is not after the author's previous op",
            None,
        )
    epoch = op.epoch
    start = None
    author_seen: int | None  # what the op's deps claim of its own author (None: not named)
    if epoch == 0:
        claimed = dict(op.lobby_deps)
        author_seen = claimed.get(author, 0)
    else:
        # A START names its own participants (and is no op *in* a round already begun:
        # a former starter's START may come after its successor's, PROTOCOL.md 13.3).
        round_log = sync.epochs.get(epoch) if op.kind != Kinds.START else None
        if round_log is None and sync_starters.signed_before_its_start(sync, op):
            return None  # of a voided round: its chain and clock are all there is to judge
        participants = round_log.participants if round_log is not None else op.payload[0]
        if len(op.round_deps) != len(participants):
            return (
                DropReason.SCHEMA,
                "deps must give one seq per participant of the round",
                None,
            )
        claimed = dict(zip(participants, op.round_deps, strict=True))
        author_seen = claimed.get(author)
        if round_log is not None:
            start = round_log.start
            if lamport <= start.lamport:
                # A floor for every round op: nobody can stamp a move before the round began.
                return (DropReason.BACKDATED, "its Lamport time is before its round started", None)
    if author_seen is not None and author_seen != op.seq - 1 and (epoch or op.seq > 1):
        return DropReason.SCHEMA, "deps must count the author's own previous op", None
    # The floor of `sync_lamport.lamport_floor`, found in the same pass: every dep named
    # here is delivered (causal delivery waited for it), so both walk the same deps.
    floor = previous.lamport if previous is not None else 0
    logs, expelled = sync.logs, sync.expelled
    for dep_author, dep_seq in claimed.items():
        if not dep_seq or (dep_author in expelled and dep_seq >= expelled[dep_author]):
            continue
        seen = logs[dep_author][dep_seq - 1].lamport
        if lamport <= seen:
            return (
                DropReason.BACKDATED,
                "its Lamport time is not after an op it had seen",
                (dep_author, dep_seq),
            )
        if seen > floor:
            floor = seen
    if start is not None and start.lamport > floor:
        floor = start.lamport
    if lamport > floor + MAX_LAMPORT_STEP:
        # A lie about time: delivered, it would push every peer's clock towards the
        # ceiling, past which nobody can author (2^48).
        return (
            DropReason.BACKDATED,
            "its Lamport time is far past everything it names",
            None,
        )
    membership = sync_membership.membership_problem(sync, op)
    if membership is not None:
        return membership[0], membership[1], None
    discipline = discipline_problem(sync, op, claimed)
    if discipline is not None:
        return discipline[0], discipline[1], None
    if sync.game_check is not None:
        refused = sync.game_check(op)
        if refused is not None:
            return DropReason.SCHEMA, refused, None
    return None


def named_deps(sync: SyncPeer, op: Op) -> dict[bytes, int]:
    """A round op's deps as author -> seq, by its round's participants. (Only round ops
    are compared: lobby deps name what an op depends on, not all it had seen.)"""
    return dict(zip(participants_of(sync, op), op.round_deps, strict=False))


def participants_of(sync: SyncPeer, op: Op) -> Sequence[bytes]:
    """Whom a round op's deps name, in order: a START's own participants; any other op's
    round's (none if that round's START was voided, 13.3: its deps are not judged)."""
    if op.kind == Kinds.START:
        return op.payload[0]  # type: ignore[no-any-return]
    log = sync.epochs.get(op.epoch)
    return log.participants if log is not None else ()


def discipline_problem(
    sync: SyncPeer, op: Op, claimed: dict[bytes, int]
) -> tuple[DropReason, str] | None:
    """What an author may not take back: what it had seen (deps never go down from one of
    its ops to the next), and its REVEAL (after it, no MOVE and no second REVEAL in that
    round: a REVEAL is its author's end of the round)."""
    log = sync.logs.get(op.author)
    # Lobby deps name only what an op depends on (the OPEN, the author's own op), not all
    # it had seen: round deps are the claims of what was seen, so they are compared.
    if op.epoch and log:
        previous_round_op = log[-1] if log[-1].epoch else None
        if previous_round_op is None:
            previous_round_op = next((o for o in reversed(log) if o.epoch), None)
        if previous_round_op is not None and _named_fewer(sync, op, previous_round_op, claimed):
            return (
                DropReason.BACKDATED,
                "its deps name fewer ops of an author than its author's previous op did",
            )
    if op.kind in (Kinds.MOVE, Kinds.REVEAL) and (op.epoch, op.author) in sync.revealed:
        return (
            DropReason.SCHEMA,
            f"a {op.kind.name} after its author's REVEAL of round {op.epoch}",
        )
    return None


def _named_fewer(sync: SyncPeer, op: Op, previous: Op, claimed: dict[bytes, int]) -> bool:
    """Does `op` name fewer ops of some author than `previous`, its author's previous round
    op, did (not counting an expelled author's ops from its expulsion on)?"""
    if (
        previous.epoch == op.epoch
        and len(previous.round_deps) == len(op.round_deps)
        and previous.kind != Kinds.START
        and op.kind != Kinds.START
    ):
        # The same round: both name the same participants in the same order. Deps only
        # grow from one op to the next, so first a plain pass over the seqs (every op of a
        # round passes here), and the expulsions only if one went down.
        for seen, before in zip(op.round_deps, previous.round_deps, strict=True):
            if seen < before:
                break
        else:
            return False
        for (author, seen), before in zip(claimed.items(), previous.round_deps, strict=True):
            if seen < before and not beyond_expulsion(sync, author, seen + 1):
                return True
        return False
    before_of = named_deps(sync, previous)
    for author, seen in claimed.items():
        if seen < before_of.get(author, 0) and not beyond_expulsion(sync, author, seen + 1):
            return True
    return False


def beyond_expulsion(sync: SyncPeer, author: bytes, seq: int) -> bool:
    """An op of an expelled author from its equivocation on: never delivered here, and
    which version an honest peer saw cannot be known, so deps on it are not judged."""
    return author in sync.expelled and seq >= sync.expelled[author]
