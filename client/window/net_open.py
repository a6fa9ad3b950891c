"""Opening a table over the real node: hosting one, joining an announced one, and the
practice table (a table on 127.0.0.1 only, not announced, its bots in their own process).

Network tables keep what a peer must not lose in the user's data directory, as the CLI's
`host` and `join` do (`nerts_p2p.net.store`): this machine's key (`identity`) and, per
table, every op we authored. A window that crashed (or was killed) and is opened again at
the same table takes its seat back: joining the same table (or hosting again under the same
table name) resumes from that store (`nerts_p2p.net.resume`). A window that left the table
(its Leave, or closing it) sent its LEAVE: that table is over for it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import trio

from nerts_p2p.game.bots import CASUAL, BotLevel
from nerts_p2p.game.rules import Rules
from nerts_p2p.net.discovery import ALL_INTERFACES, TableAd, TableAnnouncer
from nerts_p2p.net.node import TableNode
from nerts_p2p.net.resume import resume_replica
from nerts_p2p.net.store import (
    StoreError,
    TableHeader,
    TableStore,
    data_dir_lock,
    load_identity,
    resumable_tables,
    save_identity,
)
from nerts_p2p.net.transport import AddressInUseError, open_udp_transport
from nerts_p2p.table.replica import TableReplica
from protocol import admission
from protocol.envelope import PROTOCOL_VERSION
from protocol.messages import PLAYER, SPECTATOR
from protocol.signing import SigningKeyPair, generate_signing_key

from .bot_house import seeded_bytes
from .netsession import HOST_ANSWER_TIMEOUT, NetTableError, NetworkTable

#: Where practice tables play: this machine only.
LOOPBACK = "127.0.0.1"


def _identity(data_dir: Path | None) -> SigningKeyPair:
    """This machine's key: kept in the data dir, so a reopened window is the same member."""
    if data_dir is None:
        return generate_signing_key()
    seed = load_identity(data_dir)
    if seed is None:
        key = generate_signing_key()
        save_identity(data_dir, key.seed)
        return key
    return SigningKeyPair(seed)


#: Data dirs this process holds (until it ends: the lock goes with the process).
_HELD: dict[Path, contextlib.ExitStack] = {}


def _lock(data_dir: Path | None) -> None:
    """Hold the data dir while this window runs: two processes with one key would sign
    conflicting ops (the table punishes that as equivocation). One window plays its tables
    one after the other from it, so it takes the lock once."""
    if data_dir is None or data_dir in _HELD:
        return
    stack = contextlib.ExitStack()
    try:
        stack.enter_context(data_dir_lock(data_dir))
    except StoreError as exc:
        raise NetTableError(
            f"another nerts-p2p window or command is playing from {data_dir}: "
            "close it first (each keeps its own key)"
        ) from exc
    except OSError as exc:
        raise NetTableError(f"the data directory {data_dir} cannot be used: {exc}") from exc
    _HELD[data_dir] = stack


async def _open_node(
    data_dir: Path | None,
    header: TableHeader,
    interface: str,
    fresh: Callable[[SigningKeyPair], TableReplica],
    *,
    previous: TableStore | None,
    bootstrap: tuple[str, int] | None,
    key: SigningKeyPair | None = None,
) -> tuple[TableNode, TableStore | None]:
    """A node for `header`'s table: resumed from `previous` (this data dir's store of a
    table whose match had not ended), else fresh (`fresh(key)` makes the replica)."""
    key = key or _identity(data_dir)
    if previous is not None and previous.header is not None:
        try:
            transport = await open_udp_transport(interface, previous.header.port)
        except AddressInUseError:
            transport = await open_udp_transport(interface)  # they learn the new one
        replica = resume_replica(key, previous, randomness=os.urandom)
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
                replace(
                    header,
                    table=replica.sync.table,
                    host=header.host or replica.me,
                    me=replica.name,
                    port=transport.address[1],
                )
            )
        except (OSError, StoreError) as exc:
            transport.close()
            raise NetTableError(f"the table's store cannot be written: {exc}") from exc
    node = TableNode(
        replica, transport, bootstrap=bootstrap, table_host=header.host or None, store=store
    )
    return node, store


