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
from pathlib import Path

import trio

from nerts_p2p.game.bots import CASUAL, BotLevel, level_named
from nerts_p2p.game.rules import Rules
from nerts_p2p.net.discovery import ALL_INTERFACES, TableAd, TableAnnouncer
from nerts_p2p.net.node import TableNode
from nerts_p2p.net.opening import open_table_node, rehosting_refusal
from nerts_p2p.net.store import (
    DataDirInUseError,
    StoreError,
    TableHeader,
    TableStore,
    data_dir_lock,
    resumable_tables,
)
from nerts_p2p.net.transport import open_udp_transport
from nerts_p2p.table.replica import TableReplica
from protocol import admission
from protocol.envelope import PROTOCOL_VERSION
from protocol.messages import PLAYER, SPECTATOR, quoted_name
from protocol.signing import SigningKeyPair

from .bot_house import BotHouseConfig, BotSeats, practice_bytes
from .netsession import HOST_ANSWER_TIMEOUT, NetTableError, NetworkTable

#: Where practice tables play: this machine only.
LOOPBACK = "127.0.0.1"
#: Watching bots: seconds they rest between rounds (the results stay up that long).
WATCH_REST = 6.0
#: The longest the window waits for the bots' process to open the table it hosts.
OPEN_WAIT = 30.0


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
    except DataDirInUseError as exc:
        raise _DataDirInUseError(
            f"another nerts-p2p window or command is playing from {data_dir}: "
            "close it first (each keeps its own key)"
        ) from exc
    except StoreError as exc:  # a file where the folder should be, a read-only place
        raise NetTableError(str(exc)) from exc
    except OSError as exc:
        raise NetTableError(f"the data directory {data_dir} cannot be used: {exc}") from exc
    _HELD[data_dir] = stack


class _DataDirInUseError(NetTableError):
    """Another process holds the data dir (`_lock`)."""


def _spectators_dir(data_dir: Path | None) -> Path | None:
    """Where a spectator keeps its key and store: the data dir, held as `_lock` holds it, or
    none if another process holds it (the player at this very table, in another window of
    this machine). A spectator signs only its JOIN, so without it it watches with a key of
    this run and loses only coming back as the same member after a crash; its replay is
    still saved in the data dir."""
    try:
        _lock(data_dir)
    except _DataDirInUseError:
        return None
    return data_dir


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
    """`open_table_node`, its store's trouble said as the window says it."""
    try:
        return await open_table_node(
            data_dir, header, interface, fresh, previous=previous, bootstrap=bootstrap, key=key
        )
    except StoreError as exc:
        raise NetTableError(str(exc)) from exc


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
    """Whether this data dir was at the announced table and can take its seat back: not
    while another process plays from it (that seat is being played, not left behind)."""
    if data_dir is not None and data_dir not in _HELD and _held_elsewhere(data_dir):
        return False
    try:
        return _earlier_joined(data_dir, ad.table_id) is not None
    except NetTableError:
        return False


def _held_elsewhere(data_dir: Path) -> bool:
    """Whether another process holds the data dir (we do not: the caller asks `_HELD`)."""
    try:
        with data_dir_lock(data_dir):
            return False
    except DataDirInUseError:
        return True
    except StoreError:
        return False  # not a usable data dir: `_earlier_joined` finds no seat either


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
    bot_pace: float = 1.0,
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
    refusal = rehosting_refusal(
        replica, table_name, passphrase_given=bool(passphrase), give="its passphrase", without="one"
    )
    if refusal is not None:
        node.transport.close()
        raise NetTableError(refusal)
    private = admission.is_private(replica.sync)
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
        bot_pace=bot_pace,
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
    draw = practice_bytes(f"{label}/you") if label is not None else os.urandom
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


