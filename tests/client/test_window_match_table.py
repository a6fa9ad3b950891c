"""The match table follows players when they come and go between rounds (pure, no window),
and the replay list names and opens network matches' signed logs, saying in plain words
what is wrong with a damaged one."""

from __future__ import annotations

from pathlib import Path

import pytest

from client.window.menus import replay_label
from client.window.replay_file import ReplayError
from client.window.round_end import match_rows
from client.window.session import RoundResult
from client.window.signed_replay import load_signed_replay
from nerts_p2p.game.scoring import SeatScore


def result(number: int, seated: list[tuple[bytes, str, int, int]]) -> RoundResult:
    """A round: per seat (player, name, round score, match total)."""
    return RoundResult(
        number,
        tuple(SeatScore(s, 0, 0, False, score) for s, (_, _, score, _) in enumerate(seated)),
        frozenset(),
        tuple(total for *_, total in seated),
        "nerts",
        0,
        None,
        tuple(p for p, *_ in seated),
        tuple(name for _, name, *_ in seated),
    )


def test_a_player_who_joins_or_leaves_between_rounds_keeps_its_own_line() -> None:
    ann, bob, cat = b"a" * 8, b"b" * 8, b"c" * 8
    results = (
        result(1, [(ann, "Ann", 10, 10), (bob, "Bob", -4, -4)]),
        # Bob left, Cat came, and Ann now sits at seat 1.
        result(2, [(cat, "Cat", 7, 7), (ann, "Ann", 5, 15)]),
    )
    rows = match_rows(results)
    assert [r.name for r in rows] == ["Ann", "Bob", "Cat"]
    ann_row, bob_row, cat_row = rows
    assert ann_row.scores == (10, 5)
    assert ann_row.totals == (10, 15)
    assert ann_row.seat == 1
    assert bob_row.scores == (-4, None), "Bob did not play round 2"
    assert bob_row.totals == (-4, -4), "his total stays where he left it"
    assert bob_row.seat is None
    assert cat_row.scores == (None, 7)
    assert cat_row.totals == (None, 7)
    assert cat_row.seat == 0


def test_results_without_players_count_seats_as_players() -> None:
    plain = RoundResult(1, (SeatScore(0, 3, 0, True, 3),), frozenset(), (3, 1), "nerts", 0, None)
    rows = match_rows((plain,))
    assert [(r.name, r.scores, r.totals) for r in rows] == [
        ("seat 1", (3,), (3,)),
        ("seat 2", (None,), (1,)),
    ]


def test_the_replay_list_names_a_network_match_by_table_and_time() -> None:
    log = Path("20261130-174500-kitchen-table-0011223344556677.nrp")
    assert replay_label(log) == "table kitchen-table, 2026-11-30 17:45"
    assert replay_label(Path("practice-20261130-174500.json")) == "practice-20261130-174500"


def test_a_damaged_signed_log_is_refused_in_plain_words(tmp_path: Path) -> None:
    garbage = tmp_path / "20261130-174500-x-0011223344556677.nrp"
    garbage.write_bytes(b"NRTS this is not a record file at all")
    with pytest.raises(ReplayError, match="damaged"):
        load_signed_replay(garbage)
    garbage.write_bytes(b"")
    with pytest.raises(ReplayError, match="is not a nerts-p2p replay"):
        load_signed_replay(garbage)
    with pytest.raises(ReplayError, match="does not exist"):
        load_signed_replay(tmp_path / "missing.nrp")
