"""Authenticity by voucher (PROTOCOL.md 4, step 6): an op is authentic when its signature
verifies, or when an authentic op of the same author one seq later names it by `prev`. The
later op's signature covers `prev`, this op's hash, so its author signed for this body too.

So a peer catching up checks one signature per run of an author's ops: a BATCH's ops are
taken highest seq first (`sync_parking.on_batch`), the top of each run is verified, and the
ops below it are vouched for by the op above, held parked until their turn. A catching-up
spectator that took every op's signature on its own spent most of its time in Ed25519.

The price is that a vouched op's own signature was never looked at: a relayer may have
garbled it (the body is genuine) or its author may have signed its successor over a bad
one. Such an op is never relayed alone (`relayable`): its voucher goes first, so that the
receiver holds the voucher when the op arrives and takes it the same way.

Separate from parking because it is the one place where an op is taken without its own
signature, and the one place that knows which ops those are.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .errors import RemoteProtocolError
from .messages import Op
from .signing import verify

if TYPE_CHECKING:
    from .sync import SyncPeer

#: An op's successors authenticated in the BATCH being taken: (author, seq) -> op.
Vouchers = dict[tuple[bytes, int], Op]


def taking_order(op: Op) -> tuple[bytes, bool, int]:
    """The order a BATCH's ops are taken in, and sent in: by author; an author's first op
    first (an OPEN or JOIN carries the key every other op of its author is checked with),
    then the rest highest seq first, so that each is vouched for by the one before."""
    return op.author, op.seq > 1, -op.seq


def authenticate(sync: SyncPeer, op: Op, public_key: bytes, batch: Vouchers | None) -> None:
    """Return if `op` is authentic: vouched for by its author's next op (in this BATCH or
    parked here; every op parked here is authentic), or its own signature verifies. Raises
    `RemoteProtocolError(BAD_SIGNATURE)` otherwise."""
    successor = batch.get((op.author, op.seq + 1)) if batch else None
    if successor is None:
        parked = sync.pending.get(op.author)
        successor = parked.get(op.seq + 1) if parked else None
    if successor is not None and successor.prev == op.hash:
        sync._vouched[op.hash] = successor
        return
    verify(public_key, op.body, op.signature)


def relayable(sync: SyncPeer, ops: Iterable[Op]) -> list[Op]:
    """`ops` as they may be relayed: each op taken on a voucher whose own signature does not
    verify comes after its voucher (and that voucher's, if it was vouched for too), so any
    receiver can take it. An own signature is checked here once, when first relayed; most
    vouched ops are never relayed (a spectator's), and honest ones verify."""
    if not sync._vouched:
        return list(ops)
    out: list[Op] = []
    sent: set[bytes] = set()
    for op in ops:
        chain = [op]
        while (voucher := sync._vouched.get(chain[-1].hash)) is not None:
            top = chain[-1].hash
            if top not in sync._garbled:
                if _own_signature_holds(sync, chain[-1]):
                    del sync._vouched[top]  # an op like any other from now on
                    break
                sync._garbled.add(top)  # checked once: it stays vouched for
            chain.append(voucher)
        for link in reversed(chain):
            if link.hash not in sent:
                sent.add(link.hash)
                out.append(link)
    return out


def _own_signature_holds(sync: SyncPeer, op: Op) -> bool:
    try:
        verify(sync.keys[op.author], op.body, op.signature)
    except RemoteProtocolError:
        return False
    return True
