"""A partner's seed share must open to the seed its dealer committed to in its READY
(PROTOCOL.md 6): one sealed properly but holding another seed is reported, with its reason,
and changes nothing. (Found by `tools.mutate`, seed 604, `nerts_p2p/table/deal_secrets.py`
`take_partner_seed`.)"""

from __future__ import annotations

from nerts_p2p.game.position import state_hash
from nerts_p2p.table.events import ProtocolViolation
from protocol.messages import SEED_AND_SALT, Kind
from protocol.sealed import seal_for
from tests.replication.table_helpers import partners_after_their_share


def test_a_seed_share_of_another_seed_than_the_committed_one_is_reported() -> None:
    table, dealer, partner, before = partners_after_their_share("commit/")
    other_seed = seal_for(
        dealer.sync.key, dealer.sync.keys[partner.me], b"\x07" * SEED_AND_SALT, bytes(24)
    )
    dealer.sync.author(Kind.SEED_SHARE, 1, [partner.me, other_seed])
    table.collect()
    table.deliver_all()
    reports = [e for e in table.events[1] if isinstance(e, ProtocolViolation)]
    assert [(e.author, e.reason) for e in reports] == [
        (dealer.me, "the shared seed does not match the partner's commitment")
    ]
    rnd = partner.current_round
    assert rnd is not None
    assert state_hash(rnd.state) == before


def test_a_seed_share_from_a_player_who_does_not_deal_our_seat_is_reported() -> None:
    # The other seat's dealer seals its own seed, the one it committed to, to our partner:
    # it opens and matches that dealer's commitment, but it is not our seat's deck, so it is
    # reported and changes nothing (PROTOCOL.md 8.2; seed 1201: with the dealer check
    # weakened it was taken for our seat's seed).
    table, _, partner, before = partners_after_their_share("stranger/")
    stranger = table.players[2]
    seed, salt = stranger.my_secrets[1]
    sealed = seal_for(stranger.sync.key, stranger.sync.keys[partner.me], seed + salt, bytes(24))
    stranger.sync.author(Kind.SEED_SHARE, 1, [partner.me, sealed])
    table.collect()
    table.deliver_all()
    reports = [e for e in table.events[1] if isinstance(e, ProtocolViolation)]
    assert [(e.author, e.reason) for e in reports] == [
        (stranger.me, "a seed share from someone who does not deal our seat")
    ]
    rnd = partner.current_round
    assert rnd is not None
    assert state_hash(rnd.state) == before
