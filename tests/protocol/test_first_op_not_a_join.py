"""An admitted player's first op that is not its JOIN (its key is known from the host's
ADMIT, so the op is verified and judged, not parked for a key): it is rejected as not a
member's, counted and reported, and the JOIN that follows is delivered. (Found by
`tools.mutate`, seed 703, `protocol/sync_parking.py`: such an op was dropped unseen.)"""

from __future__ import annotations

from protocol.envelope import seal
from protocol.errors import DropReason
from protocol.messages import NO_PREV, PLAYER, Kind, op_body
from protocol.sync import OpRejected
from tests.protocol.test_hostile import HISTORY, IDS, observer, op_of
from tools.gen_vectors import KEYS, TABLE


def test_an_admitted_players_first_op_that_is_not_its_join_is_rejected_and_reported() -> None:
    admit = seal(
        KEYS["host"], HISTORY.body("host", Kind.ADMIT, 0, [KEYS["mallory"].public_key, PLAYER])
    )
    admitted = op_of(admit)
    lamport = admitted.lamport + 1
    deps: list[object] = [[IDS["host"], admitted.seq]]

    def first_op(kind: Kind, payload: object) -> bytes:
        body = op_body(kind, TABLE, IDS["mallory"], 1, NO_PREV, lamport, 0, deps, payload)
        return seal(KEYS["mallory"], body)

    peer = observer()
    peer.receive(admit, "host", 1.0)
    peer.events()
    peer.receive(first_op(Kind.LEAVE, None), "mallory", 1.0)
    rejected = [e for e in peer.events() if isinstance(e, OpRejected)]
    assert [(e.op.author, e.op.seq, e.reason) for e in rejected] == [
        (IDS["mallory"], 1, DropReason.NOT_A_MEMBER)
    ]
    assert peer.counters.as_dict()["not_a_member"] == 1
    assert peer.delivered(IDS["mallory"]) == 0
    join = first_op(Kind.JOIN, [KEYS["mallory"].public_key, "mallory", PLAYER])
    peer.receive(join, "mallory", 1.0)
    assert peer.delivered(IDS["mallory"]) == 1
