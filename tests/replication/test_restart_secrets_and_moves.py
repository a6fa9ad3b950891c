"""A player restarted from its store during a round: refused a move in words (and nothing
signed) until it has caught up; and, restarted between its READY and the START, it still
reveals its mix nonce, opened from the escrow in its READY, so the table's moves can
count. (Found by `tools.mutate`, seed 801, `nerts_p2p/table/playing.py` `play` and
`nerts_p2p/table/round_start.py` `recover_secrets`.)"""

from __future__ import annotations

import pytest

from nerts_p2p.game.errors import Rejection, RejectReason
from nerts_p2p.game.legal import legal_moves
from nerts_p2p.game.moves import Move
from nerts_p2p.game.rules import Rules
from tests.replication.table_helpers import ManualTable, restored_from_store, seed_showing


def _table(label: str) -> ManualTable:
    rules = Rules(seats=2)
    return ManualTable(rules, [seed_showing(rules, [], label=f"{label}/{i}") for i in range(2)])


def test_a_restored_player_is_refused_a_move_in_words_until_it_has_caught_up() -> None:
    table = _table("restored-move")
    table.start_round()
    table.settle(0.3)
    restored = restored_from_store(table.players[1], "p1")
    assert not restored.can_author  # quiet until it has heard the table again
    assert restored.seat == 1
    ours = len(restored.sync.logs[restored.me])
    refused = restored.play(Move(1, "stuck"))
    assert isinstance(refused, Rejection)
    assert refused.reason == RejectReason.MISSING_REVEAL
    assert "restarting" in refused.message
    assert len(restored.sync.logs[restored.me]) == ours  # nothing signed


@pytest.mark.parametrize("seed_stored", [False, True])
def test_a_player_restarted_before_the_start_reveals_its_mix_nonce_from_its_ready(
    seed_stored: bool,
) -> None:
    table = _table("restored-nonce")
    table.start_round(deliver=False)  # the START is signed, not yet delivered
    # The second player dies after its READY, before it hears the START: its mix nonce
    # was only in memory. Its deal seed may be back from the node's store (`resume` puts
    # the store's seeds back), and the nonce must still come from the escrow (seed 1201:
    # with one secret back, `and` made `or` took both for recovered).
    old = table.players[1]
    restored = restored_from_store(old, "p1")
    if seed_stored:
        restored.my_secrets[1] = old.my_secrets[1]
    assert 1 not in restored.my_nonces
    table.players[1] = restored
    table.deliver_all()
    table.settle(1.5)  # it hears the table, catches up and may author again
    assert restored.can_author
    host = table.players[0]
    for replica in (host, restored):
        rnd = replica.current_round
        assert rnd is not None
        assert rnd.number == 1
        assert set(rnd.log.nonces) == {host.me, restored.me}
    # Every nonce is in: the host's next move is played and counts everywhere.
    rnd = host.current_round
    assert rnd is not None
    move = legal_moves(rnd.state, 0)[0]
    assert not isinstance(host.play(move), Rejection)
    table.collect()
    table.deliver_all()
    for replica in (host, restored):
        current = replica.current_round
        assert current is not None
        assert current.steps[-1].applied, current.steps[-1].reason
