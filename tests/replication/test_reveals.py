"""What a round's REVEALs must prove (PROTOCOL.md 6): the seed *and* the salt a dealer
committed to in its READY. A REVEAL that does not open the commitment names its dealer a
cheater even when the seed it shows replays the round faithfully (found by
`tools.mutate`, seed 502)."""

from __future__ import annotations

from nerts_p2p.game.errors import Rejection
from nerts_p2p.game.moves import FROM_NERTS, NEW_FOUNDATION, Move
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import RoundFinal
from tests.replication.table_helpers import ManualTable, seed_showing


def _nerts_table(label: str) -> ManualTable:
    """Two seats, Nerts piles of one card; seat 0's is the ace of spades: it can call at once."""
    rules = Rules(seats=2, nerts_size=1)
    seeds = [
        seed_showing(rules, [], nerts_top="AS", label=f"{label}/caller"),
        seed_showing(rules, [], label=f"{label}/other"),
    ]
    table = ManualTable(rules, seeds)
    table.start_round()
    table.settle(0.3)  # every mix nonce is in: moves count
    return table


def _call_nerts(table: ManualTable) -> None:
    caller = table.players[0]
    rnd = caller.current_round
    assert rnd is not None
    ace = rnd.state.seats[0].nerts_up[-1]
    assert not isinstance(
        caller.play(Move(0, "play", ace, FROM_NERTS, "f", NEW_FOUNDATION)), Rejection
    )
    assert not isinstance(caller.play(Move(0, "nerts")), Rejection)
    table.collect()
    table.deliver_all()
    table.settle(2.0)


def test_a_reveal_with_the_right_seed_but_another_salt_names_its_dealer_a_cheater() -> None:
    table = _nerts_table("salt")
    liar = table.players[1]
    seed, salt = liar.my_secrets[1]
    liar.my_secrets[1] = (seed, bytes(a ^ 0xFF for a in salt))  # what it will REVEAL
    _call_nerts(table)
    for i in (0, 1):
        (final,) = [e for e in table.events[i] if isinstance(e, RoundFinal)]
        assert final.cheaters == frozenset({1})
        assert not final.audit.mismatches  # the seed itself replays the round faithfully
        assert final.scores[1].score <= 0
    # The honest control: the same table with the salt it committed to names nobody.
    honest = _nerts_table("salt")
    _call_nerts(honest)
    (final,) = [e for e in honest.events[0] if isinstance(e, RoundFinal)]
    assert final.cheaters == frozenset()
