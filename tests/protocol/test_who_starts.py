"""Who may START a round (PROTOCOL.md 5): the host, unless it departed from or left an
*earlier* round; what happens in that round or later ones does not change who started it.
(Found by `tools.mutate`, seed 604, `protocol/sync_membership.py` `starter`.)"""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import pytest

from protocol import sync_starters
from protocol.envelope import seal
from protocol.errors import DropReason
from protocol.messages import Kind, op_body, seal_op
from protocol.signing import SigningKeyPair
from protocol.sync import OpDelivered, SyncPeer
from tests.protocol.test_hostile import HISTORY, IDS, observer
from tools.gen_vectors import KEYS, TABLE, history_to_start


def test_a_host_who_leaves_during_a_round_was_still_that_rounds_starter() -> None:
    peer = observer()
    host, alice = IDS["host"], IDS["alice"]
    assert peer.starter(1) == host
    assert peer.starter(2) == host
    leave = seal(KEYS["host"], HISTORY.body("host", Kind.LEAVE, 0, None))
    peer.receive(leave, "host", 1.0)
    assert [e.op.kind for e in peer.events() if isinstance(e, OpDelivered)] == [Kind.LEAVE]
    assert peer.starter(2) == alice  # the next round is the heir's to start
    assert peer.starter(1) == host  # round 1 was the host's, and stays so
    # So a START of round 1 from Alice is not hers to make.
    start = [[host, alice], [0, 1], []]
    peer.receive(seal(KEYS["alice"], HISTORY.body("alice", Kind.START, 1, start)), "alice", 1.1)
    assert peer.counters[DropReason.NOT_A_MEMBER] == 1


def test_the_start_passes_back_to_the_host_when_its_heir_is_voted_out_in_turn() -> None:
    # Round 1: the host is voted out and Alice, the first of its participants still in,
    # starts round 2. The host is back for round 2, first in its START order; there Alice
    # is voted out, so round 3 is the host's to start again. (Seed 901, `_succession`: a
    # starter equal to the host was taken for no change, and Alice stayed the starter.)
    host, alice, bob = b"H" * 8, b"A" * 8, b"B" * 8
    here = SimpleNamespace(left=False)
    rounds = {
        1: SimpleNamespace(participants=[host, alice, bob], departed={host: 4}, excluded=set()),
        2: SimpleNamespace(participants=[host, alice, bob], departed={alice: 9}, excluded=set()),
    }
    table = SimpleNamespace(host=host, epochs=rounds, members={host: here, alice: here, bob: here})
    sync = cast("SyncPeer", table)
    assert sync_starters.starter(sync, 1) == host
    assert sync_starters.starter(sync, 2) == alice
    assert sync_starters.starter(sync, 3) == host
    rounds[2].departed = {alice: 9, host: 9}  # both voted out of round 2: Bob starts round 3
    assert sync_starters.starter(sync, 3) == bob
    # Nobody voted out of round 2: Alice, its starter, starts round 3 too; the host does
    # not get the start back by merely playing again. (Seed 15: each round's successor
    # was worked out from the host instead of the round's own starter.)
    rounds[2].departed = {}
    assert sync_starters.starter(sync, 3) == alice


@pytest.mark.parametrize(
    ("name", "why"),
    [("carol", "left the table"), ("sam", "a spectator"), ("mallory", "a stranger")],
)
def test_a_start_naming_someone_who_is_no_player_here_is_refused(name: str, why: str) -> None:
    # The host's START of round 1, with one more participant who is not a player of the
    # table: refused as a whole, and the round does not begin. (Seed 15: the refusal made
    # `return None` let the START through.)
    history = history_to_start()
    real = history.ops[-1][1]
    assert real.kind == Kind.START
    peer = SyncPeer(SigningKeyPair(b"\x0d" * 32), TABLE)
    for i, (_, op) in enumerate(history.ops[:-1]):
        peer.receive(op.datagram(), ("history", i), 0.0)
    stranger = KEYS[name].key_id
    participants, seats, rules = real.payload
    payload = [[*participants, stranger], [*seats, len(seats)], rules]
    deps = [*real.round_deps, peer.delivered(stranger)]
    forged = op_body(
        Kind.START, TABLE, real.author, real.seq, real.prev, real.lamport, 1, deps, payload
    )
    peer.receive(seal(KEYS["host"], forged), "host", 1.0)
    assert peer.counters[DropReason.NOT_A_MEMBER] == 1, why
    assert 1 not in peer.epochs
    peer.receive(real.datagram(), "host", 1.0)  # the real START still begins the round
    assert peer.epochs[1].participants == tuple(participants)


def test_a_start_followed_by_another_start_of_its_round_is_still_judged() -> None:
    # A modified host signs a START of round 1 naming a stranger, then a second START of
    # round 1 on top of it. The second arrives first and waits; the first is judged like
    # any START, refused, and round 1 does not begin. (Seed 16: a START's own round
    # taken for "an op signed before its START" let the first through unjudged.)
    history = history_to_start()
    real = history.ops[-1][1]
    peer = SyncPeer(SigningKeyPair(b"\x0e" * 32), TABLE)
    for i, (_, op) in enumerate(history.ops[:-1]):
        peer.receive(op.datagram(), ("history", i), 0.0)
    stranger = KEYS["mallory"].key_id
    participants, seats, rules = real.payload
    forged = seal_op(
        KEYS["host"],
        op_body(
            Kind.START, TABLE, real.author, real.seq, real.prev, real.lamport, 1,
            [*real.round_deps, 0], [[*participants, stranger], [*seats, len(seats)], rules],
        ),
    )  # fmt: skip
    second = seal_op(
        KEYS["host"],
        op_body(
            Kind.START, TABLE, real.author, real.seq + 1, forged.hash, real.lamport + 1, 1,
            [real.seq, *real.round_deps[1:]], real.payload,
        ),
    )  # fmt: skip
    peer.receive(second.datagram(), "host", 1.0)
    assert 1 not in peer.epochs
    peer.receive(forged.datagram(), "host", 1.0)
    assert peer.counters[DropReason.NOT_A_MEMBER] == 1
    assert 1 not in peer.epochs
