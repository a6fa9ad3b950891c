"""`seal_op` builds our own op without taking its datagram through the receive gate again
(it is on every move's way to the wire): the op it returns must be exactly the op any
receiver decodes from that datagram, and a body a receiver would refuse is still refused."""

from __future__ import annotations

import pytest

from nerts_p2p.game.rules import Rules
from protocol.errors import DropReason, RemoteProtocolError
from protocol.messages import Kind, Op, decode, op_body, seal_op
from tools.mesh import PeerMesh


def _body(op: Op) -> list[object]:
    deps = [list(d) for d in op.lobby_deps] if op.epoch == 0 else list(op.round_deps)
    return op_body(
        op.kind, op.table, op.author, op.seq, op.prev, op.lamport, op.epoch, deps, _thaw(op.payload)
    )


def _thaw(value: object) -> object:
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


def test_a_sealed_op_is_the_op_every_receiver_decodes_for_every_kind_of_a_round() -> None:
    mesh = PeerMesh(players=2, rules=Rules(seats=2), seed=5, spectators=1)
    mesh.run_for(4.0)
    keys = {r.me: r.sync.key for r in mesh.replicas}
    host = mesh.replicas[0].sync
    ops = [op for log in host.logs.values() for op in log]
    kinds = {Kind.OPEN, Kind.ADMIT, Kind.JOIN, Kind.READY, Kind.START, Kind.MIX, Kind.MOVE}
    assert {op.kind for op in ops} >= kinds
    for op in ops:
        sealed = seal_op(keys[op.author], _body(op))
        assert sealed == op
        assert sealed == decode(sealed.datagram(), table=host.table)


def test_a_body_a_receiver_would_refuse_is_not_sealed_into_an_op() -> None:
    mesh = PeerMesh(players=2, rules=Rules(seats=2), seed=5)
    mesh.run_for(3.0)
    host = mesh.replicas[0].sync
    move = next(op for op in host.logs[host.me] if op.kind == Kind.MOVE)
    body = _body(move)
    body[8] = ""  # a move with no text
    with pytest.raises(RemoteProtocolError) as refused:
        seal_op(host.key, body)
    assert refused.value.reason == DropReason.SCHEMA
