"""kill -9 a player mid-round, start it again from its data dir: the match completes on
every process with the same records, and nobody is expelled (issue 6, PROTOCOL.md 14)."""

from __future__ import annotations

import signal
import time
from itertools import pairwise
from pathlib import Path

import pytest

from nerts_p2p.net.replay import load_replay
from nerts_p2p.net.store import RecordKind, encode_record, read_records
from protocol.messages import Kind, Op, decode

from .procs import bot_table, finish, nerts, table_name

LO = ["--interface", "127.0.0.1"]
PLAY = ["--headless", "--json", "--silence", "60", "--bot-pace", "0.03", *LO]
#: Seconds to wait for the player to be mid-round before the kill (a loaded machine is slow).
MID_ROUND_WAIT = 60.0


def _own_ops(data_dir: Path) -> list[Op]:
    """The ops a player's store holds, read without touching the file (the player may be
    writing it right now: a half-written last record is simply not counted)."""
    ops: list[Op] = []
    for path in (data_dir / "tables").glob("*.log"):
        table = bytes.fromhex(path.stem)
        for kind, payload in read_records(path.read_bytes(), what=str(path)).records:
            if kind == RecordKind.OP and isinstance(payload, bytes):
                message = decode(payload, table=table)
                assert isinstance(message, Op)
                ops.append(message)
    return ops


def _wait_mid_round(data_dir: Path, number: int) -> None:
    """Until the player has made a move of round `number` and not revealed it."""
    deadline = time.monotonic() + MID_ROUND_WAIT
    while time.monotonic() < deadline:
        kinds = {op.kind for op in _own_ops(data_dir) if op.epoch == number}
        assert Kind.REVEAL not in kinds, "the round ended before the player was killed"
        if Kind.MOVE in kinds:
            return
        time.sleep(0.05)
    raise AssertionError(f"the player made no move of round {number} in {MID_ROUND_WAIT} s")


def test_a_player_killed_mid_round_resumes_and_the_match_completes(tmp_path: Path) -> None:
    name = table_name()
    host_dir, ann_dir = tmp_path / "host", tmp_path / "ann"
    host = nerts(
        [
            "host",
            "--name",
            name,
            "--seats",
            "3",
            "--rounds",
            "2",
            *PLAY,
            "--nerts-size",
            "6",
            "--data-dir",
            str(host_dir),
        ]
    )
    time.sleep(0.5)
    bob = nerts(["join", name, "--as", "bob", *PLAY, "--data-dir", str(tmp_path / "bob")])
    ann = nerts(["join", name, "--as", "ann", *PLAY, "--data-dir", str(ann_dir)])
    assert ann.stdout is not None
    first = ann.stdout.readline()  # round 1 is final at ann: round 2 starts now
    assert first.startswith('{"round":1'), ann.stderr.read() if ann.stderr else ""
    _wait_mid_round(ann_dir, 2)
    ann.kill()  # SIGKILL: no goodbye, no flush beyond what the store already did
    ann.communicate()
    before = _own_ops(ann_dir)
    # The crash also tore the write it interrupted: half a record at the end of the store.
    (log,) = (ann_dir / "tables").glob("*.log")
    with log.open("ab") as f:
        f.write(encode_record(RecordKind.OP, b"x" * 200)[:50])
    again = nerts(["join", name, "--as", "ann", *PLAY, "--data-dir", str(ann_dir)])
    results = [finish(p) for p in (host, bob, again)]
    for code, _out, err in results:
        assert code == 0, err
    lines = [out.splitlines() for _, out, _ in results]
    assert len(lines[0]) == 3
    assert lines[1] == lines[0]
    assert lines[2] == lines[0]  # the restarted ann prints the whole match, the same
    assert '"cheaters":[]' in lines[0][0]
    assert '"cheaters":[]' in lines[0][1]

    # The torn record was dropped, never trusted: ann's chain goes on from the op before it,
    # one op per seq, each stamped later than the one before.
    after = _own_ops(ann_dir)
    assert [op.hash for op in after[: len(before)]] == [op.hash for op in before]
    assert [op.seq for op in after] == list(range(1, len(after) + 1))
    assert all(b.lamport > a.lamport for a, b in pairwise(after))
    # The host's signed log of the match: it verifies, nobody was expelled, ann kept her
    # seat, and both rounds were audited.
    (replay_file,) = (host_dir / "replays").iterdir()
    replay = load_replay(replay_file)
    assert replay.verified, replay.refused
    assert not replay.replica.sync.expelled
    ann_id = before[0].author
    rounds = replay.replica.rounds
    assert rounds[1].seat_of[ann_id] == rounds[2].seat_of[ann_id]
    assert [f.round for f in replay.finals] == [1, 2]
    assert all(not f.cheaters and not f.audit.diverged and not f.departed for f in replay.finals)
    assert [op.hash for op in replay.replica.sync.logs[ann_id]] == [op.hash for op in after]


