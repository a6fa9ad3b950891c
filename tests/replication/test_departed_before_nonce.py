"""A player who vanishes between its READY and the START never reveals its mix nonce: once
the others have voted it out, their moves count without it (PROTOCOL.md 6, 13: a departed
participant owes no nonce after its departure). (Found by `tools.mutate`, seed 801,
`nerts_p2p/table/playing.py` `play`.)"""

from __future__ import annotations

from nerts_p2p.game.errors import Rejection, RejectReason
from nerts_p2p.game.legal import legal_moves
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.presence import SILENCE_BOUND
from nerts_p2p.table.replica import SeatDeparted
from tests.replication.table_helpers import ManualTable, exchange, seed_showing, tick_together


def test_a_player_gone_before_its_mix_nonce_holds_up_no_move_once_voted_out() -> None:
    rules = Rules(seats=3)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"gone-nonce/{i}") for i in range(3)])
    table.ready_all()
    host, first, gone = table.players
    host.start()
    # The third player vanishes: it never hears the START, so never reveals its nonce.
    now = tick_together([host, first], table.now, 0.3)
    rnd = host.current_round
    assert rnd is not None
    assert gone.me not in rnd.log.nonces
    waiting = host.play(legal_moves(rnd.state, 0)[0])
    assert isinstance(waiting, Rejection)
    assert waiting.reason == RejectReason.MISSING_REVEAL
    assert "mix nonce" in waiting.message

    tick_together([host, first], now, SILENCE_BOUND + 2.0)
    assert [e.seat for e in host.events() if isinstance(e, SeatDeparted)] == [2]
    rnd = host.current_round
    assert rnd is not None
    played = host.play(legal_moves(rnd.state, 0)[0])
    assert not isinstance(played, Rejection), played
    exchange([host, first], now)
    for replica in (host, first):
        current = replica.current_round
        assert current is not None
        assert current.steps[-1].op == played
        assert current.steps[-1].applied, current.steps[-1].reason
