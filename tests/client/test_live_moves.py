"""`LiveMoves`: what a spectator prints without --json, from its replica's fold."""

from __future__ import annotations

from client.netplay import LiveMoves, Printer
from client.table_text import step_text
from nerts_p2p.game.rules import Rules
from tools.mesh import PeerMesh


def _played_round() -> PeerMesh:
    mesh = PeerMesh(players=2, rules=Rules(seats=2, nerts_size=5), seed=4, pace=0.1)
    mesh.run(until=600, rounds=1)
    return mesh


def test_each_move_is_printed_once_as_the_stable_prefix_grows() -> None:
    replica = _played_round().replicas[0]
    steps = replica.rounds[1].steps
    moves = [line for line in map(step_text, steps) if line is not None]
    live = LiveMoves(Printer(json=False))
    half = len(steps) // 2
    live.stable(replica, 1, half)
    live.stable(replica, 1, half)  # no news: nothing printed again
    live.stable(replica, 1, len(steps))
    lines = live.printer.lines
    assert lines[0].startswith("round 1 begins: seat 0 ")
    assert lines[1:] == moves  # every move, in the round's order, once


def test_a_round_begun_again_after_a_void_is_printed_from_its_start() -> None:
    replica = _played_round().replicas[1]
    live = LiveMoves(Printer(json=False))
    live.stable(replica, 1, 3)
    live.voided(1)
    live.stable(replica, 1, 3)
    lines = live.printer.lines
    header = lines[0]
    assert "begins again" in lines[lines.index(header, 1) - 1]
    assert lines.count(header) == 2
    live.voided(2)  # a round it never printed: nothing to say
    assert live.printer.lines == lines
