"""Replays: every match is saved as its signed log; `nerts-p2p replay` verifies and replays."""

from __future__ import annotations

from pathlib import Path

import pytest

from nerts_p2p.net.replay import MAX_REPLAY_BYTES, load_replay
from nerts_p2p.net.store import MAGIC, RecordFile, RecordKind, StoreError, encode_record

from .procs import FAST, bot_table, finish, nerts, table_name

LO = ["--interface", "127.0.0.1"]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    data = tmp_path_factory.mktemp("host")
    code, out, err = finish(
        nerts(
            [*bot_table(table_name()), "--headless", "--json", "--data-dir", str(data), *LO, *FAST]
        )
    )
    assert code == 0, err
    replays = sorted((data / "replays").glob("*.nrp"))
    assert len(replays) == 1, err
    return replays[0], out.splitlines()


def test_the_replay_verifies_and_prints_the_same_records_as_the_table(
    played: tuple[Path, list[str]],
) -> None:
    path, lines = played
    code, out, err = finish(nerts(["replay", str(path), "--json"]))
    assert code == 0, err
    assert out.splitlines() == lines


def test_the_text_replay_shows_every_move_and_the_audit(played: tuple[Path, list[str]]) -> None:
    path, _ = played
    code, out, err = finish(nerts(["replay", str(path)]))
    assert code == 0, err
    assert "all verified" in out
    assert "audit: every reveal matches its seed" in out
    assert "round 1:" in out


def test_a_damaged_replay_is_refused_in_plain_words(
    played: tuple[Path, list[str]], tmp_path: Path
) -> None:
    path, _ = played
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x40
    bad = tmp_path / "bad.nrp"
    bad.write_bytes(bytes(data))
    code, _out, err = finish(nerts(["replay", str(bad)]))
    assert code == 1
    assert "damaged" in err
    assert "Traceback" not in err
    cut = tmp_path / "cut.nrp"
    cut.write_bytes(path.read_bytes()[:-5])
    code, _, err = finish(nerts(["replay", str(cut)]))
    assert code == 1
    assert "cut short" in err
    code, _, err = finish(nerts(["replay", str(tmp_path / "absent.nrp")]))
    assert code == 1
    assert "does not exist" in err
    code, _, err = finish(nerts(["replay", str(tmp_path)]))  # the replays folder itself
    assert code == 1
    assert f"{tmp_path} is a folder: give one replay file in it" in err


def test_a_forged_op_in_a_well_formed_file_fails_verification(
    played: tuple[Path, list[str]], tmp_path: Path
) -> None:
    path, _ = played
    records = RecordFile(path).read_only()
    forged = bytearray()
    for i, (kind, payload) in enumerate(records):
        if kind == RecordKind.LOG_OP and i == len(records) // 2:
            assert isinstance(payload, bytes)
            damaged = bytearray(payload)
            damaged[-1] ^= 1  # the signature's last byte
            payload = bytes(damaged)
        forged += encode_record(kind, payload)
    out_path = tmp_path / "forged.nrp"
    out_path.write_bytes(bytes(forged))
    code, _, err = finish(nerts(["replay", str(out_path)]))
    assert code == 1
    assert "do not verify" in err


def test_a_huge_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    # Sparse: gigabytes on no disk. Read whole, it once took the memory it claimed.
    zeros = tmp_path / "zeros.nrp"
    with zeros.open("wb") as f:
        f.truncate(10 * 2**30)
    with pytest.raises(StoreError, match="is not a nerts-p2p replay"):
        load_replay(zeros)
    looks_like_one = tmp_path / "big.nrp"
    with looks_like_one.open("wb") as f:
        f.write(MAGIC)
        f.truncate(MAX_REPLAY_BYTES + 1)
    with pytest.raises(StoreError, match="larger than any match's replay"):
        load_replay(looks_like_one)
