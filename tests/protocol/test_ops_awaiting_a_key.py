"""Ops from an author we have no key for wait unverified; when the key arrives (the host's
ADMIT names it) each is checked on its own, and a forgery among them is counted as one,
like any other (PROTOCOL.md 17; DESIGN.md's receive gate). (Found by `tools.mutate`, seed
501, `protocol/sync_parking.py`.)"""

from __future__ import annotations

from protocol.codec import pack
from protocol.envelope import PROTOCOL_VERSION, seal
from protocol.errors import DropReason
from protocol.messages import PLAYER, Kind, op_body
from tests.protocol.test_hostile import HISTORY, IDS, observer
from tools.gen_vectors import KEYS, TABLE


def test_a_forged_op_that_waited_for_its_authors_key_is_counted_once_the_key_arrives() -> None:
    peer = observer()
    mallory = IDS["mallory"]
    ready = op_body(
        Kind.READY, TABLE, mallory, 2, b"\x03" * 16, 40, 0, [],
        [1, bytes(32), [], bytes(32), bytes(104)],
    )  # fmt: skip
    # Signed by Bob, under Mallory's author id: nothing can tell until her key is known.
    peer.receive(seal(KEYS["bob"], ready), "somebody", 1.0)
    assert peer.awaiting_key[mallory]
    assert peer.counters.total == 0
    admit = HISTORY.body("host", Kind.ADMIT, 0, [KEYS["mallory"].public_key, PLAYER])
    peer.receive(seal(KEYS["host"], admit), "host", 1.1)
    assert mallory not in peer.awaiting_key
    assert peer.counters[DropReason.BAD_SIGNATURE] == 1
    assert peer.delivered(mallory) == 0


def test_an_unknown_author_may_park_exactly_its_bound_of_ops() -> None:
    # Anyone can make up author ids, so each one's parking space is bounded on its own
    # (PROTOCOL.md 4: 64), below the bound for all of them together. (Found by
    # `tools.mutate`, seed 801: one op fewer went unnoticed.)
    peer = observer()
    stranger = b"\x5a" * 8
    for seq in range(2, 64 + 3):  # 65 ops
        body = op_body(Kind.MOVE, TABLE, stranger, seq, b"\x01" * 16, 50 + seq, 1, [1, 1], "stuck")
        peer.receive(pack([PROTOCOL_VERSION, pack(body), bytes(64)]), "stranger", 1.0)
    assert len(peer.awaiting_key[stranger]) == 64
    assert peer.counters[DropReason.UNKNOWN_AUTHOR] == 1
