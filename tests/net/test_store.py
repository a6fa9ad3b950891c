"""The crash store: records with a version and a checksum; a torn last record dropped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nerts_p2p.game.rules import Rules
from nerts_p2p.net.resume import resume_replica
from nerts_p2p.net.store import (
    RecordFile,
    RecordKind,
    StoreError,
    TableHeader,
    TableStore,
    data_dir_lock,
    encode_record,
    load_identity,
    resumable_tables,
    save_identity,
)
from nerts_p2p.table.replica import TableReplica
from protocol.envelope import seal
from protocol.messages import heartbeat_body
from protocol.signing import SigningKeyPair
from tools.mesh import seeded_bytes

from .helpers import key_for


def _hosted(tmp_path: Path) -> tuple[TableReplica, TableStore]:
    replica = TableReplica.open_table(
        key_for("store-host"),
        name="t",
        rules=Rules(seats=2),
        spectators=True,
        randomness=seeded_bytes("store"),
    )
    store = TableStore.open(tmp_path, replica.sync.table)
    store.begin(
        TableHeader(replica.sync.table, replica.me, ("127.0.0.1", 1), "t", "t", 1, 5000, True)
    )
    for op in replica.sync.logs[replica.me]:
        store.append_own(op)
    return replica, store


def test_records_round_trip_and_a_torn_last_record_is_dropped(tmp_path: Path) -> None:
    replica, store = _hosted(tmp_path)
    replica.ready()
    ready = replica.sync.logs[replica.me][-1]
    store.append_seed(1, *replica.my_secrets[1])
    store.append_own(ready)
    whole = store.path.read_bytes()
    # A crash in the middle of the next append: half a record at the end.
    half = encode_record(RecordKind.OP, b"x" * 100)[:37]
    store.path.write_bytes(whole + half)
    again = TableStore.open(tmp_path, replica.sync.table)
    assert again.torn_dropped
    assert again.own_ops == [op.datagram() for op in replica.sync.logs[replica.me]]
    assert again.seeds == {1: replica.my_secrets[1]}
    assert store.path.read_bytes() == whole  # cut back, so appends go on cleanly


def test_a_flipped_bit_in_the_last_record_is_dropped_not_trusted(tmp_path: Path) -> None:
    replica, store = _hosted(tmp_path)
    data = bytearray(store.path.read_bytes())
    data[-3] ^= 1
    store.path.write_bytes(bytes(data))
    again = TableStore.open(tmp_path, replica.sync.table)
    assert again.torn_dropped
    assert again.own_ops == []  # the OPEN was the last record: gone, not half-believed


def test_damage_before_good_records_is_refused_in_plain_words(tmp_path: Path) -> None:
    replica, store = _hosted(tmp_path)
    data = bytearray(store.path.read_bytes())
    data[20] ^= 0xFF  # inside the first record, with a good record after it
    store.path.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="damaged"):
        TableStore.open(tmp_path, replica.sync.table)


def test_a_record_of_a_newer_format_is_named(tmp_path: Path) -> None:
    path = tmp_path / "identity"
    record = bytearray(encode_record(RecordKind.KEY, b"k" * 32))
    record[4] = 9
    path.write_bytes(bytes(record) + encode_record(RecordKind.KEY, b"k" * 32))
    with pytest.raises(StoreError, match="format 9"):
        RecordFile(path).read()


def test_identity_survives_and_a_second_process_cannot_share_the_dir(tmp_path: Path) -> None:
    assert load_identity(tmp_path) is None
    save_identity(tmp_path, b"s" * 32)
    assert load_identity(tmp_path) == b"s" * 32
    with (
        data_dir_lock(tmp_path),
        pytest.raises(StoreError, match="another nerts-p2p process"),
        data_dir_lock(tmp_path),
    ):
        pass


def test_a_resumed_host_continues_its_chain_without_reusing_a_seq(tmp_path: Path) -> None:
    replica, store = _hosted(tmp_path)
    replica.ready()
    store.append_seed(1, *replica.my_secrets[1])
    store.append_own(replica.sync.logs[replica.me][-1])
    assert [s.header and s.header.name for s in resumable_tables(tmp_path)] == ["t"]
    again = TableStore.open(tmp_path, replica.sync.table)
    resumed = resume_replica(key_for("store-host"), again, randomness=seeded_bytes("other"))
    assert resumed.sync.vector() == replica.sync.vector()
    assert resumed.my_secrets == replica.my_secrets
    # Quiet at first: nobody else's heartbeat says what it held before the crash. Alone at
    # its table (no heartbeat at all for five holds of a second), it continues its chain.
    resumed.tick(100.0)
    resumed.tick(104.9)
    assert not resumed.can_author
    assert resumed.outgoing() == []  # not even a heartbeat
    resumed.tick(105.0)
    assert resumed.can_author
    left = resumed.leave()
    assert left.seq == 3
    assert left.lamport > replica.sync.logs[replica.me][-1].lamport
    store.end()
    assert list(resumable_tables(tmp_path)) == []


async def test_a_store_that_cannot_be_written_is_said_in_plain_words(tmp_path: Path) -> None:
    """The CLI and the window open tables through one path (`nerts_p2p.net.opening`): a data
    dir where the table's store cannot be written is an error that says where, not a trace."""
    from nerts_p2p.net.opening import open_table_node

    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "tables").write_text("a file where the folder of stores should be")

    def fresh(key: SigningKeyPair) -> TableReplica:
        return TableReplica.open_table(
            key, name="t", rules=Rules(seats=2), spectators=True, randomness=seeded_bytes("t")
        )

    header = TableHeader(b"", b"", ("", 0), "t", "t", 0, 0, True)
    with pytest.raises(StoreError, match=r"the table's store in .* cannot be written"):
        await open_table_node(
            data_dir, header, "127.0.0.1", fresh, previous=None, bootstrap=None, key=key_for("w")
        )


