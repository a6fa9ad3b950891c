from __future__ import annotations

import pytest

from protocol import (
    DropCounters,
    DropReason,
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
)


def test_counts_by_reason_and_in_total() -> None:
    counters = DropCounters()
    counters.count(DropReason.BAD_SIGNATURE)
    counters.count(DropReason.BAD_SIGNATURE)
    counters.count(DropReason.OVERSIZE, 5)
    counters.count_error(RemoteProtocolError(DropReason.REPLAYED, "seen it"))
    assert counters[DropReason.BAD_SIGNATURE] == 2
    assert counters[DropReason.OVERSIZE] == 5
    assert counters[DropReason.REPLAYED] == 1
    assert counters[DropReason.SCHEMA] == 0
    assert counters.total == 8


def test_as_dict_lists_every_reason_in_gate_order() -> None:
    counters = DropCounters()
    counters.count(DropReason.SPECTATOR_OP)
    as_dict = counters.as_dict()
    assert list(as_dict) == [reason.value for reason in DropReason]
    assert as_dict["spectator_op"] == 1
    assert sum(as_dict.values()) == 1
    assert list(as_dict)[:3] == ["oversize", "rate_limited", "malformed"]


def test_counts_only_go_up() -> None:
    with pytest.raises(ValueError, match="up"):
        DropCounters().count(DropReason.SCHEMA, -1)


def test_repr_shows_nonzero_counts() -> None:
    counters = DropCounters()
    counters.count(DropReason.MALFORMED, 3)
    assert repr(counters) == "DropCounters(malformed=3)"


def test_protocol_errors_say_whose_fault_and_why() -> None:
    remote = RemoteProtocolError(DropReason.SCHEMA, "body[0]: unknown kind 7")
    assert isinstance(remote, ProtocolError)
    assert not isinstance(remote, LocalProtocolError)
    assert remote.reason is DropReason.SCHEMA
    assert remote.message == "body[0]: unknown kind 7"
    assert str(remote) == "schema: body[0]: unknown kind 7"
    local = LocalProtocolError(DropReason.OVERSIZE, "too big")
    assert isinstance(local, ProtocolError)
    assert not isinstance(local, RemoteProtocolError)


def test_protocol_error_itself_cannot_be_raised() -> None:
    with pytest.raises(TypeError, match="LocalProtocolError or RemoteProtocolError"):
        ProtocolError(DropReason.SCHEMA, "whose fault?")


def test_reasons_are_distinct_plain_strings() -> None:
    values = [reason.value for reason in DropReason]
    assert len(set(values)) == len(values) == 16
    assert str(DropReason.BAD_SIGNATURE) == "bad_signature"
