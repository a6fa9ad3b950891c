"""Partnerships over the network: two players share a seat and its sealed deal."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from nerts_p2p.game.moves import Move
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import ProtocolViolation
from protocol.errors import RemoteProtocolError
from protocol.sealed import open_from, seal_for
from protocol.signing import SigningKeyPair
from tests.replication.table_helpers import ManualTable, seed_showing
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
