"""Partnerships over the network: two players share a seat and its sealed deal."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from nerts_p2p.game.moves import NEW_FOUNDATION, Move
from nerts_p2p.game.position import state_hash
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.state import GameState
from nerts_p2p.table.replica import END_MARKER, ProtocolViolation, RaceLost
from protocol.envelope import seal
from protocol.errors import RemoteProtocolError
from protocol.messages import Kind, Op, batch_body, decode
from protocol.sealed import open_from, seal_for
from protocol.signing import SigningKeyPair
from protocol.sync import BROADCAST
from tests.replication.table_helpers import ManualTable, face, seed_showing
from tools.mesh import Faults, PeerMesh

ALICE, BOB, EVE = (SigningKeyPair(hashlib.sha256(n).digest()) for n in (b"a", b"b", b"e"))


def test_a_sealed_seed_opens_only_for_its_recipient() -> None:
    sealed = seal_for(ALICE, BOB.public_key, b"s" * 48, bytes(24))
    assert b"s" * 48 not in sealed
    assert open_from(BOB, ALICE.public_key, sealed) == b"s" * 48
    with pytest.raises(RemoteProtocolError):
        open_from(EVE, ALICE.public_key, sealed)
    tampered = sealed[:-1] + bytes([sealed[-1] ^ 1])
    with pytest.raises(RemoteProtocolError):
        open_from(BOB, ALICE.public_key, tampered)


def test_partners_both_play_the_seat_and_every_peer_agrees() -> None:
    mesh = PeerMesh(
        players=4,
        rules=Rules(seats=2, partnerships=True),
        seed=5,
        faults=Faults(drop=0.1, delay=(0.001, 0.05)),
    )
    mesh.run(until=1500, rounds=2)
    results = {tuple(sorted((r, e.totals, e.cheaters) for r, e in f.items())) for f in mesh.finals}
    assert len(results) == 1
    assert len(next(iter(results))) == 2
    assert len(set(mesh.state_hashes())) == 1
    rnd = mesh.replicas[0].rounds[1]
    movers = Counter(s.op.author for s in rnd.steps if s.move is not None and s.applied)
    assert len(movers) == 4, "all four players moved cards"
    assert not [e for events in mesh.events for e in events if isinstance(e, ProtocolViolation)]
    # Every participant ended its round with a REVEAL covering the end: a dealer its seed, a
    # partner that deals no seed the end marker (un-seeing the call, issue 10).
    dealers = set(rnd.dealer.values())
    assert set(rnd.reveals) == set(rnd.seat_of)
    for author, reveal in rnd.reveals.items():
        assert rnd.covers_end(reveal)
        assert (reveal.payload == END_MARKER) == (author not in dealers)


def test_partners_turning_the_stock_at_once_are_not_called_cheaters() -> None:
    # Regression: both partners turned the seat's stock concurrently, each naming the same
    # next cards; the fold rejects the second turn, and the audit must not count its
    # (never accepted) reveal against the seat.
    rules = Rules(seats=2, partnerships=True)
    seeds = [seed_showing(rules, [], label=f"p{i}", stuck=True) for i in range(4)]
    table = ManualTable(rules, seeds)
    table.start_round()
    table.settle(0.5)  # the seed shares arrive
    dealer, partner = table.players[0], table.players[1]
    assert dealer.seat == partner.seat == 0
    dealer.play(Move(0, "turn"))
    partner.play(Move(0, "turn"))
    table.collect()
    table.deliver_all()
    rnd = dealer.current_round
    assert rnd is not None
    turns = [s for s in rnd.steps if s.move is not None and s.move.action == "turn"]
    assert [s.applied for s in turns] == [True, False]
    # End the round: both seats declare themselves stuck, twice (a stalemate).
    for _ in range(2):
        for seat, player in ((0, table.players[0]), (1, table.players[2])):
            assert not hasattr(player.play(Move(seat, "stuck")), "reason")
            table.collect()
            table.deliver_all()
    table.settle(2.0)
    finals = [p.rounds[1].final for p in table.players]
    assert all(f is not None for f in finals)
    assert {f.cheaters for f in finals if f is not None} == {frozenset()}


def _exposed(state: GameState, seat: int, card_text: str) -> Move:
    """The move of `card_text` (a face, like 2H) from the top of one of `seat`'s work piles."""
    for k, pile in enumerate(state.seats[seat].work):
        if pile and pile[-1] & 63 == face(card_text):
            return Move(seat, "play", pile[-1], k)
    raise AssertionError(f"{card_text} is not on a work pile of seat {seat}")


