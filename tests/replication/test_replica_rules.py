"""Rules of `TableReplica` that no other test pinned (found by `tools.mutate`): what a
round's stable state is, a late joiner's request for the table, the deal a host that
readied twice starts with, and a round's departures whatever order its ops arrive in."""

from __future__ import annotations

import hashlib

from nerts_p2p.game.deck import deal_seat
from nerts_p2p.game.engine import complete
from nerts_p2p.game.errors import Rejection
from nerts_p2p.game.moves import FROM_NERTS, NEW_FOUNDATION, Move, move_text
from nerts_p2p.game.position import state_hash
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import RoundFinal, RoundStarted, TableReplica
from protocol.messages import SPECTATOR, Kind, Op
from protocol.signing import SigningKeyPair
from protocol.sync import DeparturesChanged, SyncPeer
from tests.replication.table_helpers import ManualTable, seed_showing
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
    assert isinstance(late.join(), Op)


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


def test_a_peer_that_gets_a_rounds_ops_before_its_start_reaches_the_same_departure() -> None:
    mesh = PeerMesh(players=2, rules=Rules(seats=2), seed=4, spectators=1)
    mesh.run_for(6.0)
    # The second participant vanishes: the first one's vote alone carries (PROTOCOL.md 13).
    second = mesh.replicas[0].sync.epochs[1].participants[1]
    mesh.vanish(next(i for i, r in enumerate(mesh.replicas) if r.me == second))
    mesh.run(until=600, rounds=1)
    witness = mesh.replicas[2].sync  # the spectator saw it all
    epoch = witness.epochs[1]
    assert epoch.departed, "the vanished player was never voted out"
    assert [op.kind for op in epoch.ops].count(Kind.DEPART) == 1
    ops = sorted((op for log in witness.logs.values() for op in log), key=lambda op: op.lamport)
    start = epoch.start
    lobby = [op for op in ops if not op.epoch and op.lamport < start.lamport]
    rest = [op for op in ops if op not in lobby and op is not start]
    # The round's ops arrive (backwards) before its START: all of them wait, then are
    # delivered at once when the START comes.
    late = SyncPeer(SigningKeyPair(hashlib.sha256(b"late").digest()), witness.table)
    for i, op in enumerate([*lobby, *reversed(rest), start]):
        late.receive(op.datagram(), ("witness", i), 0.0)
    assert late.vector() == witness.vector()
    assert late.epochs[1].ops == epoch.ops
    assert late.epochs[1].departed == epoch.departed
    changed = [e for e in late.events() if isinstance(e, DeparturesChanged)]
    assert [e.departed for e in changed] == [epoch.departed]


def _finals(table: ManualTable, i: int) -> list[RoundFinal]:
    return [e for e in table.events[i] if isinstance(e, RoundFinal)]


def _nerts_table(label: str) -> ManualTable:
    """Two seats, Nerts piles of one card; seat 0's is the ace of spades: it can call at once."""
    rules = Rules(seats=2, nerts_size=1)
    seeds = [
        seed_showing(rules, [], nerts_top="AS", label=f"{label}/caller"),
        seed_showing(rules, [], label=f"{label}/other"),
    ]
    table = ManualTable(rules, seeds)
    table.start_round()
    table.settle(0.3)  # every mix nonce is in: moves count
    return table


def _call_nerts(table: ManualTable) -> None:
    caller = table.players[0]
    rnd = caller.current_round
    assert rnd is not None
    ace = rnd.state.seats[0].nerts_up[-1]
    assert not isinstance(
        caller.play(Move(0, "play", ace, FROM_NERTS, "f", NEW_FOUNDATION)), Rejection
    )
    assert not isinstance(caller.play(Move(0, "nerts")), Rejection)
    table.collect()
    table.deliver_all()
    table.settle(2.0)


def test_a_player_who_lies_about_the_cards_it_turned_up_is_named_a_cheater_by_the_audit() -> None:
    table = _nerts_table("liar")
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
    _call_nerts(table)
    # ...until the seeds are revealed and the audit replays the round.
    for i in (0, 1):
        (final,) = _finals(table, i)
        assert final.cheaters == frozenset({1})
        assert final.scores[1].score <= 0
        assert [m.seat for m in final.audit.mismatches] == [1]


def test_a_reveal_made_before_the_round_ended_names_its_author_a_cheater() -> None:
    table = _nerts_table("early")
    early = table.players[1]
    rnd = early.current_round
    assert rnd is not None
    # Its seed, honestly: but sent before the end, as if it knew the round was over.
    early.sync.author(Kind.REVEAL, 1, list(early.my_secrets[1]))
    rnd.revealed = True  # it said its last word in this round
    table.collect()
    table.deliver_all()
    _call_nerts(table)
    for i in (0, 1):
        (final,) = _finals(table, i)
        assert final.cheaters == frozenset({1})
        assert not final.audit.mismatches  # its seed opens its commitment: only the timing
