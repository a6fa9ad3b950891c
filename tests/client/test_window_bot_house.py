"""The practice table over the real node on 127.0.0.1, its bots in a process of their own
(`client/window/bot_house.py`); run inside the suite's network namespace.

What a player notices: the bots sit down and play, the window's process holds one replica
(so its frame folds each op once, not once per seat), leaving ends the bots' process after
their goodbyes, and the same seed deals the same game."""

from __future__ import annotations

import gc
import os
import signal
from collections.abc import Callable

import trio

from client.window.bot_house import BotHouseConfig
from client.window.net_open import loopback_practice
from client.window.netsession import NetworkTable
from client.window.session import PLAYING
from nerts_p2p.game.bots import EXPERT
from nerts_p2p.game.position import state_hash
from nerts_p2p.table.replica import TableReplica

#: Bound of the waits (a broken test fails rather than hangs; not a speed check).
WAIT = 60.0


async def frames(table: NetworkTable, until: Callable[[], bool], what: str) -> None:
    with trio.move_on_after(WAIT) as scope:
        while not until():
            table.advance(trio.current_time())
            await trio.sleep(1 / 60)
    assert not scope.cancelled_caught, f"the practice table never got to: {what}"


def dealt(table: NetworkTable) -> Callable[[], bool]:
    return lambda: table.view().phase == PLAYING


def others_moved(table: NetworkTable) -> bool:
    rnd = table.replica.current_round
    if rnd is None:
        return False
    me = table.replica.me
    return any(step.op.author != me and step.move is not None for step in rnd.steps)


async def test_practice_bots_play_from_their_own_process_and_the_window_folds_each_op_once() -> (
    None
):
    gc.collect()
    before = {id(o) for o in gc.get_objects() if isinstance(o, TableReplica)}
    table = await loopback_practice(4, EXPERT, name="Ann", seed=3, bot_pace=0.2)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(table.serve)
        await frames(table, lambda: table.view().phase == PLAYING, "round 1 dealt")
        view = table.view()
        assert sorted(view.names) == ["Ann", "expert bot 1", "expert bot 2", "expert bot 3"]
        assert view.my_seat == view.names.index("Ann")
        rnd = table.replica.current_round
        assert rnd is not None
        bots = table.bots
        assert bots is not None
        assert bots.pid is not None
        assert bots.pid != os.getpid()
        # The three other seats are the members the bots' process made.
        assert bots.seated == set(rnd.seat_of) - {table.replica.me}
        await frames(table, lambda: others_moved(table), "a bot's move")
        # This process folds the table once: ours is the only replica it made.
        gc.collect()
        made = [o for o in gc.get_objects() if isinstance(o, TableReplica) and id(o) not in before]
        assert made == [table.replica]
        seated = set(bots.seated)
        table.leave()
        with trio.fail_after(WAIT):
            await table.done.wait()
            await bots.done.wait()
        assert bots.exit_code == 0, "the bots' process ended by itself, after its goodbyes"
        members = table.replica.sync.members
        assert all(members[bot].left for bot in seated), "every bot's LEAVE reached us"
        nursery.cancel_scope.cancel()


async def test_the_same_seed_deals_the_same_practice_game() -> None:
    deals = []
    for _ in range(2):
        table = await loopback_practice(3, EXPERT, name="Ann", seed=17, bot_pace=0.2)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(table.serve)
            await frames(table, dealt(table), "round 1 dealt")
            rnd = table.replica.current_round
            assert rnd is not None
            deals.append((state_hash(rnd.start_state), rnd.seat_of[table.replica.me]))
            table.leave()
            with trio.fail_after(WAIT):
                await table.done.wait()
    assert deals[0] == deals[1]


def test_the_bots_configuration_survives_its_trip_through_the_pipe() -> None:
    config = BotHouseConfig(
        interface="127.0.0.1",
        table=bytes(range(8)),
        host=bytes(range(8, 16)),
        address=("127.0.0.1", 40404),
        level="novice",
        table_key=b"k" * 32,
        seed="seed-4",
        pace=0.5,
    )
    assert BotHouseConfig.from_line(config.to_line().decode()) == config


async def test_a_practice_table_whose_bots_process_dies_says_so() -> None:
    table = await loopback_practice(2, EXPERT, name="Ann", bot_pace=0.2)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(table.serve)
        await frames(table, lambda: table.bots is not None and bool(table.bots.seated), "a bot")
        bots = table.bots
        assert bots is not None
        assert bots.pid is not None
        os.kill(bots.pid, signal.SIGKILL)
        await frames(table, lambda: table.problem is not None, "the problem said")
        assert table.problem == "the bots' process stopped: the practice table cannot go on"
        assert bots.exit_code == -signal.SIGKILL
        table.leave()
        with trio.fail_after(WAIT):
            await table.done.wait()
        nursery.cancel_scope.cancel()
