"""Rules of `TableReplica` (and the sync layer under it) that no other test pinned, found by
`tools.mutate`: what a round's stable state is, a late joiner's request for the table, the
deal a host that readied twice starts with, departures whatever order a round's ops arrive
in, a successor's START that arrives before the host's departure, cheaters named by the
audit and by an early REVEAL, members' names, and who won a lost race."""

from __future__ import annotations

import hashlib

import pytest

from nerts_p2p.game.deck import deal_seat
from nerts_p2p.game.engine import apply, complete
from nerts_p2p.game.errors import Rejection
from nerts_p2p.game.moves import FROM_NERTS, NEW_FOUNDATION, TO_WORK, Move, move_text
from nerts_p2p.game.position import state_hash
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.state import GameState
from nerts_p2p.table.replica import RaceLost, RoundFinal, RoundStarted, TableReplica
from protocol.messages import SPECTATOR, Kind, Op
from protocol.signing import SigningKeyPair
from protocol.sync import BROADCAST, DeparturesChanged, OpRejected, SyncPeer
from tests.replication.table_helpers import (
    ManualTable,
    call_nerts,
    face,
    one_card_nerts_table,
    seed_showing,
    three_at_play,
)
from tools.mesh import PeerMesh


def _table(players: int = 2) -> ManualTable:
    rules = Rules(seats=players)
    seeds = [seed_showing(rules, [], label=f"replica-rules/{i}") for i in range(players)]
    table = ManualTable(rules, seeds)
    table.start_round()
    table.settle(0.3)
    return table


def test_a_rounds_stable_state_is_the_state_after_its_stable_ops_only() -> None:
    table = _table()
    mover = table.players[0]
    rnd = mover.current_round
    assert rnd is not None
    assert mover.seat is not None
    settled = state_hash(rnd.state)
    assert state_hash(rnd.stable_state) == settled
    assert rnd.log.stable_count() == len(rnd.log.ops)
    # Our own move shows at once, but the other player may still sort an op before it.
    mover.play(Move(mover.seat, "turn"))
    assert state_hash(rnd.state) != settled
    assert rnd.log.stable_count() < len(rnd.log.ops)
    assert state_hash(rnd.stable_state) == settled
    table.collect()
    table.deliver_all()
    table.settle(0.5)
    assert state_hash(rnd.stable_state) == state_hash(rnd.state) != settled


def test_a_late_joiner_gets_the_tables_open_from_a_host_that_has_played_on() -> None:
    table = _table()
    host = table.players[0]
    assert host.sync.delivered(host.me) > 1  # the OPEN is far behind the host's latest op
    late = TableReplica.joining(
        SigningKeyPair(hashlib.sha256(b"late joiner").digest()),
        host.sync.table,
        name="late",
        role=SPECTATOR,
        randomness=lambda n: bytes(n),
    )
    late.request_table(host.me, 0, table.now)
    for _, request in late.outgoing():
        host.receive(request, "late", table.now)
    for destination, answer in host.outgoing():
        assert destination == "late"
        late.receive(answer, 0, table.now)
    assert late.sync.open_op is not None
    assert late.sync.open_op.author == host.me
    # Then it asks to be admitted (PROTOCOL.md 17) and joins once the host's ADMIT is here.
    assert late.join() is None
    now = table.now
    for _ in range(20):
        now += 0.1
        host.tick(now)
        late.tick(now)
        for _, datagram in late.outgoing():
            host.receive(datagram, "late", now)
        for destination, answer in host.outgoing():
            if destination in ("late", BROADCAST):
                late.receive(answer, 0, now)
    assert late.is_member
    assert isinstance(late.sync.logs[late.me][0], Op)


def test_a_host_that_readied_twice_starts_the_round_with_its_latest_deal() -> None:
    rules = Rules(seats=2)
    seeds = [seed_showing(rules, [], label=f"twice/{i}") for i in range(2)]
    table = ManualTable(rules, seeds)
    host, other = table.players
    host.ready()  # the deal of `seeds[0]`
    again = host.ready()  # a fresh deal replaces it
    assert again.payload[2] != host.sync.readies[(1, host.me)][0].payload[2]
    other.ready()
    table.collect()
    table.deliver_all()
    host.start()
    table.collect()
    table.deliver_all()
    for i, replica in enumerate(table.players):
        assert [e.round for e in table.events[i] if isinstance(e, RoundStarted)] == [1]
        rnd = replica.current_round
        assert rnd is not None
        seat = rnd.seat_of[host.me]
        shown = [rnd.state.seats[seat].nerts_top, *(p[-1] for p in rnd.state.seats[seat].work)]
        assert [c & 63 if c is not None else None for c in shown] == list(again.payload[2])


