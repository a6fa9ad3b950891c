"""Any op, a lobby op too, says its author's next op is stamped later: a horizon in every
round (PROTOCOL.md 7). A peer that hears none of a player's heartbeats, only its ops, still
sees the round final once that player's READY for the next round arrives, in that same
receive. (Found by `tools.mutate`, seed 15, `protocol/sync_delivery.py` `deliver`.)"""

from __future__ import annotations

from tests.replication.table_helpers import call_nerts, one_card_nerts_table


def test_a_ready_for_the_next_round_makes_the_round_before_final_without_heartbeats() -> None:
    table = one_card_nerts_table("lobby-horizon")
    caller, other = table.players
    call_nerts(table, settle=None)
    table.deliver_all()
    now = table.now
    # Every heartbeat of the caller is lost on its way to the other (its ops get through);
    # the other's reach the caller, which sees the round final and says READY.
    while caller.rounds[1].final is None:
        assert now < table.now + 5.0
        now += 0.05
        for replica in (caller, other):
            replica.tick(now)
        for _, datagram in other.outgoing():
            caller.receive(datagram, 1, now)
        ops = {op.datagram() for op in caller.sync.logs[caller.me]}
        for _, datagram in caller.outgoing():
            if datagram in ops:
                other.receive(datagram, 0, now)
    rnd = other.rounds[1]
    for _ in range(20):  # the other's own heartbeats alone do not make it final
        now += 0.05
        other.tick(now)
        other.outgoing()
    assert rnd.final is None
    assert rnd.log.stable_count() < len(rnd.log.ops)
    ready = caller.ready()
    caller.outgoing()
    other.receive(ready.datagram(), 0, now)
    assert rnd.log.stable_count() == len(rnd.log.ops)
    assert rnd.final is not None
    assert rnd.final == caller.rounds[1].final
