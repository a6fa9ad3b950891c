"""A player that restarts after its REVEAL reads it back from its store and never reveals
again: its deal was revealed once, and the round ends the same for everyone. (Found by
`tools.mutate`, seed 15, `nerts_p2p/table/replica.py` `_on_delivered`.)"""

from __future__ import annotations

from nerts_p2p.table.events import ProtocolViolation
from protocol.messages import Kinds
from tests.replication.table_helpers import call_nerts, one_card_nerts_table, restored_from_store


def test_a_player_restarted_after_its_reveal_does_not_reveal_again() -> None:
    table = one_card_nerts_table("reveal-once")
    caller, other = table.players
    call_nerts(table, settle=None)
    table.deliver_all()
    table.settle(0.5)  # the end is stable: both reveal
    reveals = [op for op in other.sync.logs[other.me] if op.kind == Kinds.REVEAL]
    assert len(reveals) == 1
    again = restored_from_store(other, "other")
    table.players[1] = again
    table.events[1].clear()
    table.settle(3.0)
    assert [op for op in again.sync.logs[again.me] if op.kind == Kinds.REVEAL] == reveals
    assert not [e for e in table.events[1] if isinstance(e, ProtocolViolation)]
    final = again.rounds[1].final
    assert final is not None
    assert final == caller.rounds[1].final
