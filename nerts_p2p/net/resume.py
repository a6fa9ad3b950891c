"""A peer back from a crash: its replica rebuilt from its store.

The store holds every op this peer authored (each flushed before it was sent), so a
restarted peer knows its own chain to the end and never reuses a seq. Its ops go back into a
fresh replica through the receive gate (`TableReplica.restore`): they are delivered as soon
as the table's ops they depend on arrive again by anti-entropy. Until then, and until it
holds what the table's first heartbeats after the restart name, the replica authors nothing
and sends no heartbeat (PROTOCOL.md 14): its last heartbeats before the crash promised what
its next op would cover.

Its Lamport clock is raised past its own last op and past the store's Lamport lease, so
its next op is stamped later than everything it signed before, heartbeats included. Deal
seeds come back for the rounds it has not revealed yet (it needs them to see its own
face-down cards, and to reveal); a round whose REVEAL is already in the store is not
revealed twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from nerts_p2p.net.store import StoreError, TableStore
from nerts_p2p.table.replica import TableReplica
from protocol.errors import RemoteProtocolError
from protocol.messages import Kind, Op, decode, quoted_name
from protocol.signing import SigningKeyPair


def resume_replica(
    key: SigningKeyPair,
    store: TableStore,
    *,
    randomness: Callable[[int], bytes],
    heartbeat_interval: float = 0.075,
    neighbours: Iterable[bytes] = (),
) -> TableReplica:
    """`neighbours`: op datagrams of the same table kept by the other peers of this process
    (a host's bots, in stores of their own), loaded beside ours through the same gate. A
    restarted peer waits for the ops its own depend on (PROTOCOL.md 14); when every member
    of the table restarts in one process, only they hold those ops, and each waiting for
    another's, quiet, none would ever come."""
    header = store.header
    assert header is not None, "a store without its TABLE record cannot be resumed"
    own: list[Op] = []
    for datagram in store.own_ops:
        try:
            message = decode(datagram, table=header.table)
        except RemoteProtocolError:
            continue  # checksummed, so only a bug could put one here; the gate says so too
        if isinstance(message, Op):
            own.append(message)
    strangers = {op.author for op in own} - {key.key_id}
    if strangers:
        # Our ops signed by another key: the identity file was replaced (a copy of another
        # player's) or removed (a new key made). Resumed, this peer would wait for ever for
        # a chain that is not its own, or play under someone else's name.
        raise StoreError(
            f"the store of table {quoted_name(header.name)} holds ops signed by another key "
            "than this data dir's identity (was its identity file replaced or removed?): put that "
            "identity back to take the seat again, or use another --data-dir"
        )
    replica = TableReplica.restore(
        key,
        header.table,
        [*store.own_ops, *neighbours],
        name=header.me,
        role=header.role,
        randomness=randomness,
        heartbeat_interval=heartbeat_interval,
        # Past our last op and past every heartbeat we may have sent (the store's lease).
        clock=max([store.clock_lease, *(op.lamport for op in own)]),
    )
    revealed = {op.epoch for op in own if op.kind == Kind.REVEAL}
    for number, secret in store.seeds.items():
        if number not in revealed:
            replica.my_secrets.setdefault(number, secret)
    return replica
