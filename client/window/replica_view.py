"""Reading a `TableReplica` the way the window shows it, for every kind of table session.

The practice table (replicas in this process) and the network table (one replica on the
real node) show the same things: each seat's name, which of our cards are still pending,
and the notices a round's events call for. Both read them here, so both say the same.
"""

from __future__ import annotations

from dataclasses import dataclass

from nerts_p2p.game.cards import card_name
from nerts_p2p.game.moves import PLAY
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.state import ENDED_NERTS
from nerts_p2p.table.replica import (
    GameEvent,
    PeerExpelled,
    ProtocolViolation,
    RaceLost,
    ReplicatedRound,
    RoundEnded,
    RoundFinal,
    RoundVoided,
    SeatDeparted,
    TableReplica,
)

from .session import (
    MessageNotice,
    NertsNotice,
    Notice,
    RaceLostNotice,
    RotationNotice,
    RoundResult,
    RoundScoredNotice,
)


def seat_names(replica: TableReplica, rnd: ReplicatedRound | None, seats: int) -> tuple[str, ...]:
    """Each seat's player name in `rnd` ("seat K" before a round deals the seats)."""
    if rnd is None:
        return tuple(f"seat {s}" for s in range(seats))
    members = replica.sync.members
    out = []
    for seat in range(rnd.rules.seats):
        member = members.get(rnd.dealer[seat])
        out.append(member.name if member is not None else f"seat {seat}")
    # Names are chosen by people and need not differ: "Nerts! called by sam" must still
    # say which sam.
    return tuple(
        f"{name} (seat {seat})" if out.count(name) > 1 else name for seat, name in enumerate(out)
    )


def pending_cards(replica: TableReplica, rnd: ReplicatedRound) -> frozenset[int]:
    """Cards of our moves that are applied but not yet stable (they may still lose a race)."""
    stable = rnd.log.stable_count()
    me = replica.me
    return frozenset(
        step.move.card
        for step in rnd.steps[stable:]
        if step.op.author == me
        and step.applied
        and step.move is not None
        and step.move.action == PLAY
    )


@dataclass
class EventReader:
    """Turns a replica's game events into notices, and keeps the rounds' results."""

    replica: TableReplica
    rotations_announced: int = 0

    def __post_init__(self) -> None:
        self.results: list[RoundResult] = []

    def notices(self, events: list[GameEvent]) -> list[Notice]:
        replica = self.replica
        rnd = replica.current_round
        seats = rnd.rules.seats if rnd is not None else 0
        names = seat_names(replica, rnd, seats)
        out: list[Notice] = []
        for event in events:
            if isinstance(event, RaceLost):
                who = names[event.winner_seat] if event.winner_seat is not None else "another seat"
                text = f"{who} was first: your {card_name(event.move.card)} goes back"
                out.append(RaceLostNotice(event.move, event.winner_seat, text))
            elif isinstance(event, RoundEnded):
                if event.ended_by == ENDED_NERTS:
                    seat = event.called_by
                    who = names[seat] if seat is not None and seat < len(names) else "someone"
                    out.append(NertsNotice(seat, f"Nerts! called by {who}"))
                else:
                    out.append(RotationNotice(-1, "Everyone is stuck again: the round is over"))
            elif isinstance(event, RoundFinal):
                finished = replica.rounds[event.round]
                state = finished.state
                count = finished.rules.seats
                result = RoundResult(
                    event.round,
                    event.scores,
                    event.cheaters,
                    event.totals,
                    state.ended_by or "",
                    state.called_by,
                    event.match_winner,
                    tuple(finished.dealer[s] for s in range(count)),
                    seat_names(replica, finished, count),
                )
                self.results.append(result)
                out.append(RoundScoredNotice(result))
            elif isinstance(event, SeatDeparted):
                who = names[event.seat] if event.seat < len(names) else f"seat {event.seat}"
                out.append(MessageNotice(f"{who} left the table: the seat is frozen"))
            elif isinstance(event, RoundVoided):
                member = replica.sync.members.get(event.author)
                who = member.name if member is not None else "a former starter"
                out.append(
                    MessageNotice(
                        f"round {event.round} as {who} started it did not count: the others "
                        "had voted it out; the next in line starts the round"
                    )
                )
            elif isinstance(event, PeerExpelled):
                out.append(MessageNotice("a peer was expelled for cheating"))
            elif isinstance(event, ProtocolViolation):
                out.append(MessageNotice(f"protocol problem: {event.reason}"))
        out.extend(self._rotation(rnd))
        return out

    def _rotation(self, rnd: ReplicatedRound | None) -> list[Notice]:
        if rnd is None or rnd.state.rotations <= self.rotations_announced:
            return []
        self.rotations_announced = rnd.state.rotations
        text = "Everyone was stuck: every stock turns over, top card to bottom"
        return [RotationNotice(rnd.state.rotations, text)]


def rules_in_words(rules: Rules) -> list[str]:
    """The table's rules as a player reads them in the lobby."""
    per_seat = " (two players per seat)" if rules.partnerships else ""
    lines = [
        f"Up to {rules.seats} seats{per_seat}, {rules.nerts_size}-card Nerts piles, "
        f"{rules.work_piles} work piles, stock turned {rules.draw} at a time"
    ]
    end = f"Match to {rules.target} points"
    if rules.match_rounds:
        end += f" or {rules.match_rounds} round{'s' if rules.match_rounds != 1 else ''}"
    if rules.match_spread:
        end += f", or a lead of {rules.match_spread}"
    lines.append(end)
    score = f"Each foundation card +1, each card left in your Nerts pile -{rules.nerts_penalty}"
    if rules.caller_bonus:
        score += f", calling Nerts +{rules.caller_bonus}"
    lines.append(score)
    extras = []
    if rules.jokers:
        extras.append(f"{rules.jokers} joker{'s' if rules.jokers != 1 else ''}")
    if rules.must_call:
        extras.append("Nerts must be called")
    if rules.nerts_builds:
        extras.append("builds on Nerts tops")
    if rules.aces_first:
        extras.append("Aces first")
    if not rules.slide_under:
        extras.append("no sliding under")
    if rules.stuck_ends_round:
        extras.append("all stuck ends the round")
    if not rules.fill_from_work:
        extras.append("empty piles fill from Nerts or waste only")
    if extras:
        lines.append("Also: " + ", ".join(extras))
    return lines
