"""The presence watch at its edges (PROTOCOL.md 13.1): a participant silent for exactly the
silence bound is silent; nobody ever judges (or votes against) itself; and a player left
alone at its round, the other expelled, goes on playing. (Found by `tools.mutate`, seed 901,
`nerts_p2p/table/presence.py`.)"""

from __future__ import annotations

import math

import pytest

from nerts_p2p.game.legal import legal_moves
from nerts_p2p.game.moves import Move
from nerts_p2p.game.rules import Rules
from nerts_p2p.table import deal_secrets
from nerts_p2p.table.events import PeerExpelled, ProtocolViolation
from nerts_p2p.table.presence import (
    ACK_BOUND,
    LAG_WARN,
    QUIET_GAP,
    SILENCE_BOUND,
    AckRequirement,
    Presence,
)
from nerts_p2p.table.replica import ReplicatedRound, SeatLagging, TableReplica
from protocol.clocks import VersionVector
from protocol.messages import Heartbeat, Kinds, Op, decode
from protocol.order import EpochLog
from tests.replication.table_helpers import (
    ManualTable,
    exchange,
    seed_showing,
    signed_move,
    three_at_play,
    tick_together,
)


def _watched_from_zero(label: str) -> tuple[list[TableReplica], EpochLog, Presence]:
    """Three at play, and a fresh presence watch of their round that began at 0.0: the
    players (the first one watches), the round's log, the watch."""
    table = three_at_play(label)
    rnd = table.players[0].current_round
    assert rnd is not None
    presence = Presence()
    presence.round_seen(rnd.number, 0.0)
    return table.players, rnd.log, presence


def test_a_participant_silent_for_exactly_the_bound_is_silent() -> None:
    (me, quiet, talking), log, presence = _watched_from_zero("bound")
    now = 20.0
    heard = {quiet.me: now - SILENCE_BOUND, talking.me: now - SILENCE_BOUND + 0.5}
    assert presence.silent(log, heard, me.me, now, playing=True) == [quiet.me]
    assert presence.silent(log, heard, me.me, now - 0.25, playing=True) == []


def test_a_participant_whose_nonce_never_came_is_silent_exactly_the_bound_after_the_start() -> None:
    # It shows signs of life all along, but never revealed its mix nonce (it never heard
    # the START): that counts as silence once the round has run for the bound, to the
    # moment. (Seed 15: `>=` made `>` kept every test green.)
    rules = Rules(seats=3)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"no-nonce/{i}") for i in range(3)])
    table.ready_all()
    me, first, gone = table.players
    me.start()
    tick_together([me, first], table.now, 0.3)
    rnd = me.current_round
    assert rnd is not None
    assert gone.me not in rnd.log.nonces
    assert first.me in rnd.log.nonces
    presence = Presence()
    presence.round_seen(rnd.number, 0.0)
    early, on_time = SILENCE_BOUND - 0.25, SILENCE_BOUND
    heard = {first.me: early, gone.me: early}
    assert presence.silent(rnd.log, heard, me.me, early, playing=True) == []
    heard = {first.me: on_time, gone.me: on_time}
    assert presence.silent(rnd.log, heard, me.me, on_time, playing=True) == [gone.me]


def test_nobody_votes_against_itself_however_long_a_round_lasts() -> None:
    table = three_at_play("no-self-vote")
    table.settle(SILENCE_BOUND + 2.0)
    for i, player in enumerate(table.players):
        departs = [op for log in player.sync.logs.values() for op in log if op.kind == Kinds.DEPART]
        assert departs == [], f"player {i} saw a vote while everyone was there"
        assert not [e for e in table.events[i] if isinstance(e, ProtocolViolation)]


def test_the_player_left_alone_after_the_other_is_expelled_plays_on() -> None:
    rules = Rules(seats=2)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"alone/{i}") for i in range(2)])
    table.start_round()
    table.settle(0.5)
    host, cheat = table.players
    base = cheat.sync.clock.value + 1
    last = cheat.sync.logs[cheat.me][-1].hash
    for datagram in (signed_move(cheat, 0, last, base), signed_move(cheat, 0, last, base + 7)):
        host.receive(datagram, "cheat", table.now)
    assert [e.author for e in host.events() if isinstance(e, PeerExpelled)] == [cheat.me]
    rnd = host.current_round
    assert rnd is not None
    assert cheat.me in rnd.log.excluded
    now = table.now
    for _ in range(20):  # several looks at the acknowledgments, with nobody else to ask
        now += 0.05
        host.tick(now)
    played = host.play(legal_moves(rnd.state, rnd.seat_of[host.me])[0])
    assert isinstance(played, Op)
    said = [decode(d, table=host.sync.table) for _, d in host.outgoing()]
    assert played.hash in [m.hash for m in said if isinstance(m, Op)], "the move goes out"


def test_a_voter_votes_once_against_each_silent_participant_while_nothing_new_comes() -> None:
    # Cut off from both others, a player votes each of them out once; looking again every
    # quarter second while it holds nothing new of them, it neither votes again nor reports
    # a refused vote (found by `tools.mutate`, seed 901, `departure_votes.py`).
    table = three_at_play("vote-once")
    host, alone, other = table.players
    alone.events()
    tick_together([alone], table.now, SILENCE_BOUND + 3.0)  # what it says reaches nobody
    votes = [op.payload[0] for op in alone.sync.logs[alone.me] if op.kind == Kinds.DEPART]
    assert sorted(votes) == sorted([host.me, other.me])
    assert not [e for e in alone.events() if isinstance(e, ProtocolViolation)]


