"""Fault schedules the fuzzer found (`nerts-p2p fuzz link --cases 60 --seed 4100`), kept as
the cases they were: what main does with each now."""

from __future__ import annotations

from protocol.departure import has_quorum
from protocol.messages import Kind
from tools.fuzz.link import LinkCase, run_link
from tools.fuzz.schedule import Fault, Schedule
from tools.fuzz.table import TableConfig


def _case(seed: int, heal_at: float, *faults: Fault) -> LinkCase:
    config = TableConfig(players=3, nerts_size=6, rounds=1, level="casual", seed=seed)
    return LinkCase(config, Schedule(seed, faults, heal_at))


def test_two_players_restarted_while_the_third_played_on_get_each_others_ops_and_finish() -> None:
    # Peer 0 cut off for 5.5 s; meanwhile 1 and 2 play on between themselves, then each
    # restarts from its store. Each one's own ops wait for ops of the other that only the
    # other holds, and 0's heartbeats name neither: both stayed quiet for ever (the round
    # never ended, and 2 held an op nobody else had).
    case = _case(
        4100,
        10.968,
        Fault("partition", 2.959, 8.423, (0,)),
        Fault("restart", 6.036, 9.108, (2,)),
        Fault("restart", 7.072, 10.968, (1,)),
    )
    table = run_link(case)
    assert [p.to_json() for p in table.problems] == []
    assert all(1 in peer.finals for peer in table.peers)


def test_a_round_no_quorum_can_end_any_more_is_not_called_stuck() -> None:
    # Peer 2 stops for 12 s (past the silence bound): the others vote it out of the round;
    # then peer 1 is killed. Peer 0 is the only one still in the round: no quorum of its
    # three participants, so it cannot vote 1 out, as the lone side of a split must not
    # (PROTOCOL.md 13.3). The round waits by design; the checker called it stuck (`fuzz
    # link` seeds 4124 and 4131 came to this through a clock jump, 5057 and 5092 through
    # two players that suspected each other, then the third killed).
    case = _case(7, 20.0, Fault("pause", 3.0, 15.0, (2,)), Fault("kill", 20.0, 20.0, (1,)))
    table = run_link(case)
    assert [p.to_json() for p in table.problems] == []
    live = [p for p in table.peers if p.alive]
    assert [p.index for p in live] == [0, 2]
    assert not any(1 in peer.finals for peer in live)  # it waits: nobody can end it
    log = live[0].replica.sync.epochs[1]
    assert set(log.departed_at) == {table.peers[2].replica.me}
    still_in = {live[0].replica.me}
    assert not has_quorum(log.participants, still_in)


def test_a_round_whose_last_two_players_voted_each_other_out_is_not_called_stuck() -> None:
    # Peer 1's clock jumps 25 s ahead: it hears nobody for 25 s and votes both others out.
    # Then it is cut off, and peer 2 is killed before anyone agrees: peer 0 votes 1 (and 2)
    # out. Votes are never withdrawn, so 0 and 1, each of whom voted the other out, are two
    # sides of a split that neither can win: the round waits by design.
    case = _case(
        7,
        18.0,
        Fault("skew", 5.0, 5.5, (1,), 25.0),
        Fault("partition", 6.0, 18.0, (1,)),
        Fault("kill", 14.0, 14.0, (2,)),
    )
    table = run_link(case)
    assert [p.to_json() for p in table.problems] == []
    live = [p for p in table.peers if p.alive]
    assert [p.index for p in live] == [0, 1]
    assert not any(1 in peer.finals for peer in live)
    me = [p.replica.me for p in table.peers]
    log = live[0].replica.sync.epochs[1]
    votes = {(op.author, op.payload[0]) for op in log.ops if op.kind == Kind.DEPART}
    assert {(me[0], me[1]), (me[1], me[0])} <= votes
    assert not log.departed_at
