"""A player whose table time is spent (its own heartbeat at the Lamport ceiling came back:
nothing can be stamped after it) cannot sign its round's end or a departure vote: the
table reports each refusal once, in plain words, and raises nothing. (Found by
`tools.mutate`, seed 801: a refused REVEAL was tried again at every datagram, a refused
vote went unreported.)"""

from __future__ import annotations

from nerts_p2p.game.rules import Rules
from nerts_p2p.table.events import ProtocolViolation
from nerts_p2p.table.presence import SILENCE_BOUND
from protocol.messages import MAX_LAMPORT, Kind
from tests.replication.table_helpers import (
    ManualTable,
    call_nerts,
    one_card_nerts_table,
    own_promise_returns,
    seed_showing,
)


def _refusals(table: ManualTable, index: int) -> list[str]:
    me = table.players[index].me
    return [
        e.reason for e in table.events[index] if isinstance(e, ProtocolViolation) and e.author == me
    ]


def test_a_reveal_refused_for_spent_time_is_reported_once() -> None:
    table = one_card_nerts_table("spent-reveal")
    other = table.players[1]
    own_promise_returns(other, MAX_LAMPORT, table.now)
    table.collect()
    call_nerts(table, settle=3.0)
    rnd = other.current_round
    assert rnd is not None
    assert rnd.end_is_stable()
    refusals = _refusals(table, 1)
    assert len(refusals) == 1, refusals
    assert "Lamport time" in refusals[0]


def test_a_departure_vote_refused_for_spent_time_is_reported() -> None:
    rules = Rules(seats=3)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"spent-vote/{i}") for i in range(3)])
    table.start_round()
    table.settle(0.5)
    own_promise_returns(table.players[1], MAX_LAMPORT, table.now)
    table.collect()
    # Player 2 vanishes (lid closed): after the silence bound player 0 votes it out;
    # player 1 cannot sign its vote.
    table.players.pop()
    table.settle(SILENCE_BOUND + 2.0)
    voter = table.players[0].sync
    assert any(op.kind == Kind.DEPART for op in voter.logs[voter.me])
    refusals = _refusals(table, 1)
    assert refusals
    assert all("Lamport time" in reason for reason in refusals)
