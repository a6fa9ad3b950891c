"""Departure by agreement: how a round drops a participant that went silent (PROTOCOL.md 13).

A participant that vanishes without LEAVE (laptop lid, Wi-Fi gone) would hold back its
round's stable prefix for ever. Each remaining participant that has heard nothing from it
for the silence bound signs a DEPART op naming it and the highest of its seqs the voter
holds. The departure takes effect at one point of the round's total order, the same on
every peer:

- walk the round's ops in order; at each DEPART, look for the largest set S of live
  participants such that every live participant outside S has voted against every member
  of S (votes up to this point), and the participants outside S are a strict majority of
  the round's participants, or exactly half of them including the round's first
  participant (START order). So two halves of a split can never both drop the other: a
  strict majority is unique, and only one half holds the first participant;
- the departure is folded as soon as that DEPART is delivered (so the fold stays a function
  of the ops held, and equal vectors give equal state hashes), and it is a fact once that
  DEPART is stable: from then on the departed no longer hold back stability, and nothing
  that sorts before the DEPART can still arrive from those who stay;
- each member of S keeps its ops up to the highest seq any vote named (every such op is in
  the causal past of a vote, so every peer that holds the votes holds them) and loses the
  rest, as an expelled author does. It no longer holds back stability.

A participant proven to cheat (expelled, PROTOCOL.md 10) needs no agreement: the first
counted DEPART naming it departs it, so its seat freezes and says stuck there.

Votes are permanent for the round. Departure says nothing about later rounds: a departed
player who comes back sends READY again and plays the next round.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from .messages import Kind, Op
from .order import EpochLog


def agreed_set(
    participants: Sequence[bytes],
    live: Iterable[bytes],
    votes: Mapping[bytes, Mapping[bytes, int]],
) -> frozenset[bytes]:
    """The largest set of live participants that every other live participant has voted
    against, if the rest keep the quorum (see the module doc); empty if there is none.

    For each live participant as an anchor, the smallest group of stayers around it: who
    stays must have voted against everyone who goes, so anyone a stayer has not voted
    against stays too. (Two halves voting each other out give two such groups; the quorum
    lets at most one of them go ahead.)"""
    alive = sorted(set(live))
    best: frozenset[bytes] = frozenset()
    for anchor in alive:
        stay = {anchor}
        changed = True
        while changed:
            changed = False
            for voter in sorted(stay):
                kept = {p for p in alive if p not in stay and p not in votes.get(voter, {})}
                if kept:
                    stay |= kept
                    changed = True
        gone = frozenset(alive) - stay
        if gone and has_quorum(participants, stay) and len(gone) > len(best):
            best = gone
    return best


def has_quorum(participants: Sequence[bytes], remaining: set[bytes]) -> bool:
    """More than half of the round's participants, or exactly half with the first one."""
    doubled = 2 * len(remaining)
    return doubled > len(participants) or (
        doubled == len(participants) and participants[0] in remaining
    )


#: Whether a DEPART counts, given the departures agreed before it in the walk (`resolve`).
VoteRule = Callable[[Op, Mapping[bytes, int]], bool]


#: participant -> (the last of its seqs that counts, the order key of the agreeing DEPART)
Departures = dict[bytes, tuple[int, tuple[int, bytes]]]
#: voter -> target -> the highest `held` its counted votes named
Votes = dict[bytes, dict[bytes, int]]


def resolve(log: EpochLog, vote_counts: VoteRule | None = None) -> Departures:
    """Every departure the round's order agrees on, as participant -> (the last of its
    seqs that counts, the order key of the DEPART where it was agreed). A function of the
    ops alone (so equal vectors fold alike); it is a fact once that DEPART is stable.
    `vote_counts` may refuse a vote (its author had said READY for the next round, and
    it names someone other than that round's starter: `sync_membership`)."""
    return tally(log, vote_counts)[0]


def tally(log: EpochLog, vote_counts: VoteRule | None = None) -> tuple[Departures, Votes]:
    """`resolve`'s walk, with the votes it counted by its end (what a later agreement
    would build on: `tools.fuzz.link` asks whether any still could)."""
    votes: Votes = {}
    departed: Departures = {}

    def last_seq(target: bytes) -> int:
        """The largest `held` any counted vote named for `target` (13.2)."""
        return max(v[target] for v in votes.values() if target in v)

    for op, key in zip(log.ops, log.keys, strict=True):
        if op.kind != Kind.DEPART or not log.counts_for_order(op):
            continue
        gone = departed.get(op.author)
        if gone is not None and op.seq > gone[0]:
            continue  # a departed voter's late votes do not count
        if vote_counts is not None and not vote_counts(
            op, {a: cut for a, (cut, _) in departed.items()}
        ):
            continue
        target, held = op.payload
        mine = votes.setdefault(op.author, {})
        mine[target] = max(held, mine.get(target, 0))
        if target in log.excluded and target not in departed:
            # Proven to cheat (PROTOCOL.md 10): one vote is enough, there is no suspicion
            # left to agree on. Its seat then freezes here, at a place in the order that no
            # peer can have made stable yet, and says stuck (13.2).
            departed[target] = (last_seq(target), key)
        live = [p for p in log.participants if p not in log.excluded and p not in departed]
        for dropped in sorted(agreed_set(log.participants, live, votes)):
            departed[dropped] = (last_seq(dropped), key)
    return departed, votes


__all__ = ["Departures", "VoteRule", "Votes", "agreed_set", "has_quorum", "resolve", "tally"]