def _voted_out() -> SyncPeer:
    """A spectator's view of a two-player round whose second participant vanished and was
    voted out by the first (whose vote alone carries, PROTOCOL.md 13): one DEPART."""
    mesh = PeerMesh(players=2, rules=Rules(seats=2), seed=4, spectators=1)
    mesh.run_for(6.0)
    second = mesh.replicas[0].sync.epochs[1].participants[1]
    mesh.vanish(next(i for i, r in enumerate(mesh.replicas) if r.me == second))
    mesh.run(until=600, rounds=1)
    witness = mesh.replicas[2].sync
    epoch = witness.epochs[1]
    assert epoch.departed, "the vanished player was never voted out"
    assert [op.kind for op in epoch.ops].count(Kind.DEPART) == 1
    return witness


def _all_ops(peer: SyncPeer) -> list[Op]:
    return sorted((op for log in peer.logs.values() for op in log), key=lambda op: op.lamport)


def _late_peer(table: bytes) -> SyncPeer:
    return SyncPeer(SigningKeyPair(hashlib.sha256(b"late").digest()), table)


def test_a_peer_that_gets_a_rounds_ops_before_its_start_reaches_the_same_departure() -> None:
    witness = _voted_out()
    epoch = witness.epochs[1]
    start = epoch.start
    ops = _all_ops(witness)
    lobby = [op for op in ops if not op.epoch and op.lamport < start.lamport]
    rest = [op for op in ops if op not in lobby and op is not start]
    # The round's ops arrive (backwards) before its START: all of them wait, then are
    # delivered at once when the START comes.
    late = _late_peer(witness.table)
    for i, op in enumerate([*lobby, *reversed(rest), start]):
        late.receive(op.datagram(), ("witness", i), 0.0)
    assert late.vector() == witness.vector()
    assert late.epochs[1].ops == epoch.ops
    assert late.epochs[1].departed == epoch.departed
    changed = [e for e in late.events() if isinstance(e, DeparturesChanged)]
    assert [e.departed for e in changed] == [epoch.departed]


def test_a_departure_is_agreed_the_moment_its_depart_is_delivered() -> None:
    witness = _voted_out()
    epoch = witness.epochs[1]
    (depart,) = [op for op in epoch.ops if op.kind == Kind.DEPART]
    late = _late_peer(witness.table)
    # Everything up to the DEPART, in order; the DEPART is the last op delivered.
    for i, op in enumerate(o for o in _all_ops(witness) if o.lamport <= depart.lamport):
        late.receive(op.datagram(), ("witness", i), 0.0)
        if op is not depart:
            assert not late.epochs.get(1) or not late.epochs[1].departed
    assert late.delivered(depart.author) == depart.seq
    assert late.epochs[1].departed == epoch.departed
    (changed,) = [e for e in late.events() if isinstance(e, DeparturesChanged)]
    assert changed.added == tuple(epoch.departed)


def _finals(table: ManualTable, i: int) -> list[RoundFinal]:
    return [e for e in table.events[i] if isinstance(e, RoundFinal)]


def test_a_player_who_lies_about_the_cards_it_turned_up_is_named_a_cheater_by_the_audit() -> None:
    table = one_card_nerts_table("liar")
    liar = table.players[1]
    rnd = liar.current_round
    assert rnd is not None
    truth = complete(rnd.state, Move(1, "turn"))
    seed = liar.my_secrets[1][0]
    hidden = [c for c in deal_seat(rnd.rules, 1, seed).stock if c not in truth.reveals]
    lie = truth._replace(reveals=(hidden[-1], *truth.reveals[1:]))
    # Nobody else can tell from what it has seen: the lie is folded everywhere else...
    liar.sync.author(Kind.MOVE, 1, move_text(lie).split(" ", 1)[1])
    table.collect()
    table.deliver_all()
    call_nerts(table)
    # ...until the seeds are revealed and the audit replays the round.
    for i in (0, 1):
        (final,) = _finals(table, i)
        assert final.cheaters == frozenset({1})
        assert final.scores[1].score <= 0
        assert [m.seat for m in final.audit.mismatches] == [1]


def test_a_reveal_made_before_the_round_ended_names_its_author_a_cheater() -> None:
    table = one_card_nerts_table("early")
    early = table.players[1]
    rnd = early.current_round
    assert rnd is not None
    # Its seed, honestly: but sent before the end, as if it knew the round was over.
    early.sync.author(Kind.REVEAL, 1, list(early.my_secrets[1]))
    rnd.revealed = True  # it said its last word in this round
    table.collect()
    table.deliver_all()
    call_nerts(table)
    for i in (0, 1):
        (final,) = _finals(table, i)
        assert final.cheaters == frozenset({1})
        assert not final.audit.mismatches  # its seed opens its commitment: only the timing


def test_every_peer_knows_each_member_by_the_name_it_gave() -> None:
    table = _table(players=3)
    for replica in table.players:
        names = {m.author: m.name for m in replica.sync.members.values()}
        # The host's comes with its OPEN, the others' with their JOINs.
        assert names == {p.me: f"p{i}" for i, p in enumerate(table.players)}


