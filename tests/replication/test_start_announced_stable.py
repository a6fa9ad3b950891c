"""A host that starts a round it does not play announces the round's start as stable as
soon as every player has promised past the START (its heartbeats stamped later), before
any other op of the round has arrived: the START is the round's first folded step.
(Found by `tools.mutate`, seed 801, `nerts_p2p/table/round_start.py` `begin_round`.)"""

from __future__ import annotations

from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import StableState
from tests.replication.table_helpers import ManualTable, seed_showing


def test_a_start_is_announced_stable_once_every_player_has_promised_past_it() -> None:
    rules = Rules(seats=3)
    table = ManualTable(
        rules, [seed_showing(rules, [], label=f"start-stable/{i}") for i in range(3)]
    )
    host, *players = table.players
    table.ready_all(players)  # the host starts a round of the two others
    host.start()
    host.outgoing()  # what the host says is slow to arrive: the players have no START yet
    rnd = host.current_round
    assert rnd is not None
    assert host.me not in rnd.log.participants
    announced: list[StableState] = []
    now = table.now
    for _ in range(10):
        now += 0.05
        for replica in table.players:
            replica.tick(now)
        host.outgoing()
        for speaker in players:
            for _, datagram in speaker.outgoing():
                for listener in table.players:
                    if listener is not speaker:
                        listener.receive(datagram, id(speaker), now)
        announced += [e for e in host.events() if isinstance(e, StableState)]
    assert all(p.current_round is None for p in players)
    assert rnd.log.ops == [rnd.log.start]  # no other op of the round yet
    assert [(e.round, e.stable_ops) for e in announced] == [(1, 1)]
    assert announced[0].state == rnd.start_state
