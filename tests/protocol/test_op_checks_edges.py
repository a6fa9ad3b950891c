"""Rules an op is judged by, at their edges: its deps must count its author's own previous
op, a table's very first op may be stamped at most one step past zero, and deps never go
down from an author's round op to its next even with a lobby op between them. (Found by
`tools.mutate`, seed 604, `protocol/sync_checks.py`.)"""

from __future__ import annotations

import pytest

from protocol.envelope import seal
from protocol.errors import LocalProtocolError
from protocol.messages import NO_PREV, Kind, op_body
from protocol.sync import OpDelivered, OpRejected, SyncPeer
from protocol.sync_limits import MAX_LAMPORT_STEP
from tests.protocol.test_hostile import HISTORY, IDS, next_op, observer, op_of
from tools.gen_vectors import KEYS, TABLE, history_to_start

_FEWER = ("rejected", "its deps name fewer ops of an author than its author's previous op did")


def _verdicts(peer: SyncPeer) -> list[tuple[str, str]]:
    return [
        ("rejected", e.message) if isinstance(e, OpRejected) else ("delivered", e.op.kind.name)
        for e in peer.events()
        if isinstance(e, OpDelivered | OpRejected)
    ]


def test_a_round_op_whose_deps_miscount_its_authors_own_ops_is_rejected() -> None:
    peer = observer()
    host, alice = peer.delivered(IDS["host"]), peer.delivered(IDS["alice"])
    # (Naming more of her own would name the op itself: it would wait for ever, not fail.)
    peer.receive(next_op("alice", deps=[host, alice - 1]), "alice", 1.0)
    assert _verdicts(peer) == [("rejected", "deps must count the author's own previous op")]
    assert peer.delivered(IDS["alice"]) == alice


@pytest.mark.parametrize(
    ("lamport", "delivered"), [(MAX_LAMPORT_STEP, True), (MAX_LAMPORT_STEP + 1, False)]
)
def test_a_tables_first_op_may_be_stamped_at_most_one_step_past_zero(
    lamport: int, delivered: bool
) -> None:
    name, opener = HISTORY.ops[0]
    assert name == "host"
    assert opener.kind == Kind.OPEN
    body = op_body(Kind.OPEN, TABLE, IDS["host"], 1, NO_PREV, lamport, 0, [], list(opener.payload))
    peer = SyncPeer(KEYS["sam"], TABLE)
    peer.receive(seal(KEYS["host"], body), "host", 1.0)
    expected = (
        ("delivered", "OPEN")
        if delivered
        else ("rejected", "its Lamport time is far past everything it names")
    )
    assert _verdicts(peer) == [expected]


def test_deps_may_not_go_down_from_a_round_op_to_the_next_across_a_lobby_op() -> None:
    # Alice's last op is her MIX of round 1, naming every op of the host. She readies for
    # round 2 (a lobby op), then moves in round 1 naming one host op less: a lie about what
    # she had seen, judged against her MIX, not against the READY in between.
    peer = observer()
    host, alice = peer.delivered(IDS["host"]), peer.delivered(IDS["alice"])
    ready = op_of(
        seal(
            KEYS["alice"],
            HISTORY.body("alice", Kind.READY, 0, [2, b"\x01" * 32, [], bytes(32), bytes(104)]),
        )
    )
    peer.receive(ready.datagram(), "alice", 1.0)
    assert _verdicts(peer) == [("delivered", "READY")]

    def move(named_of_host: int) -> bytes:
        return seal(
            KEYS["alice"],
            HISTORY.body(
                "alice",
                Kind.MOVE,
                1,
                "stuck",
                seq=ready.seq + 1,
                prev=ready.hash,
                lamport=ready.lamport + 1,
                deps=[named_of_host, alice + 1],
            ),
        )

    peer.receive(move(host - 1), "alice", 1.1)
    assert _verdicts(peer) == [_FEWER]
    peer.receive(move(host), "alice", 1.2)
    assert _verdicts(peer) == [("delivered", "MOVE")]


@pytest.mark.parametrize(("fewer", "verdict"), [(0, ("delivered", "MOVE")), (1, _FEWER)])
def test_a_starters_first_round_op_may_not_name_fewer_than_its_start(
    fewer: int, verdict: tuple[str, str]
) -> None:
    # The host's START of round 1 names the participants' ops it had seen; its next op (a
    # MOVE here) is judged against the START's deps, named by the START's own participants
    # (the round's log does not exist yet when the START itself is judged). (Found by
    # `tools.mutate`, seed 801: the START's participants read from the wrong field.)
    history = history_to_start()
    name, start = history.ops[-1]
    assert (name, start.kind) == ("host", Kind.START)
    peer = observer(history)
    _, alice_seen = start.round_deps
    assert alice_seen > 0
    move = seal(
        KEYS["host"],
        history.body("host", Kind.MOVE, 1, "stuck", deps=[start.seq, alice_seen - fewer]),
    )
    peer.receive(move, "host", 1.0)
    assert _verdicts(peer) == [verdict]


@pytest.mark.parametrize(("fewer", "verdict"), [(1, ("delivered", "MOVE")), (2, _FEWER)])
def test_a_starters_first_round_op_is_excused_only_the_ops_past_an_expulsion(
    fewer: int, verdict: tuple[str, str]
) -> None:
    # Alice equivocates on the last op of hers that the host's START names: her ops from
    # there on do not count, so the host's next op may name one of hers fewer than its
    # START did (the op the expulsion voided), but not two (found by `tools.mutate`, seed
    # 901: the expulsion's edge in the comparison with a START).
    history = history_to_start()
    _, start = history.ops[-1]
    peer = observer(history)
    _, alice_seen = start.round_deps
    voided = next(op for name, op in history.ops if name == "alice" and op.seq == alice_seen)
    twin = op_body(
        voided.kind, TABLE, voided.author, voided.seq, voided.prev, voided.lamport + 1,
        voided.epoch, [list(d) for d in voided.lobby_deps] if voided.epoch == 0
        else list(voided.round_deps), voided.payload,
    )  # fmt: skip
    peer.receive(seal(KEYS["alice"], twin), "alice", 1.0)
    assert peer.expelled == {IDS["alice"]: alice_seen}
    peer.events()
    move = seal(
        KEYS["host"],
        history.body("host", Kind.MOVE, 1, "stuck", deps=[start.seq, alice_seen - fewer]),
    )
    peer.receive(move, "host", 1.1)
    assert _verdicts(peer) == [verdict]


def test_a_peer_that_has_not_seen_the_tables_open_authors_nothing_there() -> None:
    # A joiner still waiting for the OPEN (its user gave up, say) has no table to speak at:
    # its goodbye is refused in words and nothing goes out, so no peer ever holds an op of
    # a member that never joined (found by `tools.mutate`, seed 901,
    # `protocol/sync_membership.py`).
    peer = SyncPeer(KEYS["alice"], TABLE)
    with pytest.raises(LocalProtocolError, match="the table has not been opened"):
        peer.author(Kind.LEAVE, 0, None)
    assert peer.delivered(peer.me) == 0
    assert peer.outgoing() == []
