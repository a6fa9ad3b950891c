"""The ranges a REQUEST names (PROTOCOL.md 9): the seqs we have neither delivered nor
parked, every author's first gap before anyone's second, at most 16 in all. (Found by
`tools.mutate`, seed 1201, `protocol/sync_requests.py` `gaps`: no test had two authors
with different numbers of gaps, and a mutant that raised on them survived.)"""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING, cast

from protocol.clocks import VersionVector
from protocol.messages import MAX_RANGES, Request, decode
from protocol.sync_requests import gaps
from tests.protocol.test_hostile import IDS, next_op, observer
from tools.gen_vectors import TABLE

if TYPE_CHECKING:
    from protocol.sync import SyncPeer

ALICE, BOB = b"A" * 8, b"B" * 8


def _peer(held: dict[bytes, int], parked: dict[bytes, list[int]]) -> SyncPeer:
    """A peer's view reduced to what `gaps` reads: its vector, what waits, no expulsion."""
    view = SimpleNamespace(
        vector=lambda: tuple(sorted(held.items())),
        pending={author: dict.fromkeys(seqs) for author, seqs in parked.items()},
        expelled={},
    )
    return cast("SyncPeer", view)


def test_every_authors_first_gap_is_asked_for_before_anyones_second() -> None:
    # Alice's ops 5 and 8 wait here (for Bob's, say): her gaps are 3-4, 6-7 and 9-10;
    # Bob has one, 6-7.
    peer = _peer({ALICE: 2, BOB: 5}, {ALICE: [5, 8]})
    theirs = VersionVector({ALICE: 10, BOB: 7})
    assert gaps(peer, theirs) == [
        (ALICE, 3, 4),
        (BOB, 6, 7),
        (ALICE, 6, 7),
        (ALICE, 9, 10),
    ]


def test_a_request_names_at_most_16_ranges_the_first_gaps_first() -> None:
    # Alice has 20 gaps (every other op of hers waits here), Bob 1: Bob's gap is among the
    # 16 asked for, then Alice's in order.
    parked = [2 * k + 1 for k in range(1, 21)]  # 3, 5, ..., 41
    peer = _peer({ALICE: 1, BOB: 1}, {ALICE: parked})
    ranges = gaps(peer, VersionVector({ALICE: 42, BOB: 4}))
    assert len(ranges) == MAX_RANGES
    assert ranges[:2] == [(ALICE, 2, 2), (BOB, 2, 4)]
    assert ranges[2:] == [(ALICE, seq, seq) for seq in range(4, 4 + 2 * 14, 2)]


def _requests(peer: SyncPeer) -> list[list[tuple[bytes, int, int]]]:
    out = []
    for _, datagram in peer.outgoing():
        message = decode(datagram, table=TABLE)
        if isinstance(message, Request):
            out.append([(author, first, last) for author, first, last in message.ranges])
    return out


def test_an_author_is_asked_about_again_the_moment_its_retry_runs_out() -> None:
    peer = observer()
    alice = IDS["alice"]
    wanted = [(alice, 1, 1)]
    peer.request("x", wanted, 1.0)
    peer.request("x", wanted, 1.0 + peer.request_retry / 2)  # still in flight: not again
    peer.request("x", wanted, 1.0 + peer.request_retry)
    assert _requests(peer) == [wanted, wanted]


def test_an_op_alone_behind_a_gap_asks_only_for_the_seqs_below_the_lowest_parked() -> None:
    # Alice's ops n+2 and n+4 come alone, a second apart (the retry long run out): each
    # time the gap asked for is n+1 alone, the first hole; n+2 is held, parked.
    peer = observer()
    alice = IDS["alice"]
    n = peer.delivered(alice)
    peer.receive(next_op("alice", seq=n + 2, prev=b"\x01" * 16), "alice", 1.0)
    assert _requests(peer) == [[(alice, n + 1, n + 1)]]
    peer.receive(next_op("alice", seq=n + 4, prev=b"\x02" * 16), "alice", 2.0)
    assert _requests(peer) == [[(alice, n + 1, n + 1)]]
