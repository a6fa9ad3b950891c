"""The local store: what a peer must not lose in a crash, and its replays.

Layout under the data directory (platformdirs' user data dir, or `--data-dir`):

- `identity`: this peer's signing key (a KEY record);
- `tables/<table id>.log`: one table as this peer played it: a TABLE record (who, where,
  which role), then in the order they happened every op this peer authored (OP, written
  to the kernel *before* the op is sent), the deal seed of each round it dealt (SEED, before
  the READY that commits to it), each final round's scores (FINAL), Lamport leases (CLOCK:
  a heartbeat promises our next op is stamped later than its own stamp, so before the clock
  passes the last lease a new one is written, and a restarted peer starts past it), and END
  when its match is over. The chain head is the last OP;
- `replays/`: finished or interrupted matches as signed logs (`nerts_p2p.net.replay`).

Every file is a sequence of records:

    magic "NRTS" | format version (1 byte) | kind (1 byte) | length (4 bytes, big endian)
    | payload (length bytes, msgpack) | checksum (8 bytes: BLAKE2b-64 of everything before)

A crash can tear only the last record of a file (appends are flushed in order): a last
record that is short or fails its checksum is dropped and the file cut back to the records
before it. A bad record with good ones after it is not a torn write but damage, and the
file is refused in plain words.

What is fsynced and what is only written (DESIGN.md 4 asks "append, flush"). A table's log
stays open for appends (`TableStore`). Every record is written to the kernel in one
`write` before the op or message it guards is sent, so a crash of the process (`kill -9`,
an exception, the window closed) loses nothing: the kernel holds the bytes and writes
them out whatever becomes of the process. Only a crash of the whole machine (power, a
kernel panic) can lose what was written but not yet on disk. For the records a peer could
not rebuild from the table, that is not good enough, and they are fsynced before anything
they guard is sent: KEY (the identity), TABLE, SEED (a deal seed: the table only holds its
commitment), CLOCK (a Lamport lease: the table cannot show what our heartbeats promised,
PROTOCOL.md 14), FINAL and END. OP records, one for every op a player authors, only
written: fsync costs about 0.2 ms on this machine's disk, more than the rest of a move's
way to the other players (README, `bench net`). An OP lost with the machine is recovered
from the table: every op we sent is held by the peers that received it, a restarted peer
stays quiet until it holds every op of its own that the table's first heartbeats name
(PROTOCOL.md 14, `Resuming`), and its clock restarts past the fsynced lease, which is
above every op it stamped. A later fsync (a lease, a seed) also makes every OP before it
durable: fsync writes out the whole file.
"""

from __future__ import annotations

import contextlib
import enum
import fcntl
import hashlib
import os
import struct
import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from nerts_p2p.game.errors import NertsError
from protocol.codec import pack, unpack_bounded
from protocol.errors import RemoteProtocolError
from protocol.messages import Op

MAGIC: Final = b"NRTS"
FORMAT_VERSION: Final = 1
HEADER: Final = struct.Struct(">4sBBI")
CHECKSUM_LEN: Final = 8
MAX_RECORD: Final = 1 << 20


class RecordKind(enum.IntEnum):
    KEY = 1
    TABLE = 2
    OP = 3
    SEED = 4
    FINAL = 5
    END = 6
    REPLAY = 7  # a replay file's header
    LOG_OP = 8  # a replay file's ops, anyone's
    CLOCK = 9  # a Lamport lease: no heartbeat of ours promised more than this


class StoreError(NertsError):
    """A store file that cannot be trusted, said in plain words."""


class DataDirInUseError(StoreError):
    """Another process holds the data dir (`data_dir_lock`)."""


def default_data_dir() -> Path:
    """The user's data directory for nerts-p2p (the window's and every command's), unless
    `NERTS_P2P_DATA_DIR` names another."""
    import platformdirs

    override = os.environ.get("NERTS_P2P_DATA_DIR")
    if override:
        return Path(override)
    return Path(platformdirs.user_data_dir("nerts-p2p", appauthor=False))


def _checksum(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=CHECKSUM_LEN).digest()


def encode_record(kind: RecordKind, payload: object) -> bytes:
    body = pack(payload)
    head = HEADER.pack(MAGIC, FORMAT_VERSION, int(kind), len(body))
    return head + body + _checksum(head + body)


@dataclass
class ReadResult:
    records: list[tuple[RecordKind, object]]
    good_bytes: int  # where the last good record ends
    torn: bool  # a torn last record was dropped


def read_records(data: bytes, *, what: str) -> ReadResult:
    records: list[tuple[RecordKind, object]] = []
    offset = 0
    while offset < len(data):
        problem = _record_problem(data, offset)
        if isinstance(problem, str):
            if _any_good_record_after(data, offset + 1):
                raise StoreError(f"{what} is damaged at byte {offset}: {problem}")
            return ReadResult(records, offset, torn=True)
        kind, payload, end = problem
        records.append((kind, payload))
        offset = end
    return ReadResult(records, offset, torn=False)


