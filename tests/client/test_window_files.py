"""Settings and replay files: they round-trip, and damaged ones are refused in plain words."""

from __future__ import annotations

import getpass
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from client.window.replay_file import (
    Replay,
    ReplayError,
    ReplayMove,
    ReplayRound,
    load_replay,
    replay_from_json,
    replay_to_json,
)
from client.window.replay_screen import ReplayPlayer
from client.window.settings import (
    SEAT_COLOURS,
    Settings,
    load_settings,
    save_settings,
    seat_colours,
)
from nerts_p2p.game.cards import make_card, parse_face
from nerts_p2p.game.deck import deal_seat
from nerts_p2p.game.moves import parse_move
from nerts_p2p.game.rules import Rules

ROOT = Path(__file__).resolve().parents[2]


def test_settings_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "settings.json"
    settings = Settings(name="Kim", colour=3, four_colour=True, high_contrast=True, sound=False)
    assert save_settings(settings, path) == ""
    assert load_settings(path) == (settings, "")


def test_missing_settings_are_the_defaults(tmp_path: Path) -> None:
    assert load_settings(tmp_path / "none.json") == (Settings(), "")


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", "\udcff"])
def test_damaged_settings_give_defaults_and_say_so(tmp_path: Path, content: str) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    settings, problem = load_settings(path)
    assert settings == Settings()
    assert "using defaults" in problem


def test_settings_values_are_put_back_in_range(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(
        json.dumps(
            {
                "name": "  a   very long name that goes on and on  ",
                "colour": 11,
                "width": 5,
                "height": 99999,
                "sound": "yes",
                "four_colour": 1,
            }
        )
    )
    settings, problem = load_settings(path)
    assert problem == ""
    assert settings.name == "a very long name that go"
    assert settings.colour == 11 % len(SEAT_COLOURS)
    assert (settings.width, settings.height) == (640, 2160)
    assert settings.sound is True
    assert settings.four_colour is False


def test_a_settings_name_is_cut_to_what_the_wire_takes(tmp_path: Path) -> None:
    # 24 letters with accents are 48 bytes: more than a JOIN carries (32). An escape
    # sequence typed or pasted into the file is no part of a name.
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"name": "\x1b[31m" + "é" * 24}), encoding="utf-8")
    settings, problem = load_settings(path)
    assert problem == ""
    assert settings.name == "[31m" + "é" * 14
    assert len(settings.name.encode()) <= 32


def test_unwritable_settings_say_why(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    problem = save_settings(Settings(), blocker / "settings.json")
    assert "could not be saved" in problem


def test_seat_colours_give_our_colour_to_our_seat_and_distinct_ones_to_others() -> None:
    for mine in range(len(SEAT_COLOURS)):
        for seat in range(8):
            colours = seat_colours(mine, 8, seat)
            assert colours[seat] == SEAT_COLOURS[mine]
            assert len(set(colours)) == 8
    assert len(set(seat_colours(2, 8, None))) == 8


def _replay() -> Replay:
    rules = Rules(seats=2)
    shown = []
    for seat in range(2):
        deal = deal_seat(rules, seat, bytes([seat + 1]) * 32)
        shown.append((deal.nerts[-1], *deal.work))
    rnd = ReplayRound(
        1,
        tuple(tuple(c for c in s) for s in shown),
        (ReplayMove(0.5, parse_move("0 turn +5H+6H+7H"), False),),
        None,
    )
    return Replay(rules, ("Ann", "Bob"), (rnd,))


def test_replay_json_round_trip() -> None:
    replay = _replay()
    again = replay_from_json(replay_to_json(replay))
    assert again == replay


@pytest.mark.parametrize(
    ("mangle", "words"),
    [
        (lambda d: "not json at all", "not JSON"),
        (lambda d: {**d, "format": "other"}, "not a nerts-p2p replay"),
        (lambda d: {**d, "version": 99}, "version 99"),
        (lambda d: {**d, "rules": {"seats": 9}}, "rules are not valid"),
        (lambda d: {**d, "names": ["only one"]}, "a name for each"),
        (lambda d: {**d, "rounds": []}, "no rounds"),
        (lambda d: _round(d, shown=[["ZZ"], ["5H"]]), "is not a card"),
        (lambda d: _round(d, moves=[[0.1, "0 fly", False]]), "move 1"),
        (lambda d: _round(d, moves=[[0.1, "5 turn", False]]), "no seat 5"),
        (lambda d: _round(d, moves=[["soon", "0 turn", False]]), "expected [seconds"),
        (lambda d: _round(d, result={"scores": []}), "one score per seat"),
    ],
)
def test_damaged_replays_are_refused_in_words(mangle: object, words: str) -> None:
    document = json.loads(replay_to_json(_replay()))
    mangled = mangle(document)  # type: ignore[operator]
    text = mangled if isinstance(mangled, str) else json.dumps(mangled)
    with pytest.raises(ReplayError, match=re.escape(words)):
        replay_from_json(text)


def _round(document: dict[str, object], **changes: object) -> dict[str, object]:
    rounds = document["rounds"]
    assert isinstance(rounds, list)
    return {**document, "rounds": [{**rounds[0], **changes}]}


def test_a_replay_that_is_not_a_file_or_not_text(tmp_path: Path) -> None:
    with pytest.raises(ReplayError, match="cannot read"):
        load_replay(tmp_path / "missing.json")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ReplayError, match="not text"):
        load_replay(binary)