def watched_bots(
    seats: int,
    level: BotLevel,
    *,
    seed: int | None = None,
    rules: Rules | None = None,
    bot_pace: float = 1.0,
) -> BotSeats:
    """Bots at every seat of a table they host, in their own process on 127.0.0.1 (run it
    with `BotSeats.run`, then `watch_bots` to watch). The same seed deals the same game."""
    rules = rules or Rules(seats=seats)
    if rules.partnerships:
        raise NetTableError("bots to watch sit one per seat")
    bots = BotSeats(
        BotHouseConfig(
            interface=LOOPBACK,
            table=b"",
            host=b"",
            address=("", 0),
            level=level.name,
            seed=f"seed-{seed}" if seed is not None else None,
            pace=bot_pace,
            open_rules=rules.to_dict(),
            rest=WATCH_REST,
        )
    )
    for _ in range(rules.seats):
        bots.add()
    return bots


async def watch_bots(bots: BotSeats, *, name: str) -> NetworkTable:
    """A spectator's table (ours) at the table `bots` opened, once it is open: every seat
    is theirs, we only watch. Nothing is kept (no key, no store)."""
    with trio.move_on_after(OPEN_WAIT):
        await bots.table_opened.wait()
    if bots.opened is None:
        said = "; ".join(bots.problems) or f"nothing after {OPEN_WAIT:g} s"
        raise NetTableError(f"the bots could not open their table ({said})")
    table, host, address = bots.opened
    label = bots.config.seed
    draw = practice_bytes(f"{label}/watcher") if label is not None else os.urandom
    replica = TableReplica.joining(
        SigningKeyPair(draw(32)), table, name=name, role=SPECTATOR, randomness=draw
    )
    transport = await open_udp_transport(LOOPBACK)
    node = TableNode(replica, transport, bootstrap=address, table_host=host)
    watching = NetworkTable(
        node,
        table_name="bots",
        interface=LOOPBACK,
        hosting=False,
        bot_level=level_named(bots.config.level),
        practice=True,
        seed=label,
    )
    watching.bots = bots
    return watching


async def _table_key(passphrase: str, replica: TableReplica) -> bytes:
    """The table key from its passphrase (argon2id: a fraction of a second of CPU, in a
    thread, so the frames go on), given to the replica."""
    key = await trio.to_thread.run_sync(admission.table_key, passphrase, replica.sync.table)
    replica.use_table_key(key)
    return key


def why_not_join(ad: TableAd, role: int, *, resuming: bool = False) -> str | None:
    """Why this window cannot sit at (or watch) the announced table, or None. A seat we
    are taking back counts as ours, however full the table looks."""
    mismatch = ad.version_mismatch()
    if mismatch is not None:
        return mismatch
    if role == PLAYER and ad.full and not resuming:
        return (
            f"table {quoted_name(ad.name)} is full ({ad.seats_taken} of {ad.seats_max} seats taken)"
        )
    if role == SPECTATOR and not ad.spectators and not resuming:
        return f"table {quoted_name(ad.name)} does not welcome spectators"
    if ad.address[0] == ALL_INTERFACES:
        return f"table {quoted_name(ad.name)} announced no usable address"
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
    port: int = 0,
) -> NetworkTable:
    """Sit at (PLAYER) or watch (SPECTATOR) an announced table; served with `serve`. A
    private table needs its passphrase (a wrong one is said in the lobby). With a data dir,
    a table this window was at and did not finish is taken up again, in its old role.
    `port`: the UDP port to play on (0: any free one)."""
    if role == SPECTATOR:
        keys_dir = _spectators_dir(data_dir)
    else:
        _lock(data_dir)
        keys_dir = data_dir
    previous = _earlier_joined(keys_dir, ad.table_id)
    if previous is not None and previous.header is not None:
        role = previous.header.role
    problem = why_not_join(ad, role, resuming=previous is not None)
    if problem is not None:
        raise NetTableError(problem)
    if ad.passphrase and not passphrase:
        raise NetTableError(f"table {quoted_name(ad.name)} is private: it needs its passphrase")
    header = TableHeader(
        ad.table_id, ad.host_fingerprint, ad.address, ad.name, player_name, role, port, False
    )

    def fresh(key: SigningKeyPair) -> TableReplica:
        return TableReplica.joining(
            key, ad.table_id, name=player_name, role=role, randomness=os.urandom
        )

    node, store = await _open_node(
        keys_dir, header, interface, fresh, previous=previous, bootstrap=ad.address
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
