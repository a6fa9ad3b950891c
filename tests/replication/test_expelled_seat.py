"""A participant proven to cheat (PROTOCOL.md 10) is voted out of its round at once: one
vote departs it (13.2), its seat freezes and says stuck, so a caught cheater cannot keep
the round from ending; and it is still judged a cheater when the round is scored."""

from __future__ import annotations

import random

from nerts_p2p.game.bots import EXPERT, BotPlayer
from nerts_p2p.game.errors import Rejection
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import RoundFinal
from protocol.messages import Kind

from .table_helpers import ManualTable, seed_showing, signed_move


def test_an_expelled_players_seat_says_stuck_so_the_others_can_still_end_the_round() -> None:
    # Seat 1 equivocates on its next move and is expelled. Seat 0 plays on, gets stuck
    # with Nerts cards left, and the round must still end (the stock turn, then a
    # stalemate) rather than wait for ever on a seat that can never say stuck. It did wait:
    # only seats voted out for silence said stuck (found 2026-12-02, an expert bot stuck
    # with one Nerts card left for 3,000 moves).
    rules = Rules(seats=2)
    table = ManualTable(
        rules, [seed_showing(rules, [], label=f"frozen{i}") for i in range(2)], spectators=1
    )
    table.start_round()
    table.settle(0.3)
    honest, cheat, watcher = table.players
    last = cheat.sync.logs[cheat.me][-1]
    base = max(r.sync.clock.value for r in table.players) + 1
    for lamport in (base, base + 7):  # two versions of its next move: equivocation
        for replica in (honest, watcher):
            replica.receive(signed_move(cheat, 0, last.hash, lamport), 1, table.now)
    table.settle(0.5)
    rnd = honest.current_round
    assert rnd is not None
    assert cheat.me in rnd.log.excluded
    votes = [op for op in honest.sync.logs[honest.me] if op.kind == Kind.DEPART]
    assert [op.payload[0] for op in votes] == [cheat.me], "one vote, against the cheat"
    assert rnd.log.departed.keys() == {cheat.me}
    assert rnd.state.seats[1].stuck, "the expelled player's seat is frozen: it says stuck"
    bot = BotPlayer(EXPERT, 0, random.Random(5))
    for _ in range(3000):
        if rnd.state.ended_by is not None:
            break
        move = bot.act(rnd.state)
        if move is not None and not isinstance(honest.play(move), Rejection):
            table.collect()
            table.deliver_all()
        else:
            table.settle(0.1)
    assert rnd.state.ended_by is not None, "the round waited for ever on the expelled seat"
    table.settle(3.0)
    finals = [[e for e in table.events[i] if isinstance(e, RoundFinal)] for i in (0, 2)]
    assert [len(f) for f in finals] == [1, 1]
    assert finals[0] == finals[1]
    assert finals[0][0].cheaters == frozenset({1}), "voted out, and still a cheater"
