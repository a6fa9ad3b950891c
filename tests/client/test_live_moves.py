"""`LiveMoves`: what a spectator prints without --json, from its replica's fold."""

from __future__ import annotations

from client.netplay import LiveMoves, Printer
from client.table_text import seats_text, step_text
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import TableReplica
from tools.mesh import PeerMesh


def _played(rounds: int) -> TableReplica:
    mesh = PeerMesh(players=2, rules=Rules(seats=2, nerts_size=5), seed=4, pace=0.1)
    mesh.run(until=900, rounds=rounds)
    return mesh.replicas[1]


def _as_replay_prints(replica: TableReplica, numbers: list[int]) -> list[str]:
    lines = []
    for number in numbers:
        rnd = replica.rounds[number]
        lines.append(f"round {number} begins: {seats_text(replica, rnd)}")
        lines += [line for line in map(step_text, rnd.steps) if line is not None]
    return lines


def test_each_move_is_printed_once_as_the_stable_prefix_grows() -> None:
    replica = _played(1)
    rnd = replica.rounds[1]
    stable = rnd.announced_stable
    live = LiveMoves(Printer(json=False))
    rnd.announced_stable = stable // 2  # as it stood mid-round
    live.show(replica)
    live.show(replica)  # no news: nothing printed again
    rnd.announced_stable = stable
    live.show(replica)
    live.finish(replica, 1)
    assert live.printer.lines == _as_replay_prints(replica, [1])


def test_a_late_spectator_prints_the_rounds_it_caught_up_with_in_order() -> None:
    # Caught up on rounds 1 and 2 at once: round 2's stable prefix is news before round 1
    # is final here, and its moves must still come after round 1's.
    replica = _played(2)
    live = LiveMoves(Printer(json=False))
    live.show(replica)  # the StableState of round 2, say: round 1 first all the same
    live.finish(replica, 1)
    live.printer.line("(round 1's summary)")
    live.show(replica)
    live.finish(replica, 2)
    lines = live.printer.lines
    summary = lines.index("(round 1's summary)")
    assert lines[:summary] == _as_replay_prints(replica, [1])
    assert lines[summary + 1 :] == _as_replay_prints(replica, [2])


def test_a_round_begun_again_after_a_void_is_printed_from_its_start() -> None:
    replica = _played(1)
    live = LiveMoves(Printer(json=False))
    live.show(replica)
    live.voided(1)
    live.show(replica)
    lines = live.printer.lines
    header = lines[0]
    assert lines.count(header) == 2
    assert "begins again" in lines[lines.index(header, 1) - 1]
    live.voided(2)  # a round it is not printing: nothing to say
    assert live.printer.lines == lines


def test_partners_are_both_named_at_their_seat() -> None:
    # Two players per seat: the second partner's name used to overwrite the first's.
    mesh = PeerMesh(
        players=4, rules=Rules(seats=2, nerts_size=5, partnerships=True), seed=5, pace=0.1
    )
    mesh.run(until=900, rounds=1)
    replica = mesh.replicas[0]
    rnd = replica.rounds[1]
    text = seats_text(replica, rnd)
    for author in rnd.seat_of:
        assert replica.sync.members[author].name in text
    assert text.count(" & ") == 2