def _earlier_hosted(data_dir: Path | None, table_name: str) -> TableStore | None:
    """A table this data dir hosted under `table_name` whose match had not ended."""
    if data_dir is None:
        return None
    for store in resumable_tables(data_dir):
        if store.header is not None and store.header.hosting and store.header.name == table_name:
            if not store.own_ops:
                # Closed before its OPEN was stored, so before anything was sent: that
                # table never existed for anyone else, and cannot be resumed.
                store.end()
                continue
            return store
    return None


def taking_back(data_dir: Path | None, ad: TableAd) -> bool:
    """Whether this data dir was at the announced table and can take its seat back."""
    try:
        return _earlier_joined(data_dir, ad.table_id) is not None
    except NetTableError:
        return False


def _earlier_joined(data_dir: Path | None, table: bytes) -> TableStore | None:
    if data_dir is None:
        return None
    try:
        store = TableStore.open(data_dir, table)
    except StoreError as exc:
        raise NetTableError(str(exc)) from exc
    return store if store.header is not None and not store.ended else None


async def host_table(
    interface: str,
    *,
    table_name: str,
    player_name: str,
    rules: Rules,
    spectators: bool,
    port: int = 0,
    bots: int = 0,
    bot_level: BotLevel = CASUAL,
    passphrase: str = "",
    data_dir: Path | None = None,
) -> NetworkTable:
    """A new table on `interface`, announced once served (`serve`). A passphrase makes it
    private: only who knows it is let in (PROTOCOL.md 17). With a data dir, a table this
    window hosted under the same name and did not finish is taken up again."""
    if not table_name.strip():
        raise NetTableError("the table needs a name")
    if 1 + bots > rules.players:
        raise NetTableError(
            f"you and {bots} bots need {1 + bots} seats; the table has {rules.players}"
        )
    _lock(data_dir)
    previous = _earlier_hosted(data_dir, table_name)
    header = TableHeader(b"", b"", ("", 0), table_name, player_name, PLAYER, port, True)

    def fresh(key: SigningKeyPair) -> TableReplica:
        return TableReplica.open_table(
            key,
            name=player_name,
            rules=rules,
            spectators=spectators,
            randomness=os.urandom,
            private=bool(passphrase),
        )

    node, store = await _open_node(
        data_dir, header, interface, fresh, previous=previous, bootstrap=None
    )
    replica = node.replica
    node.table_host = None
    private = admission.is_private(replica.sync)
    if private and not passphrase:
        node.transport.close()
        raise NetTableError(f"table {table_name!r} is private: give its passphrase to host it")
    if not private and passphrase:
        # The signed OPEN fixed the table as open: a passphrase now would protect nothing.
        node.transport.close()
        raise NetTableError(
            f"table {table_name!r} was opened without a passphrase and stays open: host it "
            "again without one, or host a private table under another name"
        )
    key = await _table_key(passphrase, replica) if private else None
    table_rules = replica.rules or rules
    address = node.address
    if interface == ALL_INTERFACES:
        address = (ALL_INTERFACES, address[1])
    ad = TableAd(
        name=table_name,
        address=address,
        protocol_version=PROTOCOL_VERSION,
        table_id=replica.sync.table,
        host_fingerprint=replica.me,
        seats_taken=1,
        seats_max=table_rules.players,
        phase="lobby",
        passphrase=private,
        spectators=admission.spectators_welcome(replica.sync),
    )
    table = NetworkTable(
        node,
        table_name=table_name,
        interface=interface,
        hosting=True,
        announcer=TableAnnouncer(interface, ad),
        bot_level=bot_level,
        store=store,
        data_dir=data_dir,
    )
    table.initial_bots = 0 if previous is not None else bots
    table.table_key = key
    return table


