"""A peer back from a crash: its replica rebuilt from its store.

The store holds every op this peer authored (each flushed before it was sent), so a
restarted peer knows its own chain to the end and never reuses a seq. Its ops go back into a
fresh replica through the ordinary receive gate, as if a peer had relayed them: they are
delivered as soon as the table's ops they depend on arrive again by anti-entropy. Until all
of them are delivered the node authors nothing (`TableNode.resume_target`).

Its Lamport clock is raised past its own last op and past the store's Lamport lease, so
its next op is stamped later than everything it signed before, heartbeats included. Deal
seeds come back for the rounds it has not revealed yet (it needs them to see its own
face-down cards, and to reveal); a round whose REVEAL is already in the store is not
revealed twice.
"""

from __future__ import annotations

from collections.abc import Callable

from nerts_p2p.net.store import TableStore
from nerts_p2p.table.replica import TableReplica
from protocol.errors import RemoteProtocolError
from protocol.messages import Kind, Op, decode
from protocol.signing import SigningKeyPair

#: Where the stored ops "come from" for the receive gate's per-source rate limit.
STORE_SOURCE = ("store", 0)
#: Stored ops are fed at this spacing of the `now` they are stamped with, back from the
#: real now, so the rate limiter (2000 per second per source) admits all of them.
FEED_SPACING = 0.001


def resume_replica(
    key: SigningKeyPair,
    store: TableStore,
    *,
    randomness: Callable[[int], bytes],
    now: float,
    heartbeat_interval: float = 0.075,
) -> TableReplica:
    header = store.header
    assert header is not None, "a store without its TABLE record cannot be resumed"
    replica = TableReplica.joining(
        key,
        header.table,
        name=header.me,
        role=header.role,
        randomness=randomness,
        heartbeat_interval=heartbeat_interval,
    )
    own: list[Op] = []
    for datagram in store.own_ops:
        try:
            message = decode(datagram, table=header.table)
        except RemoteProtocolError:
            continue  # checksummed, so only a bug could put one here; the gate says so too
        if isinstance(message, Op):
            own.append(message)
    revealed = {op.epoch for op in own if op.kind == Kind.REVEAL}
    for number, secret in store.seeds.items():
        if number not in revealed:
            replica.my_secrets[number] = secret
    # Past our last op and past every heartbeat we may have sent (the store's lease).
    replica.sync.clock.observe(max([store.clock_lease, *(op.lamport for op in own)]))
    count = len(store.own_ops)
    for i, datagram in enumerate(store.own_ops):
        replica.receive(datagram, STORE_SOURCE, now - (count - i) * FEED_SPACING)
    return replica
