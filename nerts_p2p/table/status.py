"""The table between rounds, as every shell asks about it: who sits, who is ready, whether
the next round may be started now, and whether a member has left.

Windows, the CLI's autopilot and tests ask these questions; the answers are rules of the
table (PROTOCOL.md 5: a round needs at least two ready players, two per seat with
partnerships; only the round's starter starts it), so they live here and not in a shell.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nerts_p2p.game.rules import Rules
from protocol.messages import PLAYER, Kinds

from .presence import SILENCE_BOUND

if TYPE_CHECKING:
    from .replica import TableReplica
    from .round import ReplicatedRound


def players_to_start(rules: Rules) -> int:
    """The fewest ready players a round can be started with (`TableReplica.start`)."""
    return 2 * (2 if rules.partnerships else 1)


def present_players(replica: TableReplica) -> list[tuple[bytes, str]]:
    """Players at the table who have not left, in the order they joined: (key id, name)."""
    return [
        (author, member.name)
        for author, member in replica.sync.members.items()
        if member.role == PLAYER and not member.left
    ]


def players_awaited(replica: TableReplica) -> list[bytes]:
    """The players the lobby's round waits for: present (no LEAVE), not expelled, not
    vanished, and not voted out of the latest round as silent (PROTOCOL.md 13) unless
    they said READY for the lobby's round (one back from a cut link plays on). Vanished:
    silent for `SILENCE_BOUND` in the lobby, ready or not (no vote can be cast there
    against anyone but the next starter, 13.1; a starter that vanished after its READY is
    voted out of the finished round with that READY still on the table). A player who
    quit without a word must not hold the table up for ever, not even before its first
    round (its seat is free for a newcomer); one who comes back plays the round after."""
    sync = replica.sync
    latest = sync.epochs.get(max(sync.epochs)) if sync.epochs else None
    gone = set(latest.departed) if latest is not None else set()
    ready = set(replica.ready_players(lobby_round(replica)))
    vanished = vanished_players(replica)
    return [
        author
        for author, _ in present_players(replica)
        if author not in sync.expelled
        and author not in vanished
        and (author not in gone or author in ready)
    ]


def vanished_players(replica: TableReplica) -> set[bytes]:
    """Members other than us with no sign of life for `SILENCE_BOUND` (PROTOCOL.md 13.1's
    bound: a laptop lid closed, a process killed, a cable pulled)."""
    sync = replica.sync
    return {
        author
        for author, when in sync.signs_of_life().items()
        if author != replica.me and sync.now - when >= SILENCE_BOUND
    }


def ready_to_play(replica: TableReplica, number: int) -> list[bytes]:
    """The players ready for round `number` who have not vanished since (`ready_players`
    less `vanished_players`): those a START lists (`lobby.start`)."""
    vanished = vanished_players(replica)
    return [p for p in replica.ready_players(number) if p not in vanished]


def seats_taken(replica: TableReplica) -> int:
    """Players at the table, as its announcement counts them: not those who left or
    vanished (a seat whose player's machine died in the lobby is free for a newcomer)."""
    vanished = vanished_players(replica)
    return sum(1 for author, _ in present_players(replica) if author not in vanished)


def silences_counted(replica: TableReplica) -> dict[bytes, float]:
    """The players the table waits for now, each with the earliest time from which its
    silence counts (-inf: all of it). Before the first round, and at the host between
    rounds, those of `players_awaited`, and before the first round the host as well (only
    it starts round 1). Otherwise the participants still in the latest round; while it is
    played, their silence counts from the round's start here, as the votes count it
    (PROTOCOL.md 13.1): one who vanished before it began is voted out ten seconds in and
    the round goes on, so a shell must not give up on it first."""
    rnd = replica.current_round
    sync = replica.sync
    if rnd is None or (rnd.final is not None and sync.host == replica.me):
        awaited = players_awaited(replica)
        if rnd is None and sync.host is not None and sync.host not in awaited:
            awaited.append(sync.host)
        return dict.fromkeys((a for a in awaited if a != replica.me), float("-inf"))
    began = float("-inf")
    if rnd.final is None:
        began = replica.presence.began.get(rnd.number, began)
    return {
        a: began
        for a in rnd.seat_of
        if a != replica.me and a not in rnd.log.departed and a not in sync.expelled
    }


def has_left(replica: TableReplica, author: bytes | None = None) -> bool:
    """Whether `author` (default: we) has sent its LEAVE (it then authors nothing more)."""
    member = replica.sync.members.get(replica.me if author is None else author)
    return member is not None and member.left


def lobby_round(replica: TableReplica) -> int:
    """The round the lobby prepares: the upcoming one between rounds, and while a round is
    played the one after it (a READY for r+1 may come while r is played: PROTOCOL.md 15)."""
    upcoming = replica.upcoming_round()
    if upcoming is not None:
        return upcoming
    return max(replica.rounds) + 1  # no upcoming round: one is being played (or the match won)


def everyone_ready_to_start(replica: TableReplica) -> bool:
    """We are the starter of the upcoming round and may start it now with every player
    it waits for (`players_awaited`): at least `players_to_start`, every one ready, no
    more than the table seats."""
    rules = replica.rules
    upcoming = replica.upcoming_round()
    if rules is None or upcoming is None:
        return False
    needed = min(rules.players, max(players_to_start(rules), len(players_awaited(replica))))
    return replica.may_start(upcoming, needed)


def too_few_to_play_on(replica: TableReplica) -> bool:
    """Between rounds, fewer players are left than a round needs (the others left or were
    voted out as silent): the match cannot go on."""
    rules = replica.rules
    return (
        rules is not None
        and bool(replica.rounds)
        and replica.upcoming_round() is not None
        and len(players_awaited(replica)) < players_to_start(rules)
    )


def may_start_full_table(replica: TableReplica) -> bool:
    """We may start the upcoming round and every seat is taken by a ready player (a
    practice table waits for all its bots)."""
    rules = replica.rules
    upcoming = replica.upcoming_round()
    if rules is None or upcoming is None:
        return False
    return (
        replica.may_start(upcoming, rules.players)
        and len(ready_to_play(replica, upcoming)) >= rules.players
    )


def others_ready(replica: TableReplica) -> bool:
    """Every other player present is ready for the lobby's round, and there is at least
    one: the starter's Start button can be pressed (its own READY comes with it)."""
    rules = replica.rules
    if rules is None or replica.upcoming_round() is None:
        return False
    number = lobby_round(replica)
    ready = set(replica.ready_players(number))
    vanished = vanished_players(replica)
    others = [a for a, _ in present_players(replica) if a != replica.me and a not in vanished]
    return (
        len(others) + 1 >= players_to_start(rules)
        and all(a in ready for a in others)
        and number not in replica.sync.epochs
        and replica.sync.starter(number) == replica.me
    )


def match_won(replica: TableReplica) -> bool:
    """The match is over: the last round is final and a seat reached the target."""
    rnd = replica.current_round
    return rnd is not None and rnd.final is not None and rnd.final.match_winner is not None


def everyone_else_left(replica: TableReplica) -> bool:
    """Others were at the table, and every one of them has sent its LEAVE."""
    others = [m for author, m in replica.sync.members.items() if author != replica.me]
    return bool(others) and all(m.left for m in others)


def moves_open(rnd: ReplicatedRound) -> bool:
    """Moves of this round count now: every participant's mix nonce is here, or it owes
    none any more (departed, expelled). Before that `TableReplica.play` refuses (the
    moves' order depends on the nonces, PROTOCOL.md 6; `nerts_p2p.table.playing` checks
    the same), so a shell shows the round as being dealt."""
    log = rnd.log
    return all(p in log.nonces or not log.owes_nonce(p, (2**62, b"")) for p in log.participants)


def round_began_full(replica: TableReplica, number: int) -> bool:
    """Round `number` began with every seat of the table taken. A player it began without
    is then turned away ("table full"); with a seat left free it only sits the round out
    (its READY had not reached the starter: the host voted out as it started, whose heir
    started the round, PROTOCOL.md 13.3), and plays the next."""
    rnd, rules = replica.rounds.get(number), replica.rules
    return rnd is not None and rules is not None and len(rnd.seat_of) >= rules.players


def turned_away(replica: TableReplica, number: int) -> bool:
    """Round `number` began full, without us, after our JOIN: there was no seat for us
    ("table full"). A round that began before we joined (one a newcomer catches up on) says
    nothing about the seats it will find free at the next."""
    log = replica.sync.epochs.get(number)
    join = next((op for op in replica.sync.logs.get(replica.me, []) if op.kind == Kinds.JOIN), None)
    return (
        round_began_full(replica, number)
        and log is not None
        and join is not None
        and log.start.lamport > join.lamport
    )
