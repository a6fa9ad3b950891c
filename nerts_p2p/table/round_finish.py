"""Ending a round: once its end and every participant's REVEAL are stable, audit the round
from the revealed seeds, name the cheaters, score it and add to the match totals
(`RoundFinal`), the same on every peer.

Separate because it is the fair deal's verdict, judged from stable ops alone, apart from
the folding that produced the state it judges.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nerts_p2p.game.audit import AuditReport, audit_round
from nerts_p2p.game.scoring import match_winner, score_round

from . import deal_secrets
from .commitments import deal_commitment
from .events import RoundFinal
from .round import ReplicatedRound

if TYPE_CHECKING:
    from .replica import TableReplica


def progress(replica: TableReplica) -> None:
    """Reveal our seed once the end is stable; finish rounds whose reveals are stable."""
    for rnd in replica.rounds.values():
        if rnd.final is not None:
            continue
        if (
            replica.can_author
            and replica.me in rnd.log.index  # we play it (a spectator authors nothing)
            and rnd.log.excluded.get(replica.me) is None
            # Nothing of ours may hang on a START that might still be voided (13.3); a
            # replay, which authors nothing, still finishes the round.
            and replica.sync.start_confirmed(rnd.number)
        ):
            deal_secrets.reveal_nonce(replica, rnd)
            if not rnd.shared and rnd.rules.partnerships:
                deal_secrets.share_seed(replica, rnd)
            if not rnd.revealed and replica.me in rnd.seat_of and rnd.end_is_stable():
                deal_secrets.reveal(replica, rnd)
        if rnd.end_is_stable() and reveals_stable(replica, rnd):
            finish(replica, rnd)


def reveals_stable(replica: TableReplica, rnd: ReplicatedRound) -> bool:
    """Every participant still in the round has revealed (a partner that deals no seed: its
    end marker), and its REVEAL is stable (an op is
    stable exactly when its Lamport time is within the round's stable bound)."""
    bound = rnd.log.stable_bound()
    return all(
        author in rnd.reveals and rnd.reveals[author].lamport <= bound
        for author in rnd.seat_of
        if rnd.log.counts_author(author)
    )


def finish(replica: TableReplica, rnd: ReplicatedRound) -> None:
    cheaters: set[int] = set()
    seeds: list[bytes] = []
    departed = departed_in_play(rnd)
    # A departed seat is taken at its word; one whose dealer was expelled (proven to cheat,
    # then voted out at once: PROTOCOL.md 10) is not excused: it is judged as any seat is.
    excused = frozenset(s for s in departed if rnd.dealer[s] not in rnd.log.excluded)
    for seat in range(rnd.rules.seats):
        author = rnd.dealer[seat]
        reveal = rnd.reveals.get(author)
        if reveal is not None and not rnd.log.counts_for_order(reveal):
            # Its author was expelled from before it: it counts nowhere, whether or not
            # this peer delivered it before the proof arrived (issue 9, `fuzz mutate`).
            reveal = None
        seed, salt = reveal.payload if reveal is not None else (bytes(32), bytes(16))
        if deal_commitment(seed, salt) != rnd.commitments[author] and (
            reveal is not None or seat not in excused
        ):
            cheaters.add(seat)
        seeds.append(seed)
    # A REVEAL (or end marker) that had not seen the op that ended the round was made
    # before its author knew the round was over: honest peers never do that.
    for author, reveal in rnd.reveals.items():
        if rnd.log.counts_author(author) and not rnd.covers_end(reveal):
            cheaters.add(rnd.seat_of[author])
    # The audit replays the round from the seeds and must reach the fold's end state (in
    # public knowledge); `report.diverged` says if it did not. A departed dealer (one that
    # went silent, not an expelled one) never revealed: its seat is taken at its word (the
    # audit's redaction), not judged.
    end = rnd.states[-1]
    report = audit_round(rnd.rules, seeds, rnd.start_state, rnd.moves_in_fold_order(), end)
    if excused:
        report = AuditReport(
            tuple(m for m in report.mismatches if m.seat not in excused), report.diverged
        )
    cheaters |= report.cheaters
    scores = score_round(end, cheaters=frozenset(cheaters))
    for score in scores:
        player = rnd.dealer[score.seat]
        replica.totals[player] = replica.totals.get(player, 0) + score.score
    totals = tuple(replica.totals[rnd.dealer[s]] for s in range(rnd.rules.seats))
    rnd.final = RoundFinal(
        rnd.number,
        scores,
        frozenset(cheaters),
        report,
        totals,
        match_winner(totals, rnd.rules, rnd.number),
        departed,
    )
    replica._events.append(rnd.final)


def departed_in_play(rnd: ReplicatedRound) -> frozenset[int]:
    """The seats all of whose players departed without a counted REVEAL (none, or one
    past the last seq the votes kept): voted out while the round was played (or at its
    end, owing the reveal), so the round was finished without them and their seats are
    taken as they lay. One voted out after revealing had
    played the whole round: its votes came after the end (most often against the next
    round's starter, PROTOCOL.md 13.1), a peer that finished the round before them never
    counted them, and one that catches up later (a restarted host) must print the same
    result."""
    log = rnd.log
    return rnd.seats_of_only(
        p
        for p in log.departed_at
        if (reveal := rnd.reveals.get(p)) is None or not log.counts(reveal)
    )
