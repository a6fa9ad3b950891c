"""A liar's op stamped a whole step ahead runs every clock that delivers it forward; when
the liar is then expelled from that op on, an honest player's next op must still be
stamped within a step of what every peer judges it by (PROTOCOL.md 5: deps on an expelled
author's ops from its expulsion on are not judged), so it can be sent and counts.
(A survivor of `tools.mutate`, seed 511, `protocol/sync_lamport.py` `lamport_floor`.)"""

from __future__ import annotations

from nerts_p2p.game.rules import Rules
from protocol.codec import unpack_bounded
from protocol.envelope import seal
from tests.protocol.test_anti_entropy_rules import _turn
from tests.replication.table_helpers import ManualTable, seed_showing, turn_or_recycle

STEP = 2**24


def test_a_player_can_move_after_a_liar_a_step_ahead_is_expelled() -> None:
    rules = Rules(seats=3)
    seeds = [seed_showing(rules, [], label=f"ahead/{i}") for i in range(3)]
    table = ManualTable(rules, seeds)
    table.start_round()
    table.settle(0.3)
    host, player, liar = table.players
    liar.sync.clock.observe(2**40)
    (far,) = _turn(liar, 1)
    ahead = liar.sync.logs[liar.me][-1]
    body = unpack_bounded(ahead.body)
    assert isinstance(body, list)
    body[8] = "stuck"  # a second version of the same op: equivocation
    twin = seal(liar.sync.key, body)
    for peer in (host, player):
        peer.receive(far, 2, table.now)
        peer.receive(twin, 2, table.now)
        assert peer.sync.expelled.get(liar.me) == ahead.seq
    assert player.sync.clock.value > ahead.lamport
    op = turn_or_recycle(player, 1)
    table.collect()
    table.deliver_all()
    assert host.sync.delivered(player.me) == op.seq
