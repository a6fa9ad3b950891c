"""Deps never go down from one op of an author to its next (PROTOCOL.md 5), except for the
ops of an author expelled from there on: a peer that restarts cannot fetch those again
(nobody serves them), so its next op names fewer of them, and that is no lie. (Found by
`tools.mutate`, seed 501, `protocol/sync_checks.py` `_named_fewer`.)"""

from __future__ import annotations

import pytest

from nerts_p2p.table.events import ProtocolViolation
from protocol.envelope import seal
from protocol.errors import DropReason
from protocol.messages import Kind, op_body
from protocol.sync_events import AuthorExpelled, OpRejected
from tests.protocol.test_anti_entropy_rules import _turn
from tests.protocol.test_hostile import HISTORY, IDS, next_op, observer, op_of
from tests.replication.table_helpers import signed_move, three_at_play
from tools.gen_vectors import KEYS


@pytest.mark.parametrize("dropped", [1, 2])
def test_an_op_may_name_fewer_ops_of_an_author_expelled_from_there_than_its_previous_op(
    dropped: int,
) -> None:
    peer = observer()
    host, alice = IDS["host"], IDS["alice"]
    round_one = peer.epoch(1)
    assert round_one is not None
    assert list(round_one.participants) == [host, alice]
    one, two = next_op("host", payload="stuck"), next_op("host", payload="recycle")
    peer.receive(one, "host", 1.0)
    hosts = peer.delivered(host)  # the first version is delivered
    seen = op_of(one)
    mine = peer.delivered(alice)
    # Alice sees the host's op, then moves naming it.
    before = op_of(
        seal(
            KEYS["alice"],
            HISTORY.body(
                "alice", Kind.MOVE, 1, "stuck", lamport=seen.lamport + 1, deps=[hosts, mine]
            ),
        )
    )
    peer.receive(before.datagram(), "alice", 1.0)
    assert peer.delivered(alice) == mine + 1
    # The second version proves the host equivocated: expelled from that op on.
    peer.receive(two, "mallory", 1.1)
    assert [e.seq for e in peer.events() if isinstance(e, AuthorExpelled)] == [hosts]
    # Alice, restarted, could not fetch that op again: her next op names one host op less.
    # One less is all the expulsion excuses: naming two less takes back an op that counts.
    after = seal(
        KEYS["alice"],
        HISTORY.body(
            "alice",
            Kind.MOVE,
            1,
            "recycle",
            seq=before.seq + 1,
            prev=before.hash,
            lamport=before.lamport + 1,
            deps=[hosts - dropped, mine + 1],
        ),
    )
    peer.receive(after, "alice", 1.2)
    refused = [e.reason for e in peer.events() if isinstance(e, OpRejected)]
    if dropped == 1:
        assert refused == []
        assert peer.delivered(alice) == mine + 2
    else:
        assert refused == [DropReason.BACKDATED]
        assert peer.delivered(alice) == mine + 1


def test_an_excused_drop_takes_no_other_author_with_it() -> None:
    # Three players; the cheat (seat 2) equivocates at seq k after the mover had seen its
    # first version. The mover's next op names one cheat op less (excused: it is past the
    # expulsion) and exactly as many of the third player's as before: as many is not
    # fewer, so the op stands. (Found by `tools.mutate`, seed 803.)
    table = three_at_play("excused")
    mover, judge, cheat = table.players
    base = cheat.sync.clock.value + 1
    last = cheat.sync.logs[cheat.me][-1]
    first, other = (signed_move(cheat, 0, last.hash, lamport) for lamport in (base, base + 7))
    for replica in (mover, judge):
        replica.receive(first, "cheat", table.now)
    (seen,) = _turn(mover, 1)
    judge.receive(seen, "mover", table.now)
    for replica in (mover, judge):
        replica.receive(other, "prover", table.now)
        assert cheat.me in replica.sync.expelled
    previous = mover.sync.logs[mover.me][-1]
    rnd = judge.current_round
    assert rnd is not None
    index = rnd.log.index
    deps = list(previous.round_deps)
    deps[index[mover.me]] = previous.seq
    deps[index[cheat.me]] -= 1  # past the expulsion: excused
    # the judge's own entry stays as it was: it made no op meanwhile
    body = op_body(
        Kind.MOVE, mover.sync.table, mover.me, previous.seq + 1, previous.hash,
        previous.lamport + 1, rnd.number, deps, "turn",
    )  # fmt: skip
    judge.events()
    judge.receive(seal(mover.sync.key, body), "mover", table.now)
    assert [e for e in judge.events() if isinstance(e, ProtocolViolation)] == []
    assert judge.sync.delivered(mover.me) == previous.seq + 1