def _count_fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The file descriptors fsynced from now on, in order (each fsync still done)."""
    synced: list[int] = []
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", counting_fsync)
    return synced


def test_an_own_op_is_in_the_file_when_appended_and_only_the_others_are_fsynced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Own ops are written to the kernel at once (a killed process loses none) but not
    fsynced (the table gives them back after a machine crash); seeds and leases are."""
    synced = _count_fsyncs(monkeypatch)
    replica, store = _hosted(tmp_path)
    assert len(synced) == 1  # the TABLE record; the OPEN (an own op) was only written
    replica.ready()
    store.append_own(replica.sync.logs[replica.me][-1])
    assert len(synced) == 1
    reread = TableStore.open(tmp_path, replica.sync.table)  # another reader, store still open
    assert reread.own_ops == [op.datagram() for op in replica.sync.logs[replica.me]]
    store.append_seed(1, *replica.my_secrets[1])
    store.append_clock_lease(4096)
    assert len(synced) == 3
    store.close()
    store.append_clock_lease(8192)  # opened again
    assert TableStore.open(tmp_path, replica.sync.table).clock_lease == 8192


def test_a_replay_is_written_in_one_go_with_one_fsync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A match's log is saved at its end, while the node still runs: one fsync for the
    whole file, not one per op (hundreds of them, 0.2 ms each on this disk)."""
    synced = _count_fsyncs(monkeypatch)
    records = [
        (RecordKind.REPLAY, [1, b"t"]),
        *((RecordKind.LOG_OP, i.to_bytes(2, "big") * 5) for i in range(300)),
    ]
    path = tmp_path / "replays" / "r.nrp"
    RecordFile(path).append_all(records)
    assert len(synced) == 1
    assert RecordFile(path).read_only() == records


@pytest.mark.parametrize("damage", [b"", b"\x00" * 52, b"garbage that is not a record"])
def test_a_damaged_identity_is_refused_not_replaced_by_a_new_key(
    tmp_path: Path, damage: bytes
) -> None:
    (tmp_path / "identity").write_bytes(damage)
    with pytest.raises(StoreError, match=r"holds no readable key .* move it away"):
        load_identity(tmp_path)
    assert (tmp_path / "identity").read_bytes() == damage  # left as it was, for the person


def test_a_data_dir_that_cannot_be_one_is_refused_in_words(tmp_path: Path) -> None:
    a_file = tmp_path / "afile"
    a_file.write_text("not a directory")
    with (
        pytest.raises(StoreError, match="afile as a data directory: it is a file"),
        data_dir_lock(a_file),
    ):
        pass
    with (
        pytest.raises(StoreError, match="sub as a data directory: Not a directory"),
        data_dir_lock(a_file / "sub"),
    ):
        pass
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "lock").mkdir()  # the lock file is a directory
    with (
        pytest.raises(StoreError, match="as a data directory: Is a directory"),
        data_dir_lock(tmp_path / "d"),
    ):
        pass


def test_a_resumed_lone_host_is_not_kept_quiet_by_a_joiner_at_its_door(tmp_path: Path) -> None:
    # A joiner still at the door (a heartbeat from a key the host never admitted) holds no
    # promise of the host's: it once kept a lone restarted host quiet for ever, and itself
    # waiting at the door with it.
    replica, _store = _hosted(tmp_path)
    again = TableStore.open(tmp_path, replica.sync.table)
    resumed = resume_replica(key_for("store-host"), again, randomness=seeded_bytes("other"))
    resumed.tick(100.0)
    stranger = key_for("at-the-door")
    knock = seal(stranger, heartbeat_body(replica.sync.table, stranger.key_id, 1, [], bytes(16)))
    resumed.receive(knock, ("127.0.0.1", 5000), 101.0)
    resumed.tick(104.9)
    assert not resumed.can_author
    resumed.tick(105.0)  # alone at its table for five holds, as with no knock at all
    assert resumed.can_author


def test_a_store_resumed_with_another_key_is_refused_in_words(tmp_path: Path) -> None:
    # The identity file was replaced by a copy of another player's, or removed (a new key
    # was made): resumed under that key, the peer waited for ever for a chain not its own
    # and the whole table with it, or played under the other player's name.
    replica, _store = _hosted(tmp_path)
    again = TableStore.open(tmp_path, replica.sync.table)
    with pytest.raises(StoreError, match="signed by another key than this data dir's identity"):
        resume_replica(key_for("someone-else"), again, randomness=seeded_bytes("other"))
    resumed = resume_replica(key_for("store-host"), again, randomness=seeded_bytes("other"))
    assert resumed.me == replica.me
