"""A partner's seed share that arrives after moves ordered after it (PROTOCOL.md 6): the
partner's view of the round is folded again from its start with the seat's face-down cards
known, and shows every move made so far (found by `tools.mutate`, seed 502)."""

from __future__ import annotations

from collections.abc import Callable

from nerts_p2p.game.errors import Rejection, RejectReason
from nerts_p2p.game.moves import FROM_NERTS, NEW_FOUNDATION, Move
from nerts_p2p.game.position import state_hash
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.events import RoundEnded
from nerts_p2p.table.replica import TableReplica
from protocol.messages import Batch, Kind, Op, decode, decode_op
from tests.replication.table_helpers import InFlight, ManualTable, seed_showing


def _carries_share_of(author: bytes, datagram: bytes, table: bytes) -> bool:
    message = decode(datagram, table=table)
    if isinstance(message, Batch):
        ops = [decode_op(body, signature, table=table) for body, signature in message.ops]
    elif isinstance(message, Op):
        ops = [message]
    else:
        return False
    return any(op.kind == Kind.SEED_SHARE and op.author == author for op in ops)


def _started_without_the_share(
    table: ManualTable,
) -> tuple[TableReplica, TableReplica, Callable[[bytes], bool], list[InFlight]]:
    """The round started, every mix nonce in, but the seat-0 dealer's share withheld from
    everyone: (the dealer, its partner, what picks the share's datagrams, those held)."""
    table.start_round(deliver=False)
    dealer, partner = table.players[0], table.players[1]
    table_id = dealer.sync.table

    def share(datagram: bytes) -> bool:
        return _carries_share_of(dealer.me, datagram, table_id)

    held = table.deliver_all(withhold=share) + table.settle(0.3, withhold=share)
    return dealer, partner, share, held


def test_a_partners_seed_share_that_arrives_after_later_moves_refolds_the_whole_round() -> None:
    rules = Rules(seats=2, partnerships=True)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"share{i}") for i in range(4)])
    dealer, partner, share, held = _started_without_the_share(table)
    rnd = partner.current_round
    assert rnd is not None
    assert held
    assert rnd.dealer[0] == dealer.me
    assert rnd.seat_of[partner.me] == 0
    other = next(p for p in table.players[2:] if rnd.dealer[1] == p.me)
    assert not hasattr(other.play(Move(1, "turn")), "reason")
    table.collect()
    held += table.deliver_all(withhold=share)
    assert len([s for s in rnd.steps if s.applied]) == 1  # the partner has the turn
    for _, _, datagram in held:  # the share comes at last, ordered before the turn
        partner.receive(datagram, 0, table.now)
    rnd = partner.current_round
    assert rnd is not None
    assert len([s for s in rnd.steps if s.applied]) == 1  # the turn still counts
    assert len(rnd.states) == len(rnd.steps) + 1
    theirs = dealer.current_round
    assert theirs is not None
    assert state_hash(rnd.state) == state_hash(theirs.state)
    # And the partner now knows its seat's face-down cards as its dealer does.
    assert rnd.state.seats[0].stock == theirs.state.seats[0].stock


def test_a_partner_without_its_dealers_share_is_told_it_cannot_turn_up_the_seats_cards() -> None:
    # Turning the stock shows a card of the dealer's deck, which only the share tells the
    # partner: until it is here the move is refused in words, not sent half made (found by
    # `tools.mutate`, seed 901, `nerts_p2p/table/playing.py`).
    rules = Rules(seats=2, partnerships=True)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"noshare{i}") for i in range(4)])
    dealer, partner, _, held = _started_without_the_share(table)
    assert held
    refused = partner.play(Move(0, "turn"))
    assert isinstance(refused, Rejection)
    assert refused.reason == RejectReason.MISSING_REVEAL
    assert "partner's deal has not reached you" in refused.message
    said = [decode(d, table=dealer.sync.table) for _, d in partner.outgoing()]
    assert not [m for m in said if isinstance(m, Op) and m.author == partner.me], "nothing sent"
    for _, _, datagram in held:
        partner.receive(datagram, 0, table.now)
    assert isinstance(partner.play(Move(0, "turn")), Op)


def test_a_share_that_arrives_after_the_round_ended_announces_the_end_no_second_time() -> None:
    # The share refolds the partner's round from its start; the end it had folded is the
    # same end (the others' public fold made it), so the window hears of it once (found by
    # `tools.mutate`, seed 901, `nerts_p2p/table/deal_secrets.py`).
    rules = Rules(seats=2, partnerships=True, nerts_size=1)
    seeds = [seed_showing(rules, [], nerts_top="AS", label=f"late-share{i}") for i in range(4)]
    table = ManualTable(rules, seeds)
    dealer, partner, share, held = _started_without_the_share(table)
    rnd = dealer.current_round
    assert rnd is not None
    caller = next(p for p in table.players[2:] if rnd.dealer[1] == p.me)
    ace = rnd.state.seats[1].nerts_up[-1]
    assert isinstance(caller.play(Move(1, "play", ace, FROM_NERTS, "f", NEW_FOUNDATION)), Op)
    assert isinstance(caller.play(Move(1, "nerts")), Op)
    table.collect()
    held += table.deliver_all(withhold=share)
    ended = [e for e in table.events[1] if isinstance(e, RoundEnded)]
    assert [e.round for e in ended] == [1], "the partner saw the round end"
    for _, _, datagram in held:
        partner.receive(datagram, 0, table.now)
    assert not [e for e in partner.events() if isinstance(e, RoundEnded)], "announced again"
    theirs = partner.current_round
    assert theirs is not None
    assert theirs.state.ended_by is not None
    assert state_hash(theirs.state) == state_hash(rnd.state)
