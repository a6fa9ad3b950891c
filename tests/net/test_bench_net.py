"""`nerts-p2p bench net`'s player processes: what the latency figure is made of is real play.

The benchmark's figures are measured by the command, never here; this only checks that its
players play a whole round through the product's path (their stores included) and that
every move one of them authors is folded by the other."""

from __future__ import annotations

import pytest

from protocol.admission import MAX_SPECTATORS
from tools.bench_net import _run_players, _timed_folds, udp_catch_up_benchmarks

pytestmark = pytest.mark.slow


def test_two_bench_players_fold_every_move_the_other_authored_storing_their_own() -> None:
    results = _run_players(seed=3, players=2)
    assert len(results) == 2
    for me, other in (results, results[::-1]):
        authored = {(author, seq) for author, seq, _signing, _played in other["authored"]}
        folded = {(author, seq) for author, seq, _time, _spent in me["folded"]}
        assert authored, "a bot played no move in a whole round"
        assert authored <= folded, "a move its author sent never reached the other player"
        assert other["stored_ops"] == other["own_ops"], "a player's store lacks ops it sent"
        for _author, _seq, signing, played in other["authored"]:
            # Signed, stored (fsynced) and sent, then folded by its author: later, not before.
            assert played >= signing


def test_each_fold_is_timed_from_its_signing_and_ranked_by_when_its_receiver_folded_it() -> None:
    # Two players' results as their processes print them: "a" authored seq 1 (signing at
    # 10.0, its play returned at 10.1); "b", "c" and "d" folded it at 10.5, 10.3 and 10.9.
    results = [
        {"authored": [["a", 1, 10.0, 10.1]], "folded": [["x", 9, 11.0, 0.1]]},
        {"authored": [], "folded": [["a", 1, 10.5, 0.2]]},
        {"authored": [], "folded": [["a", 1, 10.3, 0.1]]},
        {"authored": [], "folded": [["a", 1, 10.9, 0.3]]},
    ]
    timed = _timed_folds(results)
    # the fold of a move nobody here authored ("x") is not timed
    assert sorted((round(t, 6), round(p, 6), s, rank) for t, p, s, rank in timed) == [
        (0.3, 0.2, 0.1, 0),
        (0.5, 0.4, 0.2, 1),
        (0.9, 0.8, 0.3, 2),
    ]


def test_the_catch_up_measure_takes_more_late_spectators_than_a_table_lets_watch_at_once() -> None:
    # A table lets 8 watch at once and a spectator says no goodbye, so the 9th late
    # spectator of one served round was refused, and the benchmark waited a minute for a
    # catch-up that never came. Each served round now takes 8, the next ones find another.
    results = udp_catch_up_benchmarks(MAX_SPECTATORS + 1)
    cpu = results["UDP catch-up, this process's CPU (ms)"]
    assert cpu["runs"] == MAX_SPECTATORS + 1
    assert 0 < cpu["min"] <= cpu["max"]