def _deliver_all_but(table: ManualTable, author: int, kind: Kind, target: int) -> list[Op]:
    """Deliver everything queued (and what it sets off), except `author`'s ops of `kind` to
    `target`: those are returned (a datagram lost on that one link)."""
    held: list[Op] = []
    while table.queue:
        queue, table.queue = table.queue, []
        for sender, destination, datagram in queue:
            message = decode(datagram, table=table.players[0].sync.table)
            for i in range(len(table.players)) if destination == BROADCAST else [destination]:
                assert isinstance(i, int)
                if i == sender:
                    continue
                if (
                    i == target
                    and isinstance(message, Op)
                    and (message.kind, message.author) == (kind, table.players[author].me)
                ):
                    held.append(message)
                    continue
                table.players[i].receive(datagram, sender, table.now)
        table.collect()
    return held


def test_a_race_lost_in_the_delivery_that_brings_the_partners_seed_is_still_reported() -> None:
    """The partner who does not deal its seat plays a card it can see before the dealer's
    sealed seed reaches it; that seed then arrives in one batch with the other seat's play
    of the same card, which sorts first. Folding the round again with the seat's cards known
    must not swallow the lost race: the player is told its card went back, and who won."""
    rules = Rules(seats=2, partnerships=True)
    seeds = [
        seed_showing(rules, [], in_work=["AH", "2H"], label="seat0"),
        seed_showing(rules, [], label="partner0"),
        seed_showing(rules, [], in_work=["2H"], label="seat1"),
        seed_showing(rules, [], label="partner1"),
    ]
    table = ManualTable(rules, seeds)
    dealer, partner, rival = table.players[0], table.players[1], table.players[2]
    for player in table.players:
        player.ready()
    table.collect()
    table.deliver_all()
    dealer.start()
    table.collect()
    held = _deliver_all_but(table, 0, Kind.SEED_SHARE, target=1)
    assert [op.payload[0] for op in held] == [partner.me]  # lost on the way to the partner
    rnd = partner.current_round
    assert rnd is not None
    assert (partner.seat, dealer.seat, rival.seat) == (0, 0, 1)
    ace = _exposed(rnd.state, 0, "AH")._replace(dest_kind="f", dest=NEW_FOUNDATION)
    assert isinstance(partner.play(ace), Op)
    table.collect()
    assert _deliver_all_but(table, 0, Kind.SEED_SHARE, target=1) == []
    # Both seats play their 2H on the ace at once; the rival's sorts first.
    for _ in range(3):
        partner.sync.clock.tick()
    our_move = _exposed(rnd.state, 0, "2H")._replace(dest_kind="f", dest=ace.card)
    ours = partner.play(our_move)
    assert isinstance(ours, Op)
    rival_rnd = rival.current_round
    assert rival_rnd is not None
    theirs = rival.play(_exposed(rival_rnd.state, 1, "2H")._replace(dest_kind="f", dest=ace.card))
    assert isinstance(theirs, Op)
    assert rnd.log.order_key(theirs) < rnd.log.order_key(ours)
    rival.outgoing()
    for i in (0, 3):
        table.players[i].receive(theirs.datagram(), 2, table.now)
    table.collect()
    _deliver_all_but(table, 0, Kind.SEED_SHARE, target=1)
    assert (rnd.steps[-1].op, rnd.steps[-1].applied) == (ours, True)  # its 2H went on
    # One batch (a catch-up answer, say) brings the dealer's seed and the rival's 2H.
    sync = rival.sync
    partner.receive(seal(sync.key, batch_body(sync.table, sync.me, [*held, theirs])), 2, table.now)
    table.collect()
    table.deliver_all()
    table.settle(1.0)
    rnd = partner.current_round
    assert rnd is not None
    assert not next(s for s in rnd.steps if s.op == ours).applied
    lost = [e for e in table.events[1] if isinstance(e, RaceLost)]
    assert [(e.move.card, e.winner_seat) for e in lost] == [(our_move.card, 1)]
    assert len({state_hash(p.current_round.state) for p in table.players if p.current_round}) == 1