def _bot_table(host_dir: Path) -> list[str]:
    """A host that plays its seat with a bot and runs one more bot: the whole table in one
    process."""
    return [
        *bot_table(table_name()),
        *PLAY,
        "--bot-pace",
        "0.3",
        "--nerts-size",
        "8",
        "--data-dir",
        str(host_dir),
    ]


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_a_host_that_ran_only_its_own_bot_comes_back_with_it_after_it_was_stopped(
    tmp_path: Path, stop: signal.Signals
) -> None:
    # Every member of this table lives in one process, so stopping it stops them all: each
    # comes back from its own store waiting for ops only the others' stores kept. They were
    # once all quiet for ever, each waiting for another (PROTOCOL.md 14).
    host_dir = tmp_path / "host"
    command = _bot_table(host_dir)
    host = nerts(command)
    _wait_mid_round(host_dir, 1)
    host.send_signal(stop)
    code, _, err = finish(host)
    if stop != signal.SIGKILL:
        # Ctrl-C and `kill` end it in order: no traceback, the interrupted match's replay
        # kept, the exit status of the signal; the store is left for the seat to be taken up.
        assert code == 128 + stop, err
        assert "Traceback" not in err
        (saved,) = (host_dir / "replays").glob("*.nrp")
        assert f"replay saved to {saved}" in err
        code, replayed, err = finish(nerts(["replay", str(saved)]))
        assert code == 0, err  # every op verifies; an interrupted round is no finding
        assert "round 1 was interrupted before it ended: nothing to audit" in replayed
    before = _own_ops(host_dir)
    code, out, err = finish(nerts(command))
    assert code == 0, err
    record, match = out.splitlines()
    assert record.startswith('{"round":1')
    assert '"departed":[]' in record
    assert '"cheaters":[]' in record
    assert '"rounds":1' in match
    # The host took its chain up where it was: the same ops first, no seq used twice.
    after = _own_ops(host_dir)
    assert [op.hash for op in after[: len(before)]] == [op.hash for op in before]
    assert [op.seq for op in after] == list(range(1, len(after) + 1))


def test_a_host_stopped_in_the_lobby_and_started_again_lets_players_in(tmp_path: Path) -> None:
    # Back from a stop it is restarting (PROTOCOL.md 14) and cannot sign an ADMIT for a few
    # seconds; it used to refuse every joiner then with "the table is full".
    name = table_name()
    command = ["host", "--name", name, "--seats", "2", "--rounds", "1", *PLAY]
    command += ["--data-dir", str(tmp_path / "h")]
    host = nerts(command)
    _wait_listed(name)
    host.send_signal(signal.SIGTERM)
    finish(host)
    again = nerts(command)
    time.sleep(0.5)
    guest = nerts(["join", name, *PLAY, "--data-dir", str(tmp_path / "guest")])
    (code, out, err), (host_code, host_out, host_err) = finish(guest), finish(again)
    assert code == 0, err
    assert host_code == 0, host_err
    assert out.splitlines() == host_out.splitlines()
    assert len(out.splitlines()) == 2


