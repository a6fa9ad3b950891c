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
