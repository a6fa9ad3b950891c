"""`TableReplica.restore` trusts its store to be complete unless told otherwise
(PROTOCOL.md 14): the replica resumes, quiet until caught up with the table, rather than
waiting for the table to show it its own chain as a peer that lost its store does. (Found
by `tools.mutate`, seed 604, `nerts_p2p/table/replica.py` `restore`.)"""

from __future__ import annotations

from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import TableReplica
from tests.replication.table_helpers import ManualTable, restored_from_store, seed_showing


def _restored(old: TableReplica, **complete: bool) -> TableReplica:
    return restored_from_store(old, "p1", **complete)


def test_a_replica_restored_from_its_store_resumes_unless_the_store_may_be_incomplete() -> None:
    rules = Rules(seats=2)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"restore/{i}") for i in range(2)])
    table.start_round()
    old = table.players[1]
    held = old.sync.delivered(old.me)
    for restored, resumes in ((_restored(old), True), (_restored(old, complete=False), False)):
        assert not restored.can_author
        assert restored.sync.delivered(restored.me) == held
        assert (restored.sync.resuming is not None) is resumes
        assert (restored.sync.quarantined is not None) is not resumes