def test_a_successors_start_that_arrives_before_the_hosts_departure_waits_for_it() -> None:
    mesh = PeerMesh(players=3, rules=Rules(seats=3, target=500), seed=5)
    mesh.run_for(6.0)
    mesh.vanish(0)  # the host
    mesh.run(until=1200, rounds=2)
    witness = mesh.replicas[1].sync
    start = witness.epochs[2].start
    assert start.author != witness.host  # the successor started round 2
    departs = [op for op in witness.epochs[1].ops if op.kind == Kind.DEPART]
    held = next(op for op in departs if op.author != start.author)  # the other voter's
    ops = [op for op in _all_ops(witness) if op is not held]
    assert ops.index(start) > max(ops.index(op) for op in departs if op is not held)
    late = _late_peer(witness.table)
    # Everything the START needs arrives before it, but not the other voter's DEPART: the
    # host is not known to have departed yet, so the successor's START waits...
    for i, op in enumerate(ops):
        late.receive(op.datagram(), ("witness", i), 0.0)
    assert 2 not in late.epochs
    assert not [e for e in late.events() if isinstance(e, OpRejected) and e.op.body == start.body]
    # ...and is delivered once the departure is agreed.
    late.receive(held.datagram(), "witness", 0.0)
    assert late.epochs[2].start.body == start.body
    assert late.vector() == witness.vector()


def _exposed(state: GameState, seat: int, text: str) -> Move:
    """A move of the card `text` from where it lies face up at `seat` (to be redirected)."""
    wanted = face(text)
    s = state.seats[seat]
    if s.nerts_up and s.nerts_up[-1] & 63 == wanted:
        return Move(seat, "play", s.nerts_up[-1], FROM_NERTS)
    pile = next(k for k, p in enumerate(s.work) if p and p[-1] & 63 == wanted)
    return Move(seat, "play", s.work[pile][-1], pile)


@pytest.mark.parametrize("suit", ["H", "S"])  # the 2 of hearts is face 14, of spades 1
def test_a_lost_race_names_the_seat_that_played_that_very_card_not_the_next_one(
    suit: str,
) -> None:
    rules = Rules(seats=3)
    seeds = [
        seed_showing(rules, [], in_work=[f"2{suit}"], label=f"neighbour/{suit}{i}")
        for i in range(2)
    ]
    seeds.append(seed_showing(rules, [f"A{suit}", f"3{suit}"], label=f"neighbour/{suit}ace"))
    table = ManualTable(rules, seeds)
    table.start_round()
    table.settle(0.3)
    ace_seat = table.players[2]
    rnd = ace_seat.current_round
    assert rnd is not None
    ace = _exposed(rnd.state, 2, f"A{suit}")._replace(dest_kind="f", dest=NEW_FOUNDATION)
    assert not isinstance(ace_seat.play(ace), Rejection)
    table.collect()
    table.deliver_all()
    base = ace.card
    for seat in (0, 1):  # both race their 2 onto that ace
        player = table.players[seat]
        rnd = player.current_round
        assert rnd is not None
        player.play(_exposed(rnd.state, seat, f"2{suit}")._replace(dest_kind="f", dest=base))
    table.collect()
    table.deliver_all()
    # Before the loss is stable, the ace's seat builds its 3 on the winner's 2.
    rnd = ace_seat.current_round
    assert rnd is not None
    three = _exposed(rnd.state, 2, f"3{suit}")._replace(dest_kind="f", dest=base)
    assert not isinstance(ace_seat.play(three), Rejection)
    table.collect()
    table.deliver_all()
    table.settle(1.0)
    winner = rnd.state.foundations[base].cards[1] >> 6
    (lost,) = [e for e in table.events[1 - winner] if isinstance(e, RaceLost)]
    assert lost.winner_seat == winner


def test_an_illegal_move_is_refused_with_the_rules_reason_and_nothing_is_sent() -> None:
    # The window shows the reason the rules give (found by `tools.mutate`, seed 901,
    # `nerts_p2p/table/playing.py`: the engine's rejection was lost on the way).
    table = three_at_play("illegal")
    player = table.players[1]
    rnd = player.current_round
    assert rnd is not None
    seat = rnd.seat_of[player.me]
    player.outgoing()
    before = rnd.state
    top = before.seats[seat].nerts_top
    assert top is not None
    piles = range(len(before.seats[seat].work))
    candidates = [Move(seat, "play", top, FROM_NERTS, "f", NEW_FOUNDATION)] + [
        Move(seat, "play", top, FROM_NERTS, TO_WORK, pile) for pile in piles
    ]
    outcomes = [(m, apply(before, complete(before, m))) for m in candidates]
    illegal = [(m, r) for m, r in outcomes if isinstance(r, Rejection)]
    assert illegal, "some play of the Nerts top does not fit"
    move, why = illegal[0]
    refused = player.play(move)
    assert isinstance(refused, Rejection)
    assert (refused.reason, refused.message) == (why.reason, why.message)
    assert player.outgoing() == []
    assert rnd.state is before