def test_replay_player_steps_speeds_and_picks_rounds() -> None:
    replay = _replay()
    replay = Replay(
        replay.rules,
        replay.names,
        (*replay.rounds, replay.rounds[0]._replace() if False else replay.rounds[0]),
    )
    player = ReplayPlayer(replay)
    assert player.position == 0
    assert player.moves == 1
    player.advance(0.4)
    assert player.position == 0
    player.advance(0.2)
    assert player.position == 1
    assert player.finished
    assert len(player.state.seats[0].waste) == 3
    player.step(-1)
    assert player.paused
    assert player.position == 0
    player.advance(5.0)
    assert player.position == 0, "paused"
    player.faster(True)
    assert player.speed == 2.0
    player.faster(False)
    player.faster(False)
    assert player.speed == 0.5
    player.pick_round(1)
    assert player.round_index == 1
    assert player.position == 0
    player.pick_round(7)
    assert player.round_index == 1
    assert make_card(0, parse_face("5H")) in player._states[1].seats[0].waste


def test_window_without_a_display_says_so_and_plays_in_the_terminal(tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER")
    }
    env["NERTS_P2P_CONFIG_DIR"] = str(tmp_path)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "client.cli",
            "window",
            "--practice",
            "--players",
            "3",
            "--seed",
            "4",
        ],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    first, *rest = result.stdout.splitlines()
    assert first.startswith("nerts-p2p: no display")
    assert first.endswith("in the terminal instead")
    assert any(line.startswith("Round over") for line in rest)
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "words"), [(["--players", "9"], "2..8"), (["--level", "godlike"], "unknown bot level")]
)
def test_window_usage_errors(args: list[str], words: str) -> None:
    from client.cli import main

    assert main(["window", *args]) == 2


@pytest.mark.parametrize(
    ("login", "name"),
    [
        ("kim", "kim"),
        ("jo\x1b[31mker", "jo[31mker"),  # another user's chosen name: made printable
        ("a" * 40, "a" * 24),
        ("   ", "player"),
        (OSError("no user database entry"), "player"),
    ],
)
def test_a_new_player_is_named_after_the_login_not_you(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, login: str | OSError, name: str
) -> None:
    # With "you" for everyone, friends at one table all read as "you" to each other, and
    # the host screen offered "you's table".
    def getuser() -> str:
        if isinstance(login, OSError):
            raise login
        return login

    monkeypatch.setattr(getpass, "getuser", getuser)
    assert Settings().name == name
    assert load_settings(tmp_path / "none.json")[0].name == name
    assert Settings(name="  ").cleaned().name == name  # a name cleared in the file
