"""Which ops a round orders, and when its departures are worked out, whatever order the ops
arrive in: another implementation must reach the same order and the same departures.
(Found by `tools.mutate`, seed 101, `protocol/order.py`.)"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from protocol.messages import Kind, Op, op_body, seal_op
from protocol.order import EpochLog, nonce_mix, tie_coin
from protocol.sync import DeparturesChanged, OpDelivered, SyncPeer
from tests.protocol.test_hostile import IDS, OBSERVER, next_op, observer
from tools.gen_vectors import KEYS, MIX_NONCES, NONCE, ROUND_RULES, TABLE, TABLE_RULES


def test_a_leave_a_non_player_sends_with_a_rounds_number_takes_no_place_in_its_order() -> None:
    # Bob is a member who does not play round 1. A LEAVE may carry any epoch; his, sent
    # with round 1's, is delivered (he has left) but is none of the round's ops: positions
    # and the stable prefix count only the round's own.
    peer = observer()
    round_one = peer.epoch(1)
    assert round_one is not None
    ordered = list(round_one.ops)
    peer.receive(next_op("bob", Kind.LEAVE, None), "bob", 1.0)
    (delivered,) = [e for e in peer.events() if isinstance(e, OpDelivered)]
    assert delivered.op.kind == Kind.LEAVE
    assert delivered.op.epoch == 1
    assert delivered.position is None
    assert round_one.ops == ordered
    assert peer.members[IDS["bob"]].left


class _Table:
    """The host, Alice and Bob as bare `SyncPeer`s, every op delivered to the others at once."""

    def __init__(self) -> None:
        self.peers = {name: SyncPeer(KEYS[name], TABLE) for name in ("host", "alice", "bob")}
        self.ops: list[Op] = []

    def author(self, name: str, kind: Kind, epoch: int, payload: object) -> Op:
        op = self.peers[name].author(kind, epoch, payload)
        for other, peer in self.peers.items():
            if other != name:
                peer.receive(op.datagram(), name, 0.0)
        self.ops.append(op)
        return op


def test_a_rounds_first_depart_delivered_with_its_start_in_one_pass_is_worked_out() -> None:
    # The host starts a round it sits out, Alice (first in START order) and Bob playing.
    # Alice's first op of the round votes Bob out: one vote is enough, her half holds the
    # round's first participant (PROTOCOL.md 13).
    table = _Table()
    opening = [KEYS["host"].public_key, "host", TABLE_RULES, 4, True, NONCE, False]
    table.author("host", Kind.OPEN, 0, opening)
    for name in ("alice", "bob"):
        table.author("host", Kind.ADMIT, 0, [KEYS[name].public_key, 0])
        table.author(name, Kind.JOIN, 0, [KEYS[name].public_key, name, 0])
    readies = {
        name: table.author(name, Kind.READY, 0, [1, bytes([n]) * 32, [], bytes(32), bytes(104)])
        for n, name in enumerate(("alice", "bob"), 1)
    }
    players = [IDS["alice"], IDS["bob"]]
    start = table.author("host", Kind.START, 1, [players, [0, 1], ROUND_RULES])
    held = table.peers["alice"].delivered(IDS["bob"])
    depart = table.author("alice", Kind.DEPART, 1, [IDS["bob"], held])
    in_order = table.peers["host"].epoch(1)
    assert in_order is not None
    assert set(in_order.departed) == {IDS["bob"]}

    # A late peer gets the START before Bob's READY (it waits for it), then Alice's DEPART
    # (it waits for the START), then Bob's READY: one delivery pass takes the START and
    # the DEPART together. The departure is worked out all the same.
    late = SyncPeer(OBSERVER, TABLE)
    for n, op in enumerate(table.ops):
        if op not in (readies["bob"], start, depart):
            late.receive(op.datagram(), ("table", n), 1.0)
    for n, op in enumerate((start, depart, readies["bob"])):
        late.receive(op.datagram(), ("late", n), 1.0)
    assert late.vector() == table.peers["host"].vector()
    round_one = late.epoch(1)
    assert round_one is not None
    assert round_one.departed == in_order.departed
    changed = [e for e in late.events() if isinstance(e, DeparturesChanged)]
    assert [e.added for e in changed] == [(IDS["bob"],)]


def test_an_ops_tie_coin_mixes_exactly_the_nonces_its_deps_cover() -> None:
    # PROTOCOL.md 6: an op's tiebreak is drawn from the round's mix and the MIX nonces the
    # op had seen (in START order), so nobody can predict a tie before the nonces are out.
    # Alice's first move saw no nonce; the host's move after both MIX ops saw both.
    peer = observer()
    round_one = peer.epoch(1)
    assert round_one is not None
    peer.receive(next_op("host", Kind.MOVE, "stuck"), "host", 1.0)
    ops: dict[bytes, list[Op]] = {}
    for op in round_one.ops:
        ops.setdefault(op.author, []).append(op)
    first_move = next(op for op in ops[IDS["alice"]] if op.kind == Kind.MOVE)
    last_move = [op for op in ops[IDS["host"]] if op.kind == Kind.MOVE][-1]
    names = {IDS["host"]: "host", IDS["alice"]: "alice"}
    every_nonce = [MIX_NONCES[names[p]] for p in round_one.participants]
    for op, nonces in ((first_move, [None, None]), (last_move, every_nonce)):
        key = KEYS[names[op.author]].public_key
        coin = tie_coin(nonce_mix(round_one.mix, nonces), op.lamport, key)
        assert round_one.order_key(op) == (op.lamport, coin)
        # And the coin is the very digest PROTOCOL.md 6 writes out, byte for byte, for
        # another implementation to compute (seed 1201: an 8-byte Lamport time made 9
        # bytes kept every test green, since they all asked `tie_coin` itself).
        assert coin == _tiebreak_as_written(round_one.mix, nonces, op.lamport, key)


def _tiebreak_as_written(
    mix: bytes, nonces: Sequence[bytes | None], lamport: int, key: bytes
) -> bytes:
    covered = b"".join(b"\x01" + n if n is not None else b"\x00" for n in nonces)
    nonce_mix_of_op = hashlib.sha256(b"nerts-p2p/nonces" + b"\x00" + mix + covered).digest()
    return hashlib.sha256(
        b"nerts-p2p/tie" + b"\x00" + nonce_mix_of_op + lamport.to_bytes(8, "big") + key
    ).digest()


def test_an_expelled_participant_holds_no_op_back_from_stability() -> None:
    # Host, Alice and Bob play; Bob is proven to cheat and goes quiet, his horizon left at
    # 5 while the others' reach 20 and 25. Nobody has voted him out yet, but from his
    # expulsion on his horizon is left out of the stable bound (PROTOCOL.md 7, 10): the
    # ops up to 20 are stable at once, not only once a vote departs him. (Found by
    # `tools.mutate`, seed 21: with the bound's first `not` dropped, a round with an
    # expelled participant and nobody departed waited on him.)
    keys = [KEYS[name] for name in ("host", "alice", "bob")]
    participants = tuple(k.key_id for k in keys)
    start_payload = [list(participants), [0, 1, 2], []]
    start = seal_op(
        keys[0],
        op_body(Kind.START, TABLE, participants[0], 1, bytes(16), 1, 1, [0, 0, 0], start_payload),
    )
    log = EpochLog(1, participants, {k.key_id: k.public_key for k in keys}, b"mix", start)
    for author, lamport in zip(participants, (20, 25, 5), strict=True):
        log.hear(author, lamport)
    assert log.stable_bound() == 5  # Bob holds everything after 5 back while he counts
    log.exclude(participants[2], 2)
    assert log.stable_bound() == 20
