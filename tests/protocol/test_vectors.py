"""The committed test vectors (`protocol/vectors/*.json`) against the reference implementation.

Each vector is judged by a fresh `SyncPeer` of its table, with a key of its own, that has
received the vector's context: a valid op is delivered, a valid sync message is acted on,
an invalid datagram is dropped and counted under exactly its reason.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import protocol
from nerts_p2p.table.gate import TableGate
from protocol.errors import DropReason, RemoteProtocolError
from protocol.messages import (
    Batch,
    Evidence,
    Heartbeat,
    Kind,
    Op,
    Request,
    decode,
    decode_heartbeat,
)
from protocol.signing import SigningKeyPair, key_id, verify
from protocol.sync import AuthorExpelled, OpDelivered, OpRejected, SyncPeer
from tools.gen_vectors import ADMISSION_FILE, FILES, build, message_json

VECTORS_DIR = Path(protocol.__file__).parent / "vectors"
OBSERVER = SigningKeyPair(bytes(range(32)))  # a peer that is no member of the table


def _load(name: str) -> list[dict[str, Any]]:
    vectors: list[dict[str, Any]] = json.loads((VECTORS_DIR / name).read_text())
    return vectors


ALL = [vector for name in FILES for vector in _load(name)]
VALID = [v for v in ALL if v["valid"]]
INVALID = [v for v in ALL if not v["valid"]]


def _by_name(vectors: list[dict[str, Any]]) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("vector", vectors, ids=[v["name"] for v in vectors])


def _peer_after_context(vector: dict[str, Any]) -> SyncPeer:
    # A Nerts peer: the game's checks run at its gate too (nerts_p2p/table/gate.py).
    peer = TableGate(SyncPeer(OBSERVER, bytes.fromhex(vector["table"]))).install().sync
    context = [bytes.fromhex(c) for c in vector["context"]]
    for datagram in context:
        peer.receive(datagram, "context", 0.0)
    # The context is a valid history: every op of it delivered, nothing dropped.
    assert peer.counters.total == 0, peer.counters
    delivered = [e.op.datagram() for e in peer.events() if isinstance(e, OpDelivered)]
    assert delivered == context
    peer.outgoing()
    return peer


def _receive(peer: SyncPeer, vector: dict[str, Any]) -> tuple[dict[str, int], list[Any], list[Any]]:
    """Receive the vector's datagram; what the counters gained, the events, the outbox."""
    before = peer.counters.as_dict()
    peer.receive(bytes.fromhex(vector["hex"]), "sender", 1.0)
    after = peer.counters.as_dict()
    gained = {reason: after[reason] - before[reason] for reason in after}
    return {r: n for r, n in gained.items() if n}, peer.events(), peer.outgoing()


def _replies(outbox: list[Any], table: bytes) -> list[Any]:
    assert all(destination == "sender" for destination, _ in outbox)
    return [decode(datagram, table=table) for _, datagram in outbox]


def test_the_files_cover_every_kind_and_every_gate_step() -> None:
    names = [v["name"] for v in ALL]
    assert len(names) == len(set(names))
    valid_kinds = {v["decoded"]["kind"] for v in VALID}
    wanted = {Kind.OPEN, Kind.JOIN, Kind.LEAVE, Kind.READY, Kind.START, Kind.MOVE, Kind.REVEAL}
    wanted |= {Kind.MIX, Kind.DEPART}
    wanted |= {Kind.HEARTBEAT, Kind.REQUEST, Kind.BATCH, Kind.EVIDENCE, Kind.ADMIT}
    assert {k.name for k in wanted} <= valid_kinds
    roles = {v["decoded"]["payload"][2] for v in VALID if v["decoded"]["kind"] == "JOIN"}
    assert roles == {0, 1}  # a player and a spectator
    reasons = {v["reason"] for v in INVALID}
    # Rate limits depend on a source's history, not on one datagram; a byte-identical
    # duplicate is counted as `duplicates`, not dropped as misconduct. A wrong ANSWER
    # (`bad_proof`) needs the host's outstanding challenge: `admission.json` has it.
    assert reasons == {r.value for r in DropReason} - {"rate_limited", "replayed", "bad_proof"}


def test_the_generator_reproduces_the_committed_files() -> None:
    regenerated = build()
    assert sorted(regenerated) == sorted([*FILES, ADMISSION_FILE])
    for name, text in regenerated.items():
        assert text == (VECTORS_DIR / name).read_text(), f"stale: regenerate {name}"
    assert build() == regenerated


