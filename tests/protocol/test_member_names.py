"""What a peer knows of each member from the ops alone: the name and role each gave, and
the key it signs with (PROTOCOL.md 6, 17). (Found by `tools.mutate`, seed 501,
`protocol/sync_membership.py`: the host's name taken from the wrong field of its OPEN.)"""

from __future__ import annotations

from protocol.messages import PLAYER, SPECTATOR
from tests.protocol.test_hostile import IDS, observer
from tools.gen_vectors import KEYS


def test_a_peer_knows_each_member_by_the_name_and_role_its_open_or_join_gave() -> None:
    peer = observer()
    members = {m.author: (m.name, m.role, m.public_key, m.left) for m in peer.members.values()}
    expected = {
        IDS[name]: (name, SPECTATOR if name == "sam" else PLAYER, KEYS[name].public_key, False)
        for name in ("host", "alice", "bob", "sam")
    }
    # Carol left in the lobby: still a member on record, marked as gone.
    expected[IDS["carol"]] = ("carol", PLAYER, KEYS["carol"].public_key, True)
    assert members == expected
    assert peer.host == IDS["host"]