def _record_problem(data: bytes, offset: int) -> str | tuple[RecordKind, object, int]:
    if len(data) - offset < HEADER.size:
        return "a record is cut short"
    magic, version, kind, length = HEADER.unpack_from(data, offset)
    if magic != MAGIC:
        return "not a nerts-p2p record"
    if version != FORMAT_VERSION:
        return f"record format {version} is not supported (this program reads {FORMAT_VERSION})"
    if length > MAX_RECORD:
        return "a record claims an impossible length"
    end = offset + HEADER.size + length + CHECKSUM_LEN
    if end > len(data):
        return "a record is cut short"
    if _checksum(data[offset : end - CHECKSUM_LEN]) != data[end - CHECKSUM_LEN : end]:
        return "a record fails its checksum"
    try:
        record_kind = RecordKind(kind)
        payload = unpack_bounded(
            data[offset + HEADER.size : end - CHECKSUM_LEN], max_len=MAX_RECORD
        )
    except (ValueError, RemoteProtocolError):
        return "a record's contents are unreadable"
    return record_kind, payload, end


def _any_good_record_after(data: bytes, start: int) -> bool:
    at = data.find(MAGIC, start)
    while at != -1:
        if not isinstance(_record_problem(data, at), str):
            return True
        at = data.find(MAGIC, at + 1)
    return False


class RecordFile:
    """An append-only file of records; each append is flushed and fsynced."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.torn_dropped = False

    def read(self) -> list[tuple[RecordKind, object]]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StoreError(f"cannot read {self.path}: {exc.strerror}") from exc
        result = read_records(data, what=str(self.path))
        if result.torn:
            # The write a crash interrupted: never trusted, cut off so appends go on cleanly.
            self.torn_dropped = True
            with self.path.open("r+b") as f:
                f.truncate(result.good_bytes)
        return result.records

    def read_only(self) -> list[tuple[RecordKind, object]]:
        """Read without repairing: a torn last record is refused (a finished file, such as
        a replay, is never torn by a crash of ours)."""
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise StoreError(f"cannot read {self.path}: {exc.strerror}") from exc
        result = read_records(data, what=str(self.path))
        if result.torn:
            raise StoreError(f"{self.path} is cut short or damaged at byte {result.good_bytes}")
        return result.records

    def append(self, kind: RecordKind, payload: object) -> None:
        self.append_all([(kind, payload)])

    def append_all(self, records: Iterable[tuple[RecordKind, object]]) -> None:
        """Append records in one write, then one fsync (a replay's thousand ops: one fsync,
        not a thousand)."""
        data = b"".join(encode_record(kind, payload) for kind, payload in records)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("ab") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())


#: Records written to the kernel but not fsynced (see the module docstring): a player's own
#: ops, which the table gives back to a peer that lost them with its machine.
NOT_FSYNCED: Final = frozenset({RecordKind.OP})


class AppendHandle:
    """A record file kept open for appends: one `write` per record, straight to the kernel
    (no buffer in this process to lose), fsynced unless the record is in `NOT_FSYNCED`.
    Opening and closing the file for every op of a round cost as much as writing it."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        # Closed when the store goes, or at exit: nothing is buffered here, so an unclosed
        # descriptor loses nothing.
        self._closer = weakref.finalize(self, os.close, self._fd)

    def append(self, kind: RecordKind, payload: object) -> None:
        record = encode_record(kind, payload)
        written = os.write(self._fd, record)
        if written != len(record):
            # A full disk: what did get in is a torn last record, dropped on the next read.
            raise StoreError(
                f"the store could not take a record ({written} of {len(record)} bytes)"
            )
        if kind not in NOT_FSYNCED:
            os.fsync(self._fd)

    def close(self) -> None:
        self._closer()


def load_identity(data_dir: Path) -> bytes | None:
    """The key's seed, or None if this data dir has no identity file yet. A file that is
    there but holds no readable key is a `StoreError`: replacing it silently would make this
    peer a stranger at every table it sits at (its seat, its chain and its deals are the
    old key's), so the person decides."""
    path = data_dir / "identity"
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror}") from exc
    for kind, payload in read_records(data, what=str(path)).records:
        if kind == RecordKind.KEY and isinstance(payload, bytes) and len(payload) == 32:
            return payload
    raise StoreError(
        f"{path} holds no readable key (damaged or emptied): move it away to start with a new "
        "key; the tables this one sat at will not know the new one"
    )


def save_identity(data_dir: Path, seed: bytes) -> None:
    RecordFile(data_dir / "identity").append(RecordKind.KEY, seed)


