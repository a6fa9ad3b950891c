"""How many a table lets in, from its rules (PROTOCOL.md 17): the host admits as many players
as the seats hold (two a seat at a partnerships table) and `MAX_SPECTATORS` beside them, and
refuses the next as "table full" (found by `tools.mutate`, seed 502)."""

from __future__ import annotations

import hashlib

import pytest

from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import TableReplica
from protocol.admission import MAX_SPECTATORS, Refusal
from protocol.envelope import seal
from protocol.messages import PLAYER, SPECTATOR, Verdict, decode, hello_body
from protocol.signing import SigningKeyPair
from tests.replication.table_helpers import ManualTable, seed_showing


def _key(label: str) -> SigningKeyPair:
    return SigningKeyPair(hashlib.sha256(f"seats/{label}".encode()).digest())


def _randomness(n: int) -> bytes:
    return bytes(n)


@pytest.mark.parametrize(
    ("rules", "players"),
    [(Rules(seats=2), 2), (Rules(seats=2, partnerships=True), 4), (Rules(seats=3), 3)],
)
def test_the_host_admits_as_many_as_the_seats_hold_and_the_spectators_beside(
    rules: Rules, players: int
) -> None:
    host = TableReplica.open_table(
        _key("host"), name="host", rules=rules, spectators=True, randomness=_randomness
    )
    table = host.sync.table
    verdicts: list[Verdict] = []
    for n in range(players + MAX_SPECTATORS + 3):
        key = _key(f"knock/{n}")
        # Spectators first (they take at most MAX_SPECTATORS places, PROTOCOL.md 17.4),
        # then players into the seats' part of the room.
        role = SPECTATOR if n < MAX_SPECTATORS else PLAYER
        hello = hello_body(table, key.key_id, key.public_key, role, f"k{n}")
        host.receive(seal(key, hello), 1000 + n, 0.0)  # one address each: no per-source bound
        for _, datagram in host.outgoing():
            message = decode(datagram, table=table)
            if isinstance(message, Verdict):
                verdicts.append(message)
    admitted = [v for v in verdicts if v.admit_seq]
    # The host is present itself: the others fill the rest.
    assert len(admitted) == players + MAX_SPECTATORS - 1
    assert {v.reason for v in verdicts if not v.admit_seq} == {int(Refusal.TABLE_FULL)}


def test_at_a_partnerships_table_an_odd_ready_player_waits_for_the_next_round() -> None:
    rules = Rules(seats=3, partnerships=True)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"odd{i}") for i in range(5)])
    table.ready_all()
    host = table.players[0]
    host.start()  # five ready: two pairs play, the fifth cannot make a pair
    table.collect()
    table.deliver_all()
    log = host.sync.epochs[1]
    assert len(log.participants) == 4
    assert log.participants == tuple(host.ready_players(1)[:4])
    rnd = host.rounds[1]
    assert rnd.rules.seats == 2
    assert sorted(rnd.seat_of.values()) == [0, 0, 1, 1]


def test_spectators_who_went_away_free_their_places_for_the_next() -> None:
    # Spectators say no goodbye (a window closed, Ctrl-C): the host counted each as present
    # for good, so after eight had come and gone nobody could ever watch the table again.
    from nerts_p2p.table.presence import SILENCE_BOUND
    from protocol.admission import SPECTATOR_GONE
    from tools.mesh import PeerMesh

    assert SPECTATOR_GONE == SILENCE_BOUND
    mesh = PeerMesh(players=2, rules=Rules(seats=2), seed=3, spectators=MAX_SPECTATORS)
    mesh.bots_paused = True
    mesh.run_for(3.0)
    assert all(r.is_member for r in mesh.replicas)
    ninth = mesh.add_spectator("ninth")
    mesh.run_for(3.0)
    assert ninth.admission_refused == "the table is full"
    mesh.vanish(len(mesh.replicas) - 2)  # the eighth spectator leaves
    mesh.run_for(SPECTATOR_GONE + 1.0)
    tenth = mesh.add_spectator("tenth")
    mesh.run_for(3.0)
    assert tenth.is_member
    # Only one place fell free: the seven still watching keep theirs.
    eleventh = mesh.add_spectator("eleventh")
    mesh.run_for(3.0)
    assert eleventh.admission_refused == "the table is full"
