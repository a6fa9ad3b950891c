"""How many players a table seats, from its rules: the host admits as many players as the
seats hold (two a seat at a partnerships table, PROTOCOL.md 17.4) and `MAX_SPECTATORS`
spectators beside them, and refuses the next as "table full"; a START seats whole pairs
only (found by `tools.mutate`, seed 502)."""

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


def _knock(host: TableReplica, role: int, count: int, label: str) -> list[Verdict]:
    """`count` strangers ask to join in `role`, each from an address of its own (no
    per-address bound applies); the host's verdicts."""
    table = host.sync.table
    verdicts: list[Verdict] = []
    for n in range(count):
        key = _key(f"{label}/{n}")
        hello = hello_body(table, key.key_id, key.public_key, role, f"{label}{n}")
        host.receive(seal(key, hello), (f"10.0.{n // 200}.{n % 200 + 1}", 4000), 0.0)
        for _, datagram in host.outgoing():
            message = decode(datagram, table=table)
            if isinstance(message, Verdict):
                verdicts.append(message)
    return verdicts


@pytest.mark.parametrize(
    ("rules", "players"),
    [(Rules(seats=2), 2), (Rules(seats=2, partnerships=True), 4), (Rules(seats=3), 3)],
)
def test_the_host_admits_as_many_players_as_the_seats_hold_and_spectators_beside(
    rules: Rules, players: int
) -> None:
    host = TableReplica.open_table(
        _key("host"), name="host", rules=rules, spectators=True, randomness=_randomness
    )
    verdicts = _knock(host, PLAYER, players + 3, "player")
    # The host holds a seat itself: the others fill the rest, the next are told it is full.
    assert len([v for v in verdicts if v.admit_seq]) == players - 1
    assert [v.reason for v in verdicts if not v.admit_seq] == [int(Refusal.TABLE_FULL)] * 4
    verdicts = _knock(host, SPECTATOR, MAX_SPECTATORS + 3, "spectator")
    assert len([v for v in verdicts if v.admit_seq]) == MAX_SPECTATORS


def test_at_a_partnerships_table_an_odd_ready_player_waits_for_the_next_round() -> None:
    rules = Rules(seats=3, partnerships=True)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"odd{i}") for i in range(5)])
    for replica in table.players:
        replica.ready()
    table.collect()
    table.deliver_all()
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