@dataclass
class TableHeader:
    table: bytes
    host: bytes
    host_address: tuple[str, int]
    name: str  # the table's name
    me: str  # our name at the table
    role: int
    port: int  # the UDP port we played on (a restart binds it again)
    hosting: bool

    def payload(self) -> list[object]:
        host_ip, host_port = self.host_address
        return [
            self.table,
            self.host,
            host_ip,
            host_port,
            self.name,
            self.me,
            self.role,
            self.port,
            self.hosting,
        ]

    @classmethod
    def from_payload(cls, payload: object) -> TableHeader:
        if not isinstance(payload, list) or len(payload) != 9:
            raise StoreError("a table record is unreadable")
        table, host, ip, port, name, me, role, own_port, hosting = payload
        types = (bytes, bytes, str, int, str, str, int, int, bool)
        if not all(isinstance(v, t) for v, t in zip(payload, types, strict=True)):
            raise StoreError("a table record is unreadable")
        return cls(table, host, (ip, port), name, me, role, own_port, hosting)


@dataclass
class TableStore:
    """One table's log in the store (see the module docstring)."""

    path: Path
    header: TableHeader | None = None
    own_ops: list[bytes] = field(default_factory=list)  # op datagrams, in seq order
    seeds: dict[int, tuple[bytes, bytes]] = field(default_factory=dict)
    finals: list[dict[str, object]] = field(default_factory=list)
    clock_lease: int = 0
    ended: bool = False
    torn_dropped: bool = False
    _handle: AppendHandle | None = field(default=None, repr=False, compare=False)

    @classmethod
    def open(cls, data_dir: Path, table: bytes) -> TableStore:
        store = cls(data_dir / "tables" / f"{table.hex()}.log")
        file = RecordFile(store.path)
        for kind, payload in file.read():
            store._take(kind, payload)
        store.torn_dropped = file.torn_dropped
        return store

    def _take(self, kind: RecordKind, payload: object) -> None:
        if kind == RecordKind.TABLE:
            self.header = TableHeader.from_payload(payload)
        elif kind == RecordKind.OP and isinstance(payload, bytes):
            self.own_ops.append(payload)
        elif kind == RecordKind.SEED and isinstance(payload, list) and len(payload) == 3:
            number, seed, salt = payload
            self.seeds[int(number)] = (bytes(seed), bytes(salt))
        elif kind == RecordKind.FINAL and isinstance(payload, dict):
            self.finals.append(payload)
        elif kind == RecordKind.CLOCK and type(payload) is int:
            self.clock_lease = max(self.clock_lease, payload)
        elif kind == RecordKind.END:
            self.ended = True

    def _append(self, kind: RecordKind, payload: object) -> None:
        if self._handle is None:
            self._handle = AppendHandle(self.path)
        self._handle.append(kind, payload)
        self._take(kind, payload)

    def close(self) -> None:
        """Close the file (appends after this open it again)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def begin(self, header: TableHeader) -> None:
        self._append(RecordKind.TABLE, header.payload())

    def append_own(self, op: Op) -> None:
        self._append(RecordKind.OP, op.datagram())

    def append_seed(self, number: int, seed: bytes, salt: bytes) -> None:
        self._append(RecordKind.SEED, [number, seed, salt])

    def append_clock_lease(self, value: int) -> None:
        self._append(RecordKind.CLOCK, value)

    def append_final(self, record: dict[str, object]) -> None:
        self._append(RecordKind.FINAL, record)

    def end(self) -> None:
        if not self.ended:
            self._append(RecordKind.END, None)


def resumable_tables(data_dir: Path) -> Iterator[TableStore]:
    """Tables of this data dir whose match had not ended (a crash, a kill)."""
    folder = data_dir / "tables"
    if not folder.is_dir():
        return
    for path in sorted(folder.glob("*.log")):
        try:
            table = bytes.fromhex(path.stem)
            store = TableStore.open(data_dir, table)
        except (ValueError, StoreError):
            continue
        if store.header is not None and not store.ended:
            yield store


@contextlib.contextmanager
def data_dir_lock(data_dir: Path | None) -> Iterator[None]:
    """One process per data dir: two would share a key and sign conflicting ops (which
    the table punishes as equivocation)."""
    if data_dir is None:
        yield
        return
    if data_dir.exists() and not data_dir.is_dir():
        raise StoreError(f"cannot use {data_dir} as a data directory: it is a file")
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        handle = (data_dir / "lock").open("a")
    except OSError as exc:
        # A regular file where the directory should be, a parent that is a file, a
        # read-only place: said in words, before anything is played.
        raise StoreError(
            f"cannot use {data_dir} as a data directory: {exc.strerror or exc} "
            f"({exc.filename or data_dir})"
        ) from None
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise DataDirInUseError(
                f"another nerts-p2p process is using {data_dir}; give this one its own --data-dir"
            ) from None
        yield
