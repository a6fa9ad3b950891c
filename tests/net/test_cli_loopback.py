"""`nerts-p2p host/join/spectate/list/play --bots` as separate processes on loopback."""

from __future__ import annotations

import json
import re
import signal
import time
from pathlib import Path

import pytest

from .procs import FAST, FAST_JOIN, finish, nerts, table_name

LO = ["--interface", "127.0.0.1"]
#: A move as `replay` prints it: its Lamport time, then the move's text.
MOVE_LINE = re.compile(r"^ +\d+  \d ")
#: The machine running the suite may be loaded: give up on a silent peer only after long.
PATIENT = ["--silence", "60"]


def test_four_processes_play_a_match_and_print_identical_lines() -> None:
    name = table_name()
    seats = ["--seats", "4", "--bots", "1", "--rounds", "2"]
    host = nerts(["host", "--name", name, *seats, "--headless", "--json", *LO, *FAST, *PATIENT])
    time.sleep(0.5)
    joiners = [
        nerts(["join", name, "--as", who, "--headless", "--json", *LO, *FAST_JOIN, *PATIENT])
        for who in ("ann", "bob")
    ]
    watcher = nerts(["spectate", name, "--json", *LO, *PATIENT])
    results = [finish(p) for p in (host, *joiners, watcher)]
    for code, _out, err in results:
        assert code == 0, err
    lines = [out.splitlines() for _, out, _ in results]
    assert len(lines[0]) == 3  # two rounds, then the match
    assert all(each == lines[0] for each in lines)
    rounds = [json.loads(line) for line in lines[0][:2]]
    assert [r["round"] for r in rounds] == [1, 2]
    assert all(len(r["seats"]) == 4 and r["state_hash"] for r in rounds)
    match = json.loads(lines[0][2])
    assert match["rounds"] == 2
    assert match["totals"] == [s["total"] for s in rounds[1]["seats"]]


def test_list_shows_an_announced_table_with_its_seats() -> None:
    name = table_name()
    host = nerts(["host", "--name", name, "--seats", "3", "--headless", *LO, *FAST])
    try:
        code, out, err = finish(nerts(["list", "--json", "--timeout", "4", *LO]))
    finally:
        host.kill()
        host.communicate()
    assert code == 0, err
    tables = [json.loads(line) for line in out.splitlines()]
    ours = [t for t in tables if t["name"] == name]
    assert len(ours) == 1
    assert ours[0]["seats_taken"] == 1
    assert ours[0]["seats_max"] == 3
    assert ours[0]["phase"] == "lobby"


def test_join_without_a_table_says_none_was_found() -> None:
    code, _out, err = finish(
        nerts(["join", table_name("missing"), "--headless", "--timeout", "1", *LO])
    )
    assert code == 1
    assert "no table named" in err
    assert "Traceback" not in err


def _wait_until_listed(name: str, seats_taken: int) -> dict[str, object]:
    """Until `list --json` shows the table with `seats_taken`; its object."""
    for _ in range(20):
        _, out, _ = finish(nerts(["list", "--json", "--timeout", "2", *LO]))
        tables = [json.loads(line) for line in out.splitlines()]
        for table in tables:
            if table["name"] == name and table["seats_taken"] == seats_taken:
                return dict(table)
    raise AssertionError(f"{name} never showed {seats_taken} seats taken")