async def loopback_practice(
    seats: int,
    level: BotLevel,
    *,
    name: str,
    seed: int | None = None,
    rules: Rules | None = None,
    bot_pace: float = 1.0,
) -> NetworkTable:
    """You against `seats - 1` bots at a table on 127.0.0.1, not announced: your node in
    this process, the bots' nodes in their own (`bot_house`). Nothing is kept (no key, no
    store): a practice table ends with the window. The same seed deals the same game."""
    rules = rules or Rules(seats=seats)
    if rules.partnerships:
        raise NetTableError("practice tables seat one player per seat")
    label = f"seed-{seed}" if seed is not None else None
    draw = seeded_bytes(f"{label}/you") if label is not None else os.urandom
    key = SigningKeyPair(draw(32))
    transport = await open_udp_transport(LOOPBACK)
    replica = TableReplica.open_table(key, name=name, rules=rules, spectators=True, randomness=draw)
    node = TableNode(replica, transport)
    table = NetworkTable(
        node,
        table_name="practice",
        interface=LOOPBACK,
        hosting=True,
        bot_level=level,
        practice=True,
        seed=label,
        bot_pace=bot_pace,
    )
    table.initial_bots = rules.seats - 1
    return table


async def _table_key(passphrase: str, replica: TableReplica) -> bytes:
    """The table key from its passphrase (argon2id: a fraction of a second of CPU, in a
    thread, so the frames go on), given to the replica."""
    key = await trio.to_thread.run_sync(admission.table_key, passphrase, replica.sync.table)
    replica.use_table_key(key)
    return key


def why_not_join(ad: TableAd, role: int, *, resuming: bool = False) -> str | None:
    """Why this window cannot sit at (or watch) the announced table, or None. A seat we
    are taking back counts as ours, however full the table looks."""
    if ad.protocol_version != PROTOCOL_VERSION:
        return (
            f"protocol version mismatch: table {ad.name!r} speaks version "
            f"{ad.protocol_version}, this program speaks version {PROTOCOL_VERSION}"
        )
    if role == PLAYER and ad.full and not resuming:
        return f"table {ad.name!r} is full ({ad.seats_taken} of {ad.seats_max} seats taken)"
    if role == SPECTATOR and not ad.spectators and not resuming:
        return f"table {ad.name!r} does not welcome spectators"
    if ad.address[0] == ALL_INTERFACES:
        return f"table {ad.name!r} announced no usable address"
    return None


async def join_table(
    interface: str,
    ad: TableAd,
    *,
    player_name: str,
    role: int,
    host_timeout: float = HOST_ANSWER_TIMEOUT,
    passphrase: str = "",
    data_dir: Path | None = None,
) -> NetworkTable:
    """Sit at (PLAYER) or watch (SPECTATOR) an announced table; served with `serve`. A
    private table needs its passphrase (a wrong one is said in the lobby). With a data dir,
    a table this window was at and did not finish is taken up again, in its old role."""
    _lock(data_dir)
    previous = _earlier_joined(data_dir, ad.table_id)
    if previous is not None and previous.header is not None:
        role = previous.header.role
    problem = why_not_join(ad, role, resuming=previous is not None)
    if problem is not None:
        raise NetTableError(problem)
    if ad.passphrase and not passphrase:
        raise NetTableError(f"table {ad.name!r} is private: it needs its passphrase")
    header = TableHeader(
        ad.table_id, ad.host_fingerprint, ad.address, ad.name, player_name, role, 0, False
    )

    def fresh(key: SigningKeyPair) -> TableReplica:
        return TableReplica.joining(
            key, ad.table_id, name=player_name, role=role, randomness=os.urandom
        )

    node, store = await _open_node(
        data_dir, header, interface, fresh, previous=previous, bootstrap=ad.address
    )
    node.table_host = ad.host_fingerprint
    if passphrase:
        await _table_key(passphrase, node.replica)
    return NetworkTable(
        node,
        table_name=ad.name,
        interface=interface,
        hosting=False,
        host_timeout=host_timeout,
        store=store,
        data_dir=data_dir,
    )
