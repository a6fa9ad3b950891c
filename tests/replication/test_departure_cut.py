"""The cut of a departure keeps what the voters held: a player voted out after its last move
reached everyone is frozen with that move made, not one move earlier (PROTOCOL.md 13: the
departed author's ops up to the named seq count, those above it do not). (Found by
`tools.mutate`, seed 901, `protocol/order.py` `EpochLog.counts`.)"""

from __future__ import annotations

from nerts_p2p.game.legal import legal_moves
from nerts_p2p.game.state import GameState
from nerts_p2p.table.replica import SeatDeparted
from protocol.messages import Kind, Op
from tests.replication.table_helpers import exchange, three_at_play


def test_a_departed_players_last_move_that_every_voter_held_still_counts() -> None:
    table = three_at_play("departure-cut")
    host, first, last = table.players
    rnd = host.current_round
    assert rnd is not None
    seat = rnd.seat_of[host.me]
    unmoved: dict[bytes, tuple[object, ...]] = {}
    for voter in (first, last):
        assert voter.current_round is not None
        unmoved[voter.me] = _cards(voter.current_round.state, seat)
    move = host.play(legal_moves(rnd.state, seat)[0])
    assert isinstance(move, Op)
    table.collect()
    table.deliver_all()
    seen: dict[bytes, GameState] = {}
    for voter in (first, last):
        assert voter.current_round is not None
        seen[voter.me] = voter.current_round.state  # the move made, as each voter sees it
        assert _cards(seen[voter.me], seat) != unmoved[voter.me]
    # The host falls silent; both others name its last op, the move, as the last they hold.
    for voter in (first, last):
        assert voter.sync.delivered(host.me) == move.seq
        voter.sync.author(Kind.DEPART, 1, [host.me, move.seq])
        voter._after_sync()
    exchange([first, last], table.now + 0.1)
    for voter in (first, last):
        voter_round = voter.current_round
        assert voter_round is not None
        assert any(isinstance(e, SeatDeparted) for e in voter.events())
        assert host.me in voter.sync.epochs[1].departed
        frozen, moved = voter_round.state, seen[voter.me]
        assert _cards(frozen, seat) == _cards(moved, seat), "the host's last move was undone"
        assert frozen.foundations == moved.foundations
        assert frozen.seats[seat].stuck  # a departed seat says stuck: nobody waits on it


def _cards(state: GameState, seat: int) -> tuple[object, ...]:
    """Where a seat's cards lie (its stuck flag aside)."""
    s = state.seats[seat]
    return s.nerts_hidden, s.nerts_up, s.work, s.stock, s.waste
