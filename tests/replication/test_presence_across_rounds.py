"""Presence and departure votes across rounds (PROTOCOL.md 13), on a small table driven by
hand (found by `tools.mutate`, seed 502 and the known survivors before it).

After a final round only a vanished starter may be voted out, and only while the next
round has not started: whichever round just ended, not only the first. And every round
starts its acknowledgment records over: a seat that lags across a round's end is flagged
again in the next round, its lag counted from that round's beginning.
"""

from __future__ import annotations

from collections.abc import Callable

from nerts_p2p.game.rules import Rules
from nerts_p2p.table.presence import SILENCE_BOUND
from nerts_p2p.table.replica import RoundFinal, SeatLagging
from protocol.messages import Evidence, Heartbeat, Kind, decode
from protocol.sync import BROADCAST
from tests.replication.table_helpers import ManualTable, call_nerts, seed_showing, seeds_in_turn

RULES = Rules(seats=3, nerts_size=1, target=10_000)


def _table(rounds: int, label: str) -> ManualTable:
    """Three players; in every round seat 0's Nerts pile is the ace of spades alone."""
    caller = [seed_showing(RULES, [], nerts_top="AS", label=f"{label}/c{n}") for n in range(rounds)]
    others = [
        [seed_showing(RULES, [], label=f"{label}/p{i}r{n}") for n in range(rounds)] for i in (1, 2)
    ]
    table = ManualTable(RULES, [caller[0], others[0][0], others[1][0]])
    for replica, seeds, name in zip(table.players, [caller, *others], "abc", strict=True):
        replica.randomness = seeds_in_turn(seeds, f"{label}/{name}")
    return table


def _play_round(table: ManualTable, *, finish: bool = True) -> int:
    """Every player readies, the host starts, seat 0 plays its ace and calls Nerts; returns
    the round's number once it is final everywhere (`finish=False`: once it is under way)."""
    table.start_round()
    table.settle(0.3)  # every mix nonce is in: moves count
    rnd = table.players[0].current_round
    assert rnd is not None
    if finish:
        call_nerts(table, settle=None)
        table.settle(2.0)
        for events in table.events:
            assert [e for e in events if isinstance(e, RoundFinal) and e.round == rnd.number]
    return rnd.number


Drop = Callable[[int, int, bytes], bool]


def _settle(table: ManualTable, seconds: float, drop: Drop) -> None:
    """Like `ManualTable.settle`, but a datagram from `sender` to `target` for which
    `drop(sender, target, datagram)` holds is lost."""
    end = table.now + seconds
    while table.now < end:
        table.now += 0.05
        for replica in table.players:
            replica.tick(table.now)
        table.collect()
        _deliver(table, drop)


def _deliver(table: ManualTable, drop: Drop) -> None:
    while table.queue:
        queue, table.queue = table.queue, []
        for sender, destination, datagram in queue:
            targets = range(len(table.players)) if destination == BROADCAST else [destination]
            for target in targets:
                assert isinstance(target, int)
                if target != sender and not drop(sender, target, datagram):
                    table.players[target].receive(datagram, sender, table.now)
        table.collect()


def _settle_without(table: ManualTable, gone: int, seconds: float) -> None:
    """`gone` has vanished: it neither hears nor sends anything (nor ticks)."""
    end = table.now + seconds
    while table.now < end:
        table.now += 0.05
        for i, replica in enumerate(table.players):
            if i != gone:
                replica.tick(table.now)
        table.collect()
        _deliver(table, lambda sender, target, _: gone in (sender, target))


def test_a_host_who_vanishes_after_round_two_is_voted_out_and_its_heir_starts_round_three() -> None:
    table = _table(3, "second")
    assert _play_round(table) == 1
    assert _play_round(table) == 2
    host = table.players[0].me
    _settle_without(table, gone=0, seconds=SILENCE_BOUND + 2.0)
    for i in (1, 2):
        log = table.players[i].sync.epochs[2]
        assert host in log.departed, "nobody voted the vanished host out after round 2"
    heir = table.players[1]
    assert heir.sync.starter(3) == heir.me
    for i in (1, 2):
        table.players[i].ready()
    _settle_without(table, gone=0, seconds=0.1)
    heir.start()
    _settle_without(table, gone=0, seconds=0.3)
    assert 3 in table.players[2].sync.epochs
    assert host not in table.players[2].sync.epochs[3].participants


def test_a_seat_lagging_across_the_end_of_a_round_is_flagged_again_in_the_next() -> None:
    """Every round starts its acknowledgment records over (PROTOCOL.md 13.4): a seat whose
    acknowledgments stop reaching us just before a round ends is flagged in that round and,
    still lagging, in the next one too, where its lag counts from the round's beginning
    (it is not voted out of the new round for a lag that began in the old)."""
    table = _table(2, "lagging")
    assert _play_round(table, finish=False) == 1
    table_id = table.players[0].sync.table

    def hides_acks(sender: int, target: int, datagram: bytes) -> bool:
        # Seat 2's acknowledgments no longer reach seat 0, neither directly nor relayed;
        # its ops still do.
        if target != 0:
            return False
        message = decode(datagram, table=table_id)
        return isinstance(message, Evidence) or (isinstance(message, Heartbeat) and sender == 2)

    call_nerts(table, settle=None)
    _settle(table, 1.5, hides_acks)
    for replica in table.players:
        replica.ready()
    table.collect()
    _deliver(table, hides_acks)
    _settle(table, 0.3, hides_acks)
    host = table.players[0]
    assert host.rounds[1].final is not None
    host.start()
    table.collect()
    _deliver(table, hides_acks)
    _settle(table, 2.2, hides_acks)
    lagging = table.players[2].me
    flagged = [(e.round, e.author) for e in table.events[0] if isinstance(e, SeatLagging)]
    assert flagged == [(1, lagging), (2, lagging)]
    _settle(table, 1.0, lambda *_: False)
    assert lagging not in host.sync.epochs[2].departed
    assert not [op for op in host.sync.logs[host.me] if op.kind == Kind.DEPART]