def _wait_until_playing(name: str, seats_taken: int) -> None:
    """Until the table has its players and the round is on (bots at human pace: it lasts a
    while). Polled, not slept: on a loaded machine starting and admitting them takes long."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        _, out, _ = finish(nerts(["list", "--json", "--timeout", "2", *LO]))
        ours = [t for t in map(json.loads, out.splitlines()) if t["name"] == name]
        if ours and ours[0]["seats_taken"] == seats_taken and ours[0]["phase"] == "playing":
            return
    raise AssertionError(f"{name} never showed a round played by {seats_taken}")


def test_join_a_full_table_says_it_is_full() -> None:
    name = table_name()
    host = nerts(["host", "--name", name, "--seats", "2", "--bots", "1", "--headless", *LO])
    try:
        _wait_until_listed(name, 2)
        code, _, err = finish(nerts(["join", name, "--headless", "--timeout", "6", *LO]))
    finally:
        host.kill()
        host.communicate()
    assert code == 1
    assert f"table {name!r} is full" in err


def test_a_full_table_whose_store_here_is_empty_says_why_the_seat_is_lost(
    tmp_path: Path,
) -> None:
    # Our store of this table lost even its first record (a disk emptied the file): the
    # seat cannot be resumed. "The table is full" alone read as if the seat were someone
    # else's, when it was most likely our own.
    name = table_name()
    host = nerts(["host", "--name", name, "--seats", "2", "--bots", "1", "--headless", *LO])
    try:
        table = _wait_until_listed(name, 2)
        (tmp_path / "tables").mkdir()
        (tmp_path / "tables" / f"{table['table_id']}.log").write_bytes(b"")
        joiner = ["join", name, "--headless", "--timeout", "6", "--data-dir", str(tmp_path)]
        code, _, err = finish(nerts([*joiner, *LO]))
    finally:
        host.kill()
        host.communicate()
    assert code == 1
    assert f"table {name!r} is full" in err
    assert "store of that table" in err
    assert "is empty or damaged" in err


def test_a_join_in_a_running_hosts_bot_dir_is_refused_before_it_plays(tmp_path: Path) -> None:
    """Its bot's key is that dir's key: a second process there would sign conflicting ops."""
    name = table_name()
    host_dir = tmp_path / "host"
    host = nerts(
        ["host", "--name", name, "--seats", "3", "--bots", "1", "--headless", *LO]
        + ["--data-dir", str(host_dir)]
    )
    try:
        _wait_until_listed(name, 2)
        bot_dir = host_dir / "bots" / "bot1"
        code, _, err = finish(
            nerts(["join", name, "--headless", "--timeout", "6", *LO, "--data-dir", str(bot_dir)])
        )
    finally:
        host.kill()
        host.communicate()
    assert code == 1
    assert f"another nerts-p2p process is using {bot_dir}" in err


def test_a_port_in_use_is_said_plainly() -> None:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        code, _, err = finish(
            nerts(["host", "--name", table_name(), "--headless", "--port", str(port), *LO])
        )
    assert code == 1
    assert "already in use" in err


def test_a_player_gone_silent_ends_the_host_with_a_plain_error() -> None:
    name = table_name()
    host = nerts(
        [
            "host",
            "--name",
            name,
            "--seats",
            "2",
            "--headless",
            "--silence",
            "3",
            *LO,
            "--bot-pace",
            "1",
        ]
    )
    time.sleep(0.5)
    guest = nerts(["join", name, "--headless", *LO, "--bot-pace", "1"])
    _wait_until_playing(name, seats_taken=2)
    time.sleep(1.0)
    guest.kill()
    guest.communicate()
    code, _, err = finish(host, timeout=60)
    assert code == 1
    assert "went silent" in err


def test_play_with_bots_practices_over_the_node_on_loopback_and_keeps_the_replay(
    tmp_path: Path,
) -> None:
    practice = ["play", "--bots", "2", "--headless", "--json", "--rounds", "1", *FAST]
    code, out, err = finish(nerts([*practice, "--data-dir", str(tmp_path)]))
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 2
    assert len(json.loads(lines[0])["seats"]) == 3
    # Practice keeps no store, but its match is a replay like a network match's.
    assert not (tmp_path / "tables").exists()
    (saved,) = (tmp_path / "replays").glob("*.nrp")
    assert str(saved) in err
    code, replayed, err = finish(nerts(["replay", str(saved), "--json"]))
    assert code == 0, err
    assert replayed.splitlines() == lines


def test_hosting_by_hand_where_no_window_can_open_says_how_to_play_headless(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Without --headless a person plays the seat in the window (tests/client/
    # test_window_from_cli.py); a machine with no display says so, and what to do instead.
    for variable in ("SDL_VIDEODRIVER", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(variable, raising=False)
    code, _, err = finish(nerts(["host", "--name", "x", *LO]))
    assert code == 1
    assert "no display" in err
    assert "add --headless" in err


def test_a_table_whose_name_fills_the_wire_seats_bots_and_guests_named_after_it() -> None:
    # 32 bytes of UTF-8, accents included: the host's bot ("...-bot1") and a guest who
    # gives no --as ("...-guest") get names shortened to fit, and the match is played.
    name = table_name() + "é" * 11 + "x"
    assert len(name.encode()) == 32
    seats = ["--seats", "3", "--bots", "1", "--rounds", "1"]
    host = nerts(["host", "--name", name, *seats, "--headless", "--json", *LO, *FAST, *PATIENT])
    time.sleep(0.5)
    guest = nerts(["join", name, "--headless", "--json", *LO, *FAST_JOIN, *PATIENT])
    results = [finish(p) for p in (host, guest)]
    for code, _out, err in results:
        assert code == 0, err
        assert "Traceback" not in err
    lines = [out.splitlines() for _, out, _ in results]
    assert len(lines[0]) == 2  # the round, then the match
    assert lines[0] == lines[1]
    assert len(json.loads(lines[0][0])["seats"]) == 3


def test_a_spectator_without_json_prints_each_move_live_as_its_replay_prints_it(
    tmp_path: Path,
) -> None:
    name = table_name()
    seats = ["--seats", "2", "--bots", "1", "--rounds", "1"]
    host = nerts(["host", "--name", name, *seats, "--headless", *LO, *FAST, *PATIENT])
    time.sleep(0.5)
    watcher = nerts(["spectate", name, "--as", "eve", *LO, *PATIENT, "--data-dir", str(tmp_path)])
    (code, watched, err), (host_code, _, host_err) = finish(watcher), finish(host)
    assert code == 0, err
    assert host_code == 0, host_err
    header = watched.splitlines()[0]
    assert header.startswith("round 1 begins: seat 0 ")
    assert f" {name}," in header or header.endswith(f" {name}")
    assert f" {name}-bot1" in header
    moves = [line for line in watched.splitlines() if MOVE_LINE.match(line)]
    assert moves, "the spectator printed no move"
    (saved,) = (tmp_path / "replays").glob("*.nrp")
    code, replayed, err = finish(nerts(["replay", str(saved)]))
    assert code == 0, err
    assert moves == [line for line in replayed.splitlines() if MOVE_LINE.match(line)]
    # then the round's summary, as a player prints it
    assert any(line.startswith("round 1: ") for line in watched.splitlines())


def test_a_spectator_on_the_machine_of_a_player_watches_from_its_data_dir_with_a_key_of_its_own(
    tmp_path: Path,
) -> None:
    # The host in one terminal, `spectate` in another, both with the user's data dir: the
    # spectator was refused ("another nerts-p2p process is using ..."). A spectator signs
    # only its JOIN, so it watches with a key of this run, and saves its replay there too.
    name = table_name()
    shared = ["--data-dir", str(tmp_path)]
    seats = ["--seats", "2", "--bots", "1", "--rounds", "1"]
    host = nerts(
        ["host", "--name", name, *seats, "--headless", "--json", *LO, *FAST, *PATIENT, *shared]
    )
    time.sleep(0.5)
    watcher = nerts(["spectate", name, "--json", *LO, *PATIENT, *shared])
    (code, watched, err), (host_code, hosted, host_err) = finish(watcher), finish(host)
    assert host_code == 0, host_err
    assert code == 0, err
    assert f"another nerts-p2p process is using {tmp_path}: watching with a key" in err
    assert watched == hosted
    replays = sorted((tmp_path / "replays").glob("*.nrp"))
    assert len(replays) == 2  # the host's and the spectator's, side by side
    for replay in replays:
        code, _, err = finish(nerts(["replay", str(replay)]))
        assert code == 0, err


def test_a_player_who_leaves_between_rounds_leaves_a_free_seat_and_the_rest_play_on(
    tmp_path: Path,
) -> None:
    # ann plays one round of three and says goodbye: the host and its bot play the next
    # two on their own. The host used to wait, silent, for her seat for ever.
    name = table_name()
    host = nerts(
        ["host", "--name", name, "--seats", "3", "--bots", "1", "--rounds", "3", "--headless"]
        + ["--json", *FAST, *LO, *PATIENT]
    )
    time.sleep(0.5)
    ann = nerts(
        ["join", name, "--as", "ann", "--rounds", "1", "--headless", "--json", *FAST_JOIN]
        + [*LO, *PATIENT]
    )
    (code, out, err), (ann_code, ann_out, ann_err) = finish(host), finish(ann)
    assert ann_code == 0, ann_err
    assert code == 0, err
    rounds = [json.loads(line) for line in out.splitlines()[:-1]]
    assert [r["round"] for r in rounds] == [1, 2, 3]
    assert ann_out.splitlines()[0] == out.splitlines()[0]
    assert len(rounds[0]["seats"]) == 3
    assert len(rounds[1]["seats"]) == 2  # dealt to the two still there
    assert json.loads(out.splitlines()[-1])["rounds"] == 3


def test_practice_with_bots_in_partnerships_seats_you_and_three_bots_two_by_two(
    tmp_path: Path,
) -> None:
    # You and 3 bots are 4 players; it used to count 3 (the default) and refuse, or,
    # with --players 4, wait for ever for a table of 8.
    practice = ["play", "--bots", "3", "--partnerships", "--headless", "--json", "--rounds", "1"]
    code, out, err = finish(nerts([*practice, *FAST, "--data-dir", str(tmp_path)]))
    assert code == 0, err
    record, match = map(json.loads, out.splitlines())
    assert len(record["seats"]) == 2
    assert match["rounds"] == 1


def test_a_newcomer_takes_a_seat_that_fell_free_between_rounds(tmp_path: Path) -> None:
    # ann plays round 1 and leaves; bob comes later for her seat. Catching up, he saw
    # round 1 begin without him at a full table and turned himself away ("table full").
    name = table_name()
    host = nerts(
        ["host", "--name", name, "--seats", "3", "--bots", "1", "--rounds", "6", "--headless"]
        + ["--json", "--bot-pace", "0.1", "--nerts-size", "8", *LO, *PATIENT]
    )
    time.sleep(0.5)
    joining = ["--headless", "--json", *FAST_JOIN, *LO, *PATIENT]
    ann_code, _, ann_err = finish(nerts(["join", name, "--as", "ann", "--rounds", "1", *joining]))
    assert ann_code == 0, ann_err
    bob = nerts(["join", name, "--as", "bob", *joining])
    (code, out, err), (bob_code, bob_out, bob_err) = finish(host), finish(bob)
    assert code == 0, err
    assert bob_code == 0, bob_err
    assert "table full" not in bob_err
    assert len(out.splitlines()) == 7  # six rounds and the match
    assert bob_out.splitlines() == out.splitlines()  # he caught up on every round


def _join_and_leave_the_lobby(name: str, who: str, *, seats_before: int) -> None:
    """`who` takes a seat, then stops with Ctrl-C before the first round: exit 130, and the
    table lists its seat free again."""
    joiner = nerts(["join", name, "--as", who, "--headless", *LO])
    _wait_until_listed(name, seats_before + 1)
    joiner.send_signal(signal.SIGINT)
    code, _, err = finish(joiner)
    assert code == 130, err
    _wait_until_listed(name, seats_before)


def test_a_joiner_stopped_before_the_first_round_frees_its_seat() -> None:
    # Ctrl-C while waiting for the table to fill: a goodbye, so the host neither waits for
    # its seat nor gives up on it as silent 15 s later.
    name = table_name()
    host = nerts(["host", "--name", name, "--seats", "4", "--bots", "1", "--headless", *LO])
    try:
        _wait_until_listed(name, 2)
        _join_and_leave_the_lobby(name, "early", seats_before=2)
        time.sleep(16)  # past the default --silence
        assert host.poll() is None, host.communicate()
    finally:
        host.kill()
        host.communicate()


def test_a_host_whose_only_joiner_leaves_its_lobby_keeps_the_table_open() -> None:
    # No bots: when its one joiner said goodbye before the first round, the host used to
    # stop ("everyone else left the table") and withdraw the table; it waits for others.
    name = table_name()
    host = nerts(["host", "--name", name, "--seats", "3", "--headless", *LO])
    try:
        _wait_until_listed(name, 1)
        _join_and_leave_the_lobby(name, "only", seats_before=1)  # the table still announced
        time.sleep(3)
        assert host.poll() is None, host.communicate()
        _wait_until_listed(name, 1)
    finally:
        host.kill()
        host.communicate()


def test_a_joiner_whose_machine_dies_in_the_lobby_frees_its_seat_for_a_newcomer() -> None:
    # kill -9 before the table is full: no goodbye. The host gave up on the table 15 s
    # later ("a peer went silent"), and started again it waited on the dead member for
    # ever. Now the seat is free once the silence bound (10 s) has passed, and the match
    # plays with whoever takes it.
    name = table_name()
    host = nerts(["host", "--name", name, "--seats", "3", "--rounds", "1", "--headless"]
                 + ["--json", *LO, *FAST])  # fmt: skip
    try:
        _wait_until_listed(name, 1)
        ghost = nerts(["join", name, "--as", "ghost", "--headless", *LO])
        _wait_until_listed(name, 2)
        ghost.kill()
        ghost.communicate()
        _wait_until_listed(name, 1)  # announced free again, after the bound
        joining = ["--headless", "--json", "--rounds", "1", *LO, *FAST_JOIN]
        ann = nerts(["join", name, "--as", "ann", *joining])
        bob = nerts(["join", name, "--as", "bob", *joining])
        results = [finish(p) for p in (host, ann, bob)]
    finally:
        host.kill()
        host.communicate()
    for code, _, err in results:
        assert code == 0, err
    lines = [out.splitlines() for _, out, _ in results]
    assert lines[0] == lines[1] == lines[2]
    assert len(json.loads(lines[0][0])["seats"]) == 3  # the host, ann and bob


def test_joiners_racing_for_the_last_seats_leave_the_table_playing(tmp_path: Path) -> None:
    # ann and bob, each with a bot, ask for a 3-seat table's 2 free seats at once: one is
    # refused (its announcement says full), or the host lets all four in and the round
    # begins without one of them. The one turned away used to take its seated bot and its
    # place at the next round with it, silent, and the table gave up on them.
    name = table_name()
    host = nerts(
        ["host", "--name", name, "--seats", "3", "--rounds", "2", "--headless", "--json"]
        + [*FAST, *LO, *PATIENT]
    )
    _wait_until_listed(name, 1)
    joining = ["--headless", "--json", *FAST_JOIN, *LO, *PATIENT]
    ann = nerts(["join", name, "--as", "ann", "--bots", "1", *joining])
    bob = nerts(["join", name, "--as", "bob", "--bots", "1", *joining])
    (code, out, err), *guests = finish(host), finish(ann), finish(bob)
    assert code == 0, err
    assert len(out.splitlines()) == 3  # two rounds and the match
    for guest_code, guest_out, guest_err in guests:
        if guest_code == 0:
            assert guest_out.splitlines() == out.splitlines()
        else:
            assert "full" in guest_err, guest_err