def test_a_seat_is_flagged_lagging_the_moment_it_has_lagged_for_the_warning_bound() -> None:
    # One player hears the others' heartbeats but none of their ops, so it cannot
    # acknowledge the moves it is shown; watched every quarter second (times exact in
    # binary), it is flagged at the look where it has lagged exactly LAG_WARN, not one
    # look later. (Seed 16: `>=` made `>` kept every test green.)
    table = three_at_play("lag-edge")
    mover, blind, _ = table.players
    now = float(math.ceil(table.now))
    flagged: list[SeatLagging] = []

    def only_heartbeats_to_blind(_: TableReplica, listener: TableReplica, datagram: bytes) -> bool:
        return listener is blind and not isinstance(
            decode(datagram, table=blind.sync.table), Heartbeat
        )

    while not flagged:
        assert now < table.now + 10.0
        now += 0.25
        rnd = mover.current_round
        assert rnd is not None
        seat = rnd.seat_of[mover.me]
        mover.play(Move(seat, "turn" if rnd.state.seats[seat].stock else "recycle"))
        for replica in table.players:
            replica.tick(now)
        exchange(table.players, now, drop=only_heartbeats_to_blind)
        flagged = [e for e in mover.events() if isinstance(e, SeatLagging)]
    assert [(e.author, e.seconds) for e in flagged] == [(blind.me, LAG_WARN)]


#: Two participants' key ids, for the acknowledgment book on its own (no table needed):
#: one has moved, the other owes an acknowledgment of that move.
_MOVER, _OWING = b"mover-id", b"owing-id"


def test_an_acknowledgment_owed_in_one_round_is_not_owed_in_the_next() -> None:
    # A participant owed an acknowledgment when the round ended. The next round starts
    # every requirement over: what it owed before is not held against it. (Found by
    # `tools.mutate`, seed 18: with `required` kept, it owed from round 1's moment on.)
    presence = Presence()
    presence.reset(1)
    presence.required[_OWING] = AckRequirement(0.0, VersionVector({_MOVER: 5}))
    assert presence.lag(_OWING, 10.0) == 10.0
    presence.reset(2)
    assert presence.lag(_OWING, 10.0) == 0.0
    assert presence.required == {}


def test_a_participant_unheard_for_exactly_the_quiet_gap_is_in_a_silence() -> None:
    # Unheard from 1.0 to a look at exactly 1.0 + QUIET_GAP, then heard again: the time it
    # was silent (to that look) does not count as time it owed an acknowledgment. A look
    # a moment sooner sees no silence. (Found by `tools.mutate`, seed 18: `>=` made `>`.)
    for first_look, silent in ((1.0 + QUIET_GAP, QUIET_GAP), (1.0 + QUIET_GAP - 0.25, 0.0)):
        presence = Presence()
        presence.required[_OWING] = req = AckRequirement(0.0, VersionVector({_MOVER: 5}))
        presence.note_silences({_OWING: 1.0}, first_look)
        presence.note_silences({_OWING: 1.7}, 1.75)
        assert req.silent == silent
        assert req.owed(1.75) == 1.75 - silent


def test_the_nonce_bound_runs_from_the_rounds_start_for_a_peer_that_may_not_sign_yet(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The first player has just restarted without its log (a quiet restart: it may sign
    # nothing for a while) when round 1 begins. The third hears everything and says so,
    # but never reveals its mix nonce (a modified client). The first player's clock for
    # that nonce runs from when the round began here, not from when it may sign again:
    # its vote comes the bound after the START. (Seed 20: with `watch_presence`'s note of
    # the round's beginning deleted, the round began for it at its first look that could
    # vote, three seconds on, and so did the bound.)
    rules = Rules(seats=3)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"began/{i}") for i in range(3)])
    table.ready_all()
    host, first, mute = table.players
    reveal = deal_secrets.reveal_nonce

    def all_but_the_mute(replica: TableReplica, rnd: ReplicatedRound) -> None:
        if replica is not mute:
            reveal(replica, rnd)

    monkeypatch.setattr(deal_secrets, "reveal_nonce", all_but_the_mute)
    first.sync.quarantine(hold=3.0)
    host.start()
    now = tick_together(table.players, table.now, 0.3)
    assert not first.can_author
    began = now
    voted_at = None
    while voted_at is None and now < began + SILENCE_BOUND + 5.0:
        now = tick_together(table.players, now, 0.05)
        if any(op.kind == Kinds.DEPART for op in first.sync.logs[first.me]):
            voted_at = now
    assert first.can_author
    assert voted_at is not None, "the first player never voted against the mute third"
    assert SILENCE_BOUND - 0.5 <= voted_at - began <= SILENCE_BOUND + 0.5, voted_at - began


def test_a_participant_that_owed_an_acknowledgment_for_exactly_the_bound_counts_as_silent() -> None:
    # Heard from all along, and owing what it was asked to acknowledge since 0.0: at
    # exactly ACK_BOUND it counts as silent (the blind peer), a look sooner it does not.
    # (Found by `tools.mutate`, seed 20: `>=` made `>` kept every test green.)
    (me, owing, other), log, presence = _watched_from_zero("ack-bound")
    presence.required[owing.me] = AckRequirement(0.0, VersionVector({other.me: 99}))
    for now, silent in ((ACK_BOUND - 0.25, []), (ACK_BOUND, [owing.me])):
        heard = {owing.me: now, other.me: now}
        assert presence.silent(log, heard, me.me, now, playing=True) == silent
