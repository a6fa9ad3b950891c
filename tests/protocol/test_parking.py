"""What an answer counts, and what a peer keeps aside, while ops wait (PROTOCOL.md 4, 9): an
answer is in once as many of the ops asked for are held (new, parked or already there,
each once), and ops of authors whose key is unknown stay within their bound even when the
author that overflows it is the oldest. (Found by `tools.mutate`, seed 101,
`protocol/sync_parking.py`.)"""

from __future__ import annotations

from protocol.codec import pack
from protocol.envelope import PROTOCOL_VERSION
from protocol.errors import DropReason
from protocol.messages import Kind, op_body
from protocol.sync import MAX_AWAITING
from tests.protocol.test_anti_entropy_rules import _asked, _heartbeat, _sent, _table, _turn
from tests.protocol.test_hostile import observer
from tools.gen_vectors import TABLE


def _answer_to_a_request_for_80(duplicates: int, parked: bool) -> list[tuple[int, int]]:
    """The asker asks the source for 80 of the mover's ops; before the answer (64 of them)
    comes, the first `duplicates` reach it on their own. With `parked`, the answer's ops
    name a third player's op the asker lacks, so they wait. What the asker asks for next,
    as seqs past what it had."""
    table = _table(players=4)
    source, asker, mover, third = table.players
    if parked:
        (missing,) = _turn(third, 1)
        mover.receive(missing, 3, table.now)
        source.receive(missing, 3, table.now)
    ops = _turn(mover, 80)
    for datagram in ops:
        source.receive(datagram, 2, table.now)
    source.outgoing()
    have = asker.sync.delivered(mover.me)
    now = table.now + 1.0
    asker.receive(_heartbeat(source, now), 0, now)  # what the source holds (that request is lost)
    asker.outgoing()
    later = now + 0.25  # past the retry time: the asker asks for the mover's ops alone
    asker.sync.request(0, [(mover.me, have + 1, have + 80)], later)
    ((_, request),) = asker.outgoing()
    for datagram in ops[:duplicates]:
        asker.receive(datagram, 2, later)
    asker.outgoing()
    source.receive(request, 1, later)
    for _, datagram in source.outgoing():
        asker.receive(datagram, 0, later)
    assert asker.sync.delivered(mover.me) == (have if parked else have + 64)
    return [(first - have, last - have) for first, last in _asked(_sent(asker), mover.me)]


def test_an_answer_holding_ops_already_here_counts_each_once() -> None:
    # 32 of the 64 ops of the answer were here already: the answer is in only once all
    # 64 are, and then the rest of the gap is asked for (not before, while half of the
    # answer is still on its way).
    assert _answer_to_a_request_for_80(duplicates=32, parked=False) == [(65, 80)]


def test_an_answer_whose_ops_must_wait_counts_them_as_held() -> None:
    # The answer's ops wait for the third player's op: held all the same, so the answer
    # is in, and the rest of the gap is asked for at once.
    assert _answer_to_a_request_for_80(duplicates=0, parked=True) == [(65, 80)]


def _unknown_authors_op(author: int, seq: int) -> bytes:
    """An op of a made-up author (its key unknown: its signature is never checked)."""
    body = op_body(
        Kind.MOVE, TABLE, author.to_bytes(8, "big"), seq, b"\x01" * 16, 50, 1, [1, 1], "stuck"
    )
    return pack([PROTOCOL_VERSION, pack(body), bytes(64)])


def test_ops_put_aside_stay_within_the_bound_when_the_oldest_author_overflows_it() -> None:
    peer = observer()
    per_author = 4
    authors = MAX_AWAITING // per_author
    for author in range(authors):  # author 0 first: the oldest
        for seq in range(2, 2 + per_author):
            peer.receive(_unknown_authors_op(author, seq), ("source", author, seq), 1.0)
    assert sum(len(ops) for ops in peer.awaiting_key.values()) == MAX_AWAITING
    # Author 0's next op overflows the bound: its own four, the oldest, make room.
    peer.receive(_unknown_authors_op(0, 2 + per_author), "source 0", 1.0)
    assert peer.counters[DropReason.UNKNOWN_AUTHOR] == per_author
    assert [op.seq for op in peer.awaiting_key[(0).to_bytes(8, "big")]] == [2 + per_author]
    assert sum(len(ops) for ops in peer.awaiting_key.values()) == MAX_AWAITING - per_author + 1


def test_a_request_does_not_name_a_parked_op_that_is_the_last_the_peer_holds() -> None:
    # The watcher holds the mover's first and third new ops (the third parked, waiting for
    # the second); the mover's heartbeat names three. Only the second is asked for.
    table = _table()
    mover, watcher = table.players
    have = watcher.sync.delivered(mover.me)
    ops = _turn(mover, 3)
    for datagram in (ops[0], ops[2]):
        watcher.receive(datagram, 0, table.now)
    watcher.outgoing()
    watcher.receive(_heartbeat(mover, table.now + 1.0), 0, table.now + 1.0)
    assert _asked(_sent(watcher), mover.me) == [(have + 2, have + 2)]
