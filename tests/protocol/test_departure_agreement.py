"""Departure by agreement (PROTOCOL.md 13), on a round's order built by hand: which set
departs when two candidates are as large, and what a departed voter's later votes count
for. (Found by `tools.mutate`, seed 604, `protocol/departure.py`.)"""

from __future__ import annotations

from protocol.departure import agreed_set, resolve
from protocol.messages import Kind, Op, op_body, seal_op
from protocol.order import EpochLog
from protocol.signing import SigningKeyPair
from tools.gen_vectors import TABLE


def test_of_two_candidates_as_large_the_first_found_in_key_id_order_departs() -> None:
    # a, b and c have voted d and e out; c, d and e have voted a and b out (c voted
    # everyone out). Both {d, e} and {a, b} leave three stayers, a quorum of five: the
    # first candidate found, walking the anchors in key id order, is the one agreed: a's
    # stayers are a, b and c, so d and e depart.
    a, b, c, d, e = (bytes([i]) * 8 for i in range(1, 6))
    votes = {
        a: {d: 1, e: 1},
        b: {d: 1, e: 1},
        c: {a: 1, b: 1, d: 1, e: 1},
        d: {a: 1, b: 1},
        e: {a: 1, b: 1},
    }
    assert agreed_set([a, b, c, d, e], [a, b, c, d, e], votes) == {d, e}


KEYS = [SigningKeyPair(bytes([0x70 + i]) * 32) for i in range(5)]


def _op(key: SigningKeyPair, kind: Kind, seq: int, lamport: int, payload: object) -> Op:
    return seal_op(
        key, op_body(kind, TABLE, key.key_id, seq, bytes(16), lamport, 1, [0] * 5, payload)
    )


def test_a_departed_voters_later_votes_do_not_count() -> None:
    # Five play; a, b, c and d vote e out (e's op 1 named): e departs. e then votes a out,
    # naming 9 of a's ops: e has departed, so that vote counts for nothing. b, c and d vote
    # a out naming 5 of a's ops: a departs with its ops up to 5 counting, not 9.
    a, b, c, d, e = KEYS
    participants = tuple(k.key_id for k in KEYS)
    start = _op(a, Kind.START, 1, 1, [list(participants), [0, 1, 2, 3, 4], []])
    log = EpochLog(1, participants, {k.key_id: k.public_key for k in KEYS}, b"mix", start)
    seqs = dict.fromkeys(participants, 1)

    def vote(voter: SigningKeyPair, target: SigningKeyPair, held: int, lamport: int) -> None:
        seqs[voter.key_id] += 1
        log.insert(_op(voter, Kind.DEPART, seqs[voter.key_id], lamport, [target.key_id, held]))

    for lamport, voter in enumerate((a, b, c, d), start=10):
        vote(voter, e, 1, lamport)
    assert {p: cut for p, (cut, _) in resolve(log).items()} == {e.key_id: 1}
    vote(e, a, 9, 20)
    for lamport, voter in enumerate((b, c, d), start=21):
        vote(voter, a, 5, lamport)
    assert {p: cut for p, (cut, _) in resolve(log).items()} == {e.key_id: 1, a.key_id: 5}


def test_a_departure_whose_votes_name_none_of_its_ops_keeps_none_of_them() -> None:
    # Every vote against e names 0 of its ops (a vote names what its own deps hold of its
    # target, and nothing makes a round op's deps cover its START's): e departs keeping
    # the highest seq any vote named, none, not its first (PROTOCOL.md 13).
    a, b, c, d, e = KEYS
    participants = tuple(k.key_id for k in KEYS)
    start = _op(a, Kind.START, 1, 1, [list(participants), [0, 1, 2, 3, 4], []])
    log = EpochLog(1, participants, {k.key_id: k.public_key for k in KEYS}, b"mix", start)
    for lamport, voter in enumerate((a, b, c, d), start=10):
        log.insert(_op(voter, Kind.DEPART, 2, lamport, [e.key_id, 0]))
    assert {p: cut for p, (cut, _) in resolve(log).items()} == {e.key_id: 0}
