"""What a shell learns from `TableReplica` at the moment it happens, not one heartbeat later:
our own move is handed to the shell (`on_signed`) as soon as it is signed and queued, so it
is stored and sent before we fold it; and a departure our own vote settles in a look is
reported by the tick that cast the vote. (Found by `tools.mutate`, seed 804,
`nerts_p2p/table/playing.py` and `departure_votes.py`.)"""

from __future__ import annotations

from nerts_p2p.game.legal import legal_moves
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import SeatDeparted
from protocol.messages import Kinds, Op, decode
from protocol.sync import BROADCAST
from tests.replication.table_helpers import ManualTable, exchange, seed_showing, three_at_play


def test_our_move_reaches_the_shell_signed_and_queued_before_we_fold_it() -> None:
    table = three_at_play("on-signed")
    player = table.players[1]
    rnd = player.current_round
    assert rnd is not None
    seat = rnd.seat_of[player.me]
    before = rnd.state
    seen: list[tuple[list[object], bool]] = []

    def on_signed() -> None:
        # The shell's view at that moment: what is queued to send, and whether our own
        # state already shows the move.
        said: list[object] = [decode(d, table=player.sync.table) for _, d in player.outgoing()]
        seen.append((said, rnd.state is before))

    player.on_signed = on_signed
    move = legal_moves(rnd.state, seat)[0]
    op = player.play(move)
    assert isinstance(op, Op), op
    assert len(seen) == 1, "the shell hears of each of our moves exactly once"
    said, unfolded = seen[0]
    assert unfolded, "the shell hears of our move before our own fold"
    moves = [m for m in said if getattr(m, "kind", None) == Kinds.MOVE]
    assert [(m.author, m.seq) for m in moves if isinstance(m, Op)] == [(player.me, op.seq)]
    assert rnd.state is not before  # and it is folded here after
    assert player.outgoing() == [], "what the shell took is not queued a second time"


def test_the_tick_that_casts_the_settling_vote_reports_the_departure() -> None:
    rules = Rules(seats=3)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"vote-tick/{i}") for i in range(3)])
    table.start_round()
    table.settle(0.3)
    host, first, last = table.players
    table.events[2].clear()
    last.events()
    now = table.now
    voted_in: list[float] = []
    while not voted_in:
        now += 0.05
        assert now < table.now + 30, "the silent host was never voted out"
        first.tick(now)
        # The first vote reaches the last voter before its own look, so its own vote is
        # the one that settles the departure.
        exchange([first, last], now)
        last.events()
        last.tick(now)
        if any(op.kind == Kinds.DEPART for op in last.sync.logs[last.me]):
            voted_in.append(now)
            departed = [e.author for e in last.events() if isinstance(e, SeatDeparted)]
            assert departed == [host.me], "the vote's own tick reports the departure"
        for _, datagram in last.outgoing():
            first.receive(datagram, BROADCAST, now)
    assert host.me in last.sync.epochs[1].departed