@_by_name(ALL)
def test_decoded_form_matches_decode(vector: dict[str, Any]) -> None:
    datagram = bytes.fromhex(vector["hex"])
    decoded = vector["decoded"]
    if decoded is None:
        with pytest.raises(RemoteProtocolError) as info:
            decode(datagram, table=bytes.fromhex(vector["table"]))
        assert info.value.reason == vector["reason"]
        return
    message = decode(datagram, table=bytes.fromhex(decoded["table"]))
    assert message_json(message) == decoded
    public_key = bytes.fromhex(vector["public_key"])
    signer_id = message.author if isinstance(message, Op) else message.sender
    if vector["valid"]:
        assert key_id(public_key) == signer_id
        verify(public_key, message.body, message.signature)
    elif vector["reason"] == DropReason.BAD_SIGNATURE and isinstance(message, Op):
        # Either the signature is broken, or it is a good one by a key that is not the author's.
        try:
            verify(public_key, message.body, message.signature)
        except RemoteProtocolError:
            pass
        else:
            assert key_id(public_key) != signer_id
    if isinstance(message, Op):
        assert decoded["kind"] == message.kind.name
        assert (decoded["seq"], decoded["lamport"], decoded["epoch"]) == (
            message.seq,
            message.lamport,
            message.epoch,
        )
        assert ("lobby_deps" in decoded) == (message.epoch == 0)
        assert ("round_deps" in decoded) == (message.epoch != 0)


@_by_name(VALID)
def test_valid_vector_is_taken(vector: dict[str, Any]) -> None:
    peer = _peer_after_context(vector)
    gained, events, outbox = _receive(peer, vector)
    assert gained == {}
    decoded = vector["decoded"]
    table = bytes.fromhex(vector["table"])
    message = decode(bytes.fromhex(vector["hex"]), table=table)
    kind = decoded["kind"]
    if isinstance(message, Op):
        assert [e.op.body for e in events if isinstance(e, OpDelivered)] == [message.body]
        assert peer.delivered(message.author) == message.seq
        _has_its_effect(peer, message, vector.get("effect"))
    elif kind == Kind.BATCH.name:
        assert isinstance(message, Batch)
        delivered = [e.op.body for e in events if isinstance(e, OpDelivered)]
        # Every op of the batch, in whatever order the receiver took them in (4, step 6).
        assert sorted(delivered) == sorted(body for body, _ in message.ops)
    elif kind == Kind.REQUEST.name:
        assert isinstance(message, Request)
        wanted = [
            op.body
            for author, first, last in message.ranges
            for op in peer.logs.get(author, [])[first - 1 : last]
        ]
        assert wanted
        served = [
            body
            for reply in _replies(outbox, table)
            if isinstance(reply, Batch)
            for body, _ in reply.ops
        ]
        # Every op asked for, each range in seq order (ranges share the answer fairly).
        assert sorted(served) == sorted(wanted)
    elif kind == Kind.EVIDENCE.name:
        assert isinstance(message, Evidence)
        # Each relayed heartbeat is its author's promise, and raises its author's horizon.
        for body, signature in message.heartbeats:
            hb = decode_heartbeat(body, signature, table=table)
            assert peer.promises.latest[hb.sender].body == body
            for epoch in peer.epochs.values():
                if hb.sender in epoch.horizon:
                    assert epoch.horizon[hb.sender] == hb.lamport
    else:
        assert kind == Kind.HEARTBEAT.name
        assert isinstance(message, Heartbeat)
        assert peer.peers[message.sender] == "sender"  # verified, so its address is noted
        claimed = [(bytes.fromhex(author), n) for author, n in decoded["vector"]]
        missing = [(a, peer.delivered(a) + 1, n) for a, n in claimed if n > peer.delivered(a)]
        assert missing  # the context lacks what the heartbeat says its sender holds
        requests = [r for r in _replies(outbox, table) if isinstance(r, Request)]
        assert [r.ranges for r in requests] == [tuple(missing)]


def _has_its_effect(peer: SyncPeer, op: Op, effect: str | None) -> None:
    """What `start_race.json`'s valid ops do once delivered (PROTOCOL.md 13.1, 13.3)."""
    if effect == "begins_round":
        assert peer.epochs[op.epoch].start.body == op.body
    elif effect == "begins_no_round":
        assert op.epoch not in peer.epochs  # a former starter's START begins nothing
    elif effect == "counts_for_nothing":
        assert op.payload[0] not in peer.epochs[op.epoch].departed
    else:
        assert effect is None, effect


@_by_name(INVALID)
def test_invalid_vector_is_dropped_for_its_reason(vector: dict[str, Any]) -> None:
    peer = _peer_after_context(vector)
    vector_before = peer.vector()
    gained, events, _ = _receive(peer, vector)
    assert gained == {vector["reason"]: 1}
    assert not [e for e in events if isinstance(e, OpDelivered)]
    assert peer.vector() == vector_before
    for event in events:
        if isinstance(event, OpRejected):
            assert event.reason == vector["reason"]
        else:
            assert isinstance(event, AuthorExpelled)
            assert event.reason == vector["reason"]
            if event.reason == DropReason.EQUIVOCATION:
                assert event.evidence[1].body.hex() in vector["hex"]
            else:  # the heartbeat is the vector; the op that breaks its promise was held
                assert vector["reason"] == DropReason.BROKEN_PROMISE
                assert event.evidence[0].body.hex() in vector["hex"]
    if vector["reason"] in (DropReason.EQUIVOCATION, DropReason.BROKEN_PROMISE):
        assert [type(e) for e in events] == [AuthorExpelled]
