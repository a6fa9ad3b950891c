"""A joiner at the table's door, as the shells see it through `TableReplica`: it knocks again
by itself when its HELLO is lost, shows no refusal while it may still get in, joins at once
when its admission is already here, and a new table's first heartbeat can be compared.
(Found by `tools.mutate`, seed 801, `nerts_p2p/table/replica.py` and `lobby.py`.)"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable

import pytest

from nerts_p2p.game.errors import NertsError
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import TableReplica
from protocol.admission import HELLO_RETRY
from protocol.messages import PLAYER, Heartbeat, Hello, Kind, decode
from protocol.signing import SigningKeyPair
from protocol.sync import BROADCAST


def _host() -> TableReplica:
    return TableReplica.open_table(
        SigningKeyPair(hashlib.sha256(b"door/host").digest()),
        name="host",
        rules=Rules(seats=2),
        spectators=True,
        randomness=lambda n: bytes(n),
    )


def _joiner(host: TableReplica) -> TableReplica:
    return TableReplica.joining(
        SigningKeyPair(hashlib.sha256(b"door/joiner").digest()),
        host.sync.table,
        name="joiner",
        role=PLAYER,
        randomness=lambda n: bytes(n),
    )


def _exchange(host: TableReplica, joiner: TableReplica, now: float, *, lose_hellos: bool) -> None:
    """What each says reaches the other (the joiner's HELLOs lost if `lose_hellos`)."""
    for _, datagram in joiner.outgoing():
        if lose_hellos and isinstance(decode(datagram, table=host.sync.table), Hello):
            continue
        host.receive(datagram, "joiner", now)
    for destination, datagram in host.outgoing():
        if destination in ("joiner", BROADCAST):
            joiner.receive(datagram, "host", now)


def _hellos(joiner: TableReplica) -> int:
    return sum(
        isinstance(decode(datagram, table=joiner.sync.table), Hello)
        for _, datagram in joiner.outgoing()
    )


def _knock_until_in(host: TableReplica, joiner: TableReplica, now: float) -> None:
    """Both tick and talk, nothing lost, a knock's retry apart, until the joiner is in."""
    for _ in range(5):
        now += HELLO_RETRY + 0.01
        joiner.tick(now)
        host.tick(now)
        _exchange(host, joiner, now, lose_hellos=False)
    assert joiner.is_member


def _at_the_door(host: TableReplica, joiner: TableReplica, source: Hashable = "host") -> None:
    joiner.request_table(host.me, source, 0.0)
    _exchange(host, joiner, 0.0, lose_hellos=False)
    assert joiner.sync.open_op is not None


def test_a_joiner_whose_hello_was_lost_knocks_again_by_itself_and_gets_in() -> None:
    host = _host()
    joiner = _joiner(host)
    _at_the_door(host, joiner)
    joiner.join()
    _exchange(host, joiner, 0.0, lose_hellos=True)
    assert not joiner.is_member
    joiner.tick(HELLO_RETRY / 2)
    assert _hellos(joiner) == 0, "too soon to knock again"
    joiner.tick(HELLO_RETRY + 0.01)
    assert _hellos(joiner) == 1
    _knock_until_in(host, joiner, HELLO_RETRY + 0.02)


def test_a_joiner_shows_no_refusal_while_it_may_still_get_in() -> None:
    host = _host()
    joiner = _joiner(host)
    _at_the_door(host, joiner)
    assert joiner.admission_refused is None
    joiner.join()
    assert joiner.admission_refused is None, "knocking is not being refused"
    _knock_until_in(host, joiner, 0.0)
    assert joiner.admission_refused is None


def test_a_joiner_whose_admission_is_already_here_joins_at_once() -> None:
    # It knocked, the host let it in, and it restarted before its JOIN went out: the host's
    # ADMIT comes back with the table's ops, so its JOIN is signed the moment it asks.
    host = _host()
    first = _joiner(host)
    _at_the_door(host, first)
    first.join()
    for _, datagram in first.outgoing():
        host.receive(datagram, "joiner", 0.1)
    host.outgoing()
    assert host.sync.admits, "the host admitted the joiner's key"
    again = _joiner(host)
    _at_the_door(host, again)
    host.tick(0.2)  # its heartbeat, then what the joiner lacks (the ADMIT) is pushed to it
    again.tick(0.2)
    for _ in range(3):
        _exchange(host, again, 0.3, lose_hellos=False)
    assert again.me in again.sync.admits
    joined = again.join()
    assert joined is not None
    assert joined.kind == Kind.JOIN


def test_a_joiner_admitted_while_it_may_not_sign_joins_at_the_tick_that_frees_it() -> None:
    # It restarted without its log (a quiet restart: it may sign nothing for a while,
    # PROTOCOL.md 14) and its ADMIT is here. The JOIN is signed by the tick that ends the
    # wait, not whenever some datagram happens to come next. (Seed 19: with the tick's
    # look at the admission deleted, only a later datagram brought the JOIN.)
    host = _host()
    joiner = _joiner(host)
    joiner.sync.quarantine(hold=1.0)
    _at_the_door(host, joiner)
    joiner.join()
    host.tick(0.1)
    for _ in range(3):
        _exchange(host, joiner, 0.1, lose_hellos=False)
    assert joiner.me in joiner.sync.admits, "the host's ADMIT is here"
    assert not joiner.can_author
    assert joiner.sync.delivered(joiner.me) == 0, "no JOIN while it may not sign"
    now = 0.1
    while not joiner.can_author:
        now += 0.05
        assert now < 3.0, "the quiet restart never ended"
        joiner.tick(now)  # and nothing reaches it meanwhile
    assert [op.kind for op in joiner.sync.logs.get(joiner.me, [])] == [Kind.JOIN]


def test_a_new_tables_first_heartbeat_carries_its_state_hash() -> None:
    # A table nobody has joined yet can already be compared: its first heartbeat says what
    # its host folded, like every later one.
    host = _host()
    host.outgoing()
    host.tick(1.0)
    beats = [
        message
        for _, datagram in host.outgoing()
        if isinstance(message := decode(datagram, table=host.sync.table), Heartbeat)
    ]
    assert beats
    assert beats[0].state_hash


def test_a_joiner_that_has_not_heard_the_table_yet_is_told_so_and_knocks_nowhere() -> None:
    # Before the OPEN there is no host to knock at: asking to join says why in words and
    # sends nothing (seed 1201: without the check it knocked at nobody and waited).
    host = _host()
    joiner = _joiner(host)
    with pytest.raises(NertsError, match="the table's OPEN has not arrived yet"):
        joiner.join()
    assert joiner.outgoing() == []
    assert joiner.sync.admission.wanted is None