def _wait_listed(name: str) -> None:
    deadline = time.monotonic() + MID_ROUND_WAIT
    while time.monotonic() < deadline:
        _, out, _ = finish(nerts(["list", "--json", "--timeout", "1", *LO]))
        if f'"name":"{name}"' in out:
            return
    raise AssertionError(f"{name} was never announced")


def test_a_host_and_its_player_killed_together_both_come_back_and_finish(
    tmp_path: Path,
) -> None:
    # Two processes, two stores: neither knows the other's ops, and at first the host does
    # not even know where its player is or what its key is (both are in ops of its own
    # that wait for the player's). Both used to wait, quiet, for the other for ever.
    name = table_name()
    host_dir, guest_dir = tmp_path / "host", tmp_path / "guest"
    host_command = ["host", "--name", name, "--seats", "2", "--rounds", "1", *PLAY]
    host_command += ["--nerts-size", "8", "--data-dir", str(host_dir)]
    guest_command = ["join", name, *PLAY, "--data-dir", str(guest_dir)]
    host = nerts(host_command)
    time.sleep(0.5)
    guest = nerts(guest_command)
    _wait_mid_round(guest_dir, 1)
    for process in (host, guest):
        process.kill()
    for process in (host, guest):
        process.communicate()
    before = {d: _own_ops(d) for d in (host_dir, guest_dir)}
    host = nerts(host_command)
    guest = nerts(guest_command)
    (host_code, host_out, host_err), (code, out, err) = finish(host), finish(guest)
    assert host_code == 0, host_err
    assert code == 0, err
    assert out.splitlines() == host_out.splitlines()
    record, match = out.splitlines()
    assert record.startswith('{"round":1')
    assert '"departed":[]' in record
    assert '"cheaters":[]' in record
    assert '"rounds":1' in match
    for data_dir, ops in before.items():
        after = _own_ops(data_dir)
        assert [op.hash for op in after[: len(ops)]] == [op.hash for op in ops]
        assert [op.seq for op in after] == list(range(1, len(after) + 1))


def test_a_player_gone_for_good_is_voted_out_and_the_others_finish_the_match(
    tmp_path: Path,
) -> None:
    # Bob's process dies mid-round and never comes back. The others vote him out as
    # silent (PROTOCOL.md 13), finish the round without him and play the next round on
    # their own. They used to stop at "a peer went silent: bob", or wait for his seat.
    name = table_name()
    host = nerts(["host", "--name", name, "--seats", "3", "--rounds", "2", *PLAY]
                 + ["--nerts-size", "6", "--data-dir", str(tmp_path / "host")])  # fmt: skip
    time.sleep(0.5)
    ann = nerts(["join", name, "--as", "ann", *PLAY, "--data-dir", str(tmp_path / "ann")])
    bob_dir = tmp_path / "bob"
    bob = nerts(["join", name, "--as", "bob", *PLAY, "--data-dir", str(bob_dir)])
    _wait_mid_round(bob_dir, 1)
    bob.kill()
    bob.communicate()
    bob_id = _own_ops(bob_dir)[0].author
    results = [finish(p) for p in (host, ann)]
    for code, _out, err in results:
        assert code == 0, err
    lines = [out.splitlines() for _, out, _ in results]
    assert lines[0] == lines[1]
    first, second, match = lines[0]
    assert '"departed":[]' not in first  # bob, voted out
    assert '"departed":[' in first
    assert '"round":2' in second
    assert '"rounds":2' in match
    (replay_file,) = (tmp_path / "host" / "replays").iterdir()
    replay = load_replay(replay_file)
    assert replay.verified, replay.refused
    rounds = replay.replica.rounds
    assert bob_id in rounds[1].seat_of
    assert bob_id not in rounds[2].seat_of  # the second round was dealt to the two left
