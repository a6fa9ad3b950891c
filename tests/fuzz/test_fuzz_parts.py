"""The fuzzer's parts: schedules, shrinking, invariants, mutations, target safety."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest

from client.cli import main
from nerts_p2p.game.engine import omniscient_start
from nerts_p2p.game.rules import Rules
from protocol.errors import DropReason
from tools.fuzz.campaign import Progress
from tools.fuzz.invariants import conservation_problems
from tools.fuzz.mutate import Mutator
from tools.fuzz.schedule import ALL_KINDS, DEFAULT_KINDS, Fault, Schedule, ScheduleShape, generate
from tools.fuzz.shrink import ddmin
from tools.fuzz.table import FuzzTable, TableConfig
from tools.fuzz.udp import growth_problems, parse_target


def test_a_schedule_is_a_function_of_its_seed_and_survives_json() -> None:
    shape = ScheduleShape(peers=4, count=12, kinds=ALL_KINDS)
    schedule = generate(7, shape)
    assert schedule == generate(7, shape)
    assert schedule != generate(8, shape)
    assert Schedule.from_json(schedule.to_json()) == schedule
    assert schedule.heal_at == max(f.start if f.kind == "kill" else f.end for f in schedule.faults)


def test_default_schedules_kill_and_restart_peers_now_that_main_survives_both() -> None:
    kinds = {f.kind for seed in range(30) for f in generate(seed, ScheduleShape(peers=3)).faults}
    assert kinds <= set(DEFAULT_KINDS)
    assert "kill" in kinds
    assert "restart" in kinds


def test_an_unknown_fault_kind_in_a_finding_is_refused_in_plain_words() -> None:
    with pytest.raises(ValueError, match="unknown fault kind 'meteor'"):
        Schedule.from_json({"seed": 1, "faults": [{"kind": "meteor", "start": 0, "end": 1}]})


def test_ddmin_finds_the_one_item_that_matters_and_keeps_only_it() -> None:
    calls: list[int] = []

    def fails(items: list[int]) -> bool:
        calls.append(1)
        return 13 in items and 29 in items

    assert sorted(ddmin(list(range(40)), fails, budget=200)) == [13, 29]


def test_conservation_names_a_card_in_two_places() -> None:
    rules = Rules(seats=2, nerts_size=6)
    state = omniscient_start(rules, [bytes(32), bytes([1]) * 32])
    assert conservation_problems(state) == []
    seat = state.seats[0]
    doubled = seat._replace(waste=(seat.work[0][-1],))
    broken = state._replace(seats=(doubled, state.seats[1]))
    problems = conservation_problems(broken)
    assert any("two places" in p for p in problems)
    assert any("add up to" in p for p in problems)


def test_every_mutator_makes_datagrams_the_gate_refuses_without_raising() -> None:
    table = FuzzTable(TableConfig(players=2, seed=3), Schedule(3))
    corpus: list[bytes] = []
    table.taps.append(lambda s, d, data: corpus.append(data))
    table.run_for(4.0)
    target = table.peers[1].replica
    before = target.sync.counters.as_dict()
    mutator = Mutator(random.Random(1), table.peers[0].key, table.table_id)
    for name, mutate in mutator.mutators:
        for datagram in corpus[:40]:
            try:
                mutated = mutate(datagram)
            except (ValueError, TypeError, IndexError, KeyError, OverflowError):
                continue
            if mutated is not None:
                target.receive(mutated, f"fuzz-{name}", table.now)  # must not raise
    after = target.sync.counters.as_dict()
    for reason in (
        DropReason.OVERSIZE,
        DropReason.MALFORMED,
        DropReason.SCHEMA,
        DropReason.WRONG_TABLE,
        DropReason.BAD_SIGNATURE,
        DropReason.REPLAYED,
    ):
        assert after[reason.value] > before[reason.value], reason


@pytest.mark.parametrize("target", ["10.0.0.1:9", "8.8.8.8:53", "[2001:db8::1]:9"])
def test_a_target_outside_loopback_is_refused_before_anything_is_sent(target: str) -> None:
    with pytest.raises(ValueError, match="not on loopback"):
        parse_target(target, allow_remote=False)


def test_a_target_given_by_name_is_refused_because_resolving_it_would_leave_the_machine() -> None:
    with pytest.raises(ValueError, match="give an IP address"):
        parse_target("example.com:9", allow_remote=False)
    assert parse_target("localhost:9", allow_remote=False) == ("127.0.0.1", 9)
    assert parse_target("[::1]:9", allow_remote=False) == ("::1", 9)


@pytest.mark.parametrize(
    "argv",
    [
        ["fuzz", "link", "--faults", "meteor"],
        ["fuzz", "hostile", "--adversaries", "dragon"],
        ["fuzz", "mutate", "--target", "192.168.1.1:4000"],
        ["fuzz", "mutate", "--target", "127.0.0.1:notaport"],
        ["fuzz", "replay"],
        ["fuzz", "link", "--players", "1"],
    ],
)
def test_bad_fuzz_arguments_are_usage_errors(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert "nerts-p2p:" in capsys.readouterr().err


def test_replaying_a_file_that_is_not_a_finding_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "x.json"
    path.write_text("[1, 2]")
    assert main(["fuzz", "replay", str(path)]) == 2
    assert "is not a fuzz finding" in capsys.readouterr().err


def test_a_local_targets_memory_or_queues_past_their_bounds_are_growth_findings() -> None:
    quiet = {"rss_start_mb": 80.0, "rss_max_mb": 95.0, "queues_max": {"pending": 4096}}
    assert growth_problems(quiet, 1.0) == []
    leaking = {"rss_start_mb": 80.0, "rss_max_mb": 400.0, "queues_max": {"pending": 4097}}
    found = growth_problems(leaking, 1.0)
    assert [p.kind for p in found] == ["growth", "growth"]
    assert "grew by 320 MB" in found[0].detail
    assert "pending queue reached 4097 > 4096" in found[1].detail


def test_a_lag_fault_slows_one_peers_link_to_some_others_only() -> None:
    shape = ScheduleShape(peers=4, count=1, kinds=("lag",))
    (fault,) = generate(3, shape).faults
    slow, *slowed = fault.peers
    assert slow not in slowed
    assert 1 <= len(slowed) <= 3
    assert 0.2 <= fault.value <= 1.2
    assert Schedule.from_json(generate(3, shape).to_json()).faults == (fault,)


def test_generated_schedules_kill_only_a_minority_of_the_players() -> None:
    """A departure needs a quorum (PROTOCOL.md 13): with a majority killed the survivors
    rightly never finish, which is no finding."""
    for peers in (3, 4, 5):
        shape = ScheduleShape(peers=peers, count=12, kinds=("kill",))
        for seed in range(20):
            killed = [f.peers[0] for f in generate(seed, shape).faults]
            assert len(killed) == len(set(killed)) <= (peers - 1) // 2
            assert 0 not in killed  # the host opens the table and starts rounds


def test_a_rejected_op_past_its_authors_expulsion_is_no_split() -> None:
    """Found by the 1,000,000-datagram campaign (seed 1003): a peer had rejected a puppet's
    op 5 while the others delivered a valid op 5, but every peer had expelled the puppet from
    seq 2. Which twin a peer holds past an expulsion changes nothing, so it is no finding;
    the same rejection of an author still in good standing is one."""
    from tools.fuzz.link import check

    table = FuzzTable(TableConfig(players=3, nerts_size=6, rounds=1, seed=5), Schedule(seed=5))
    table.run(until=3.0)
    rejecting, holder, *_ = table.honest_live()
    author = rejecting.replica.sync.me
    seq = holder.replica.sync.delivered(author)
    assert seq >= 2
    rejecting.replica.sync.dead[author] = seq
    check(table)
    assert [p.kind for p in table.problems] == ["split_by_invalid_twin"]

    table.problems.clear()
    rejecting.replica.sync.expelled[author] = seq - 1
    check(table)
    assert "split_by_invalid_twin" not in [p.kind for p in table.problems]


def test_a_long_case_label_is_cut_visibly_on_a_progress_line_of_its_own() -> None:
    stream = io.StringIO()
    progress = Progress(2, stream, live=False)
    progress.update("hostile datagram_flooder: detected in 0.12s; contained, every peer agreed", 0)
    progress.update("link: seed 3", 1)
    long_line, short_line = stream.getvalue().splitlines()
    assert "datagram_flooder: detected in 0.12s; ... findings" in long_line
    assert long_line.endswith("findings: 0")
    assert len(long_line) <= 100
    assert "link: seed 3 " in short_line
    assert short_line.endswith("findings: 1")


def test_a_skewed_clock_jumps_ahead_and_never_back() -> None:
    # The node reads a monotonic clock. A skew that ended by jumping back froze the peer's
    # time (the replica keeps the latest time it was given) for as long as the jump: its
    # heartbeats stopped while it played on, and the checker took the ops it had not yet
    # announced for a split (`fuzz link` seed 5095).
    schedule = Schedule(1, (Fault("skew", 2.0, 3.0, (1,), 14.0),), 3.0)
    table = FuzzTable(TableConfig(players=2, seed=1), schedule)
    readings = []
    for now in (1.0, 2.5, 3.5, 40.0):
        table.now = now
        readings.append((table.local_now(0), table.local_now(1)))
    assert readings == [(1.0, 1.0), (2.5, 16.5), (3.5, 17.5), (40.0, 54.0)]
