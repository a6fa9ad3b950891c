"""Opening a node at a table from a data directory: this machine's key, and the table's store,
resumed after a crash or a kill, or begun.

The command line (`client/netplay.py`) and the window (`client/window/net_open.py`) open
tables through this one path, so a seat is taken back the same way from either, and a fix to
resuming reaches both.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from nerts_p2p.net.node import TableNode
from nerts_p2p.net.resume import resume_replica
from nerts_p2p.net.store import (
    StoreError,
    TableHeader,
    TableStore,
    load_identity,
    save_identity,
)
from nerts_p2p.net.transport import Address, AddressInUseError, open_udp_transport
from nerts_p2p.table.replica import TableReplica
from protocol import admission
from protocol.messages import quoted_name
from protocol.signing import SigningKeyPair, generate_signing_key


def identity(data_dir: Path | None) -> SigningKeyPair:
    """This machine's key: kept in the data dir, so a restarted peer is the same member.
    Without a data dir every run is a new member."""
    if data_dir is None:
        return generate_signing_key()
    seed = load_identity(data_dir)
    if seed is None:
        key = generate_signing_key()
        save_identity(data_dir, key.seed)
        return key
    return SigningKeyPair(seed)


def stored_table(data_dir: Path | None, table: bytes) -> TableStore | None:
    """This data dir's store of `table`, if it has one (ended or not)."""
    if data_dir is None or not table:
        return None
    return TableStore.open(data_dir, table)


def kept_ops(data_dirs: Iterable[Path], table: bytes) -> dict[Path, list[bytes]]:
    """Per data dir (the peers of one process: a host and its bots), the ops of `table` its
    store kept, for a match that had not ended there; read once, for all of them
    (`open_table_node`'s `neighbours`)."""
    kept = {}
    for data_dir in data_dirs:
        store = stored_table(data_dir, table)
        if store is not None and store.header is not None and not store.ended:
            kept[data_dir] = store.own_ops
    return kept


async def open_table_node(
    data_dir: Path | None,
    header: TableHeader,
    interface: str,
    fresh: Callable[[SigningKeyPair], TableReplica],
    *,
    previous: TableStore | None,
    bootstrap: Address | None,
    key: SigningKeyPair | None = None,
    neighbours: Iterable[bytes] = (),
) -> tuple[TableNode, TableStore | None]:
    """A node for `header`'s table: resumed from `previous` (this data dir's store of that
    table) if its match had not ended, else fresh (`fresh(key)` makes the replica) with a
    store begun for it. A store that cannot be written is a `StoreError` in plain words.
    `neighbours`: the table's ops that the other peers of this process kept
    (`resume_replica`)."""
    key = key or identity(data_dir)
    if (
        previous is not None
        and previous.header is not None
        and previous.header.hosting
        and not previous.own_ops
    ):
        # Killed before its OPEN was stored, so before anything was sent: that table never
        # existed for anyone else, and without its OPEN it cannot be resumed.
        previous.end()
    if previous is not None and previous.header is not None and not previous.ended:
        try:
            transport = await open_udp_transport(interface, previous.header.port)
        except AddressInUseError:
            transport = await open_udp_transport(interface)  # they learn the new one
        replica = resume_replica(key, previous, randomness=os.urandom, neighbours=neighbours)
        node = TableNode(
            replica,
            transport,
            bootstrap=bootstrap,
            table_host=previous.header.host,
            store=previous,
            resume_target=len(previous.own_ops),
        )
        return node, previous
    transport = await open_udp_transport(interface, header.port)
    replica = fresh(key)
    store = None
    if data_dir is not None:
        try:
            store = TableStore.open(data_dir, replica.sync.table)
            store.begin(
                TableHeader(
                    replica.sync.table,
                    header.host or replica.me,
                    header.host_address,
                    header.name,
                    replica.name,
                    replica.role,
                    transport.address[1],
                    header.hosting,
                )
            )
        except (OSError, StoreError) as exc:
            transport.close()
            raise StoreError(f"the table's store in {data_dir} cannot be written: {exc}") from exc
    node = TableNode(
        replica, transport, bootstrap=bootstrap, table_host=header.host or None, store=store
    )
    return node, store


def rehosting_refusal(
    replica: TableReplica, table_name: str, *, passphrase_given: bool, give: str, without: str
) -> str | None:
    """Why a table this data dir hosts cannot be hosted (again) as asked, or None. Its signed
    OPEN fixed whether it is private: a private one needs its passphrase, and a passphrase
    for an open one would protect nothing already shown, so it is refused rather than the
    table hosted open in silence. `give` and `without` name the passphrase in the caller's
    words ("give its passphrase", "host it again without one")."""
    private = admission.is_private(replica.sync)
    if private and not passphrase_given:
        return f"table {quoted_name(table_name)} is private: give {give} to host it again"
    if not private and passphrase_given:
        return (
            f"table {quoted_name(table_name)} was opened without a passphrase and stays open: "
            f"host it again without {without}, or host a private table under another name"
        )
    return None
