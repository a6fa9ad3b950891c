"""What a round's REVEALs must prove (PROTOCOL.md 6): the seed *and* the salt a dealer
committed to in its READY. A REVEAL that does not open the commitment names its dealer a
cheater even when the seed it shows replays the round faithfully (found by
`tools.mutate`, seed 502)."""

from __future__ import annotations

from nerts_p2p.table.replica import RoundFinal
from tests.replication.table_helpers import call_nerts, one_card_nerts_table


def test_a_reveal_with_the_right_seed_but_another_salt_names_its_dealer_a_cheater() -> None:
    table = one_card_nerts_table("salt")
    liar = table.players[1]
    seed, salt = liar.my_secrets[1]
    liar.my_secrets[1] = (seed, bytes(a ^ 0xFF for a in salt))  # what it will REVEAL
    call_nerts(table)
    for i in (0, 1):
        (final,) = [e for e in table.events[i] if isinstance(e, RoundFinal)]
        assert final.cheaters == frozenset({1})
        assert not final.audit.mismatches  # the seed itself replays the round faithfully
        assert final.scores[1].score <= 0
    # The honest control: the same table with the salt it committed to names nobody.
    honest = one_card_nerts_table("salt")
    call_nerts(honest)
    (final,) = [e for e in honest.events[0] if isinstance(e, RoundFinal)]
    assert final.cheaters == frozenset()
