"""The bots a window seats, in a process of their own.

Each bot is a peer like any other: its own key, socket, `TableNode` and replica, an
`Autopilot` playing it. A bot's replica verifies and folds every op of the table, so eight
seats in the window's own process meant eight replicas' work in every frame. They run
instead in one child process (`python -m client.window.bot_house`) on the same machine,
talking to the window's node over UDP on the table's interface (127.0.0.1 for practice):
the window's process folds each op once, in its own replica, as at any network table.

The window speaks to the child through its standard streams, one line each way:

- stdin: a first line of JSON (`BotHouseConfig`), then `add` or `remove` per line. When the
  window closes the pipe (it left, or it died) every bot sends its LEAVE, serves the table
  `LINGER` seconds more, and the process ends.
- stdout: JSON lines, `{"seated": key id hex, "name": ...}` once a bot exists,
  `{"gone": key id hex}` once a removed one has left, `{"problem": sentence}` if one could
  not be seated.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import trio

from nerts_p2p.game.bots import BotPlayer, level_named
from nerts_p2p.game.errors import NertsError
from nerts_p2p.net.autopilot import Autopilot
from nerts_p2p.net.node import Leave, TableNode
from nerts_p2p.net.transport import open_udp_transport
from nerts_p2p.table.replica import TableReplica
from protocol.messages import PLAYER
from protocol.signing import SigningKeyPair, generate_signing_key

#: Seconds a bot keeps serving the table after its LEAVE (the others get it).
LINGER = 1.0
#: Seconds after a round is dealt before the bots' first move (the "Go").
GO_DELAY = 1.5
#: The longest the window waits for the child to end once it closed the pipe.
EXIT_WAIT = LINGER + 3.0


@dataclass(frozen=True)
class BotHouseConfig:
    """What the child needs to seat bots at one table."""

    interface: str
    table: bytes
    host: bytes  # the host's key id (the joiners ask it for the OPEN)
    address: tuple[str, int]  # the host's node
    level: str
    #: A private table's key (from its passphrase): bots need it to be let in.
    table_key: bytes | None = None
    #: A practice table's seed: the same seed deals the same game (keys, deal seeds and
    #: the bots' choices all come from it). None: fresh randomness.
    seed: str | None = None
    #: The bots' thinking times are multiplied by this (1: a person's pace; tests: fast).
    pace: float = 1.0

    def to_line(self) -> bytes:
        data = {
            "interface": self.interface,
            "table": self.table.hex(),
            "host": self.host.hex(),
            "address": list(self.address),
            "level": self.level,
            "table_key": self.table_key.hex() if self.table_key is not None else None,
            "seed": self.seed,
            "pace": self.pace,
        }
        return (json.dumps(data) + "\n").encode()

    @classmethod
    def from_line(cls, line: str) -> BotHouseConfig:
        data = json.loads(line)
        key = data["table_key"]
        host, port = data["address"]
        return cls(
            interface=str(data["interface"]),
            table=bytes.fromhex(data["table"]),
            host=bytes.fromhex(data["host"]),
            address=(str(host), int(port)),
            level=str(data["level"]),
            table_key=bytes.fromhex(key) if key is not None else None,
            seed=data["seed"] if data["seed"] is None else str(data["seed"]),
            pace=float(data.get("pace", 1.0)),
        )


def seeded_bytes(label: str) -> Callable[[int], bytes]:
    """Deterministic bytes for a seeded table (the same label, the same bytes)."""
    import hashlib

    counter = 0

    def draw(n: int) -> bytes:
        nonlocal counter
        out = b""
        while len(out) < n:
            counter += 1
            out += hashlib.sha256(f"nerts-practice/{label}/{counter}".encode()).digest()
        return out[:n]

    return draw


# --- the child process ------------------------------------------------------------------------


@dataclass
class _Bot:
    node: TableNode
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)


class BotHouse:
    """The child's side: seats and unseats bots as the window asks."""

    def __init__(self, config: BotHouseConfig, say: Callable[[dict[str, object]], None]) -> None:
        self.config = config
        self.say = say
        self.level = level_named(config.level)
        self.bots: list[_Bot] = []
        self.made = 0

    def _key_and_randomness(self, index: int) -> tuple[SigningKeyPair, Callable[[int], bytes]]:
        if self.config.seed is None:
            return generate_signing_key(), os.urandom
        draw = seeded_bytes(f"{self.config.seed}/bot/{index}")
        return SigningKeyPair(draw(32)), draw

    async def run_bot(self, index: int) -> None:
        config = self.config
        try:
            transport = await open_udp_transport(config.interface)
        except (NertsError, OSError) as exc:
            self.say({"problem": f"no bot could be seated: {exc}"})
            return
        name = f"{self.level.name} bot {index}"
        key, randomness = self._key_and_randomness(index)
        replica = TableReplica.joining(
            key, config.table, name=name, role=PLAYER, randomness=randomness
        )
        if config.table_key is not None:
            replica.use_table_key(config.table_key)
        node = TableNode(replica, transport, bootstrap=config.address, table_host=config.host)
        node.events.close()  # nobody reads a bot's events
        seed = config.seed if config.seed is not None else os.urandom(8).hex()
        player = BotPlayer(self.level, -1, random.Random(f"{seed}/bot/{index}"))
        bot = _Bot(node)
        self.bots.append(bot)
        self.say({"seated": replica.me.hex(), "name": name})
        try:
            with bot.scope:
                async with trio.open_nursery() as nursery:
                    await nursery.start(node.run)
                    await Autopilot(
                        node, player, pace=config.pace, go_delay=GO_DELAY * config.pace
                    ).run()
                    node.apply_intent(Leave())  # the match is over for it
                    await trio.sleep_forever()
        finally:
            transport.close()
            if bot in self.bots:
                self.bots.remove(bot)
            self.say({"gone": replica.me.hex()})

    def remove(self) -> None:
        """The last bot seated leaves the table (a LEAVE), then stops."""
        if not self.bots:
            return
        bot = self.bots.pop()
        if bot.node.replica.is_member:
            bot.node.apply_intent(Leave())
        bot.scope.deadline = trio.current_time() + LINGER

    def farewell(self) -> None:
        for bot in self.bots:
            replica = bot.node.replica
            member = replica.sync.members.get(replica.me)
            if replica.is_member and member is not None and not member.left:
                bot.node.apply_intent(Leave())


async def serve_bots(config: BotHouseConfig, commands: trio.abc.ReceiveChannel[str]) -> None:
    """Seat and unseat bots as `commands` say, until they end; then goodbye."""

    def say(message: dict[str, object]) -> None:
        try:
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()
        except (BrokenPipeError, ValueError):
            pass  # the window is gone: the bots leave when its pipe closes

    house = BotHouse(config, say)
    async with trio.open_nursery() as nursery:
        async for command in commands:
            if command == "add":
                house.made += 1
                nursery.start_soon(house.run_bot, house.made)
            elif command == "remove":
                house.remove()
        house.farewell()
        await trio.sleep(LINGER)
        nursery.cancel_scope.cancel()


async def _child_main() -> None:
    stdin = trio.wrap_file(sys.stdin)
    first = await stdin.readline()
    if not first:
        return
    config = BotHouseConfig.from_line(first)
    send, receive = trio.open_memory_channel[str](64)

    async def read_commands() -> None:
        async with send:
            while line := await stdin.readline():
                await send.send(line.strip())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(read_commands)
        await serve_bots(config, receive)


# --- the window's side ------------------------------------------------------------------------


class BotSeats:
    """The window's handle on its bot process: asks for bots, knows which members they are.

    `add` and `remove` are synchronous (the lobby's buttons); `run` starts the process and
    passes the requests on, and `close` lets the bots say goodbye."""

    def __init__(self, config: BotHouseConfig) -> None:
        self.config = config
        #: Key ids of the bots the child has made and not yet seen go.
        self.seated: set[bytes] = set()
        #: Bots asked for and not removed (the lobby's count, before they are seated).
        self.count = 0
        self.problems: list[str] = []
        self._send, self._requests = trio.open_memory_channel[bytes](64)
        self._process: trio.Process | None = None
        self._closing = False
        #: The process ended without being asked to (it crashed, or was killed).
        self.stopped = False
        self.done = trio.Event()

    def add(self) -> None:
        self.count += 1
        self._request(b"add\n")

    def remove(self) -> None:
        if self.count > 0:
            self.count -= 1
            self._request(b"remove\n")

    def _request(self, line: bytes) -> None:
        try:
            self._send.send_nowait(line)
        except (trio.WouldBlock, trio.ClosedResourceError):
            self.problems.append("the bots did not hear the request: try again")

    def close(self) -> None:
        """No more requests: the process's stdin closes once the queued ones are sent."""
        self._closing = True
        self._send.close()

    async def run(self) -> None:
        """Run the child until `close` (then wait for it to end, at most `EXIT_WAIT`)."""
        command = [sys.executable, "-m", "client.window.bot_house"]
        try:
            process = await trio.lowlevel.open_process(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
        except OSError as exc:
            self.problems.append(f"the bots could not be started: {exc.strerror or exc}")
            self.done.set()
            return
        self._process = process
        assert process.stdin is not None
        assert process.stdout is not None
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._read, process.stdout, nursery.cancel_scope)
                try:
                    await process.stdin.send_all(self.config.to_line())
                    async for line in self._requests:
                        await process.stdin.send_all(line)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    pass
                await process.stdin.aclose()
                with trio.move_on_after(EXIT_WAIT):
                    await process.wait()
                nursery.cancel_scope.cancel()
        finally:
            if process.returncode is None:
                process.kill()
            with trio.CancelScope(shield=True):
                await process.wait()
            self.done.set()

    async def _read(self, stream: trio.abc.ReceiveStream, scope: trio.CancelScope) -> None:
        buffer = b""
        try:
            async for chunk in stream:
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    self._on_line(line)
        except trio.BrokenResourceError:
            pass
        if not self._closing:  # its output ended before we let it go: it is gone
            self.stopped = True
            self.seated.clear()
            self.problems.append("the bots' process stopped: its bots have left the table")
            scope.cancel()

    def _on_line(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        if "seated" in message:
            self.seated.add(bytes.fromhex(str(message["seated"])))
        elif "gone" in message:
            self.seated.discard(bytes.fromhex(str(message["gone"])))
        elif "problem" in message:
            self.problems.append(str(message["problem"]))

    @property
    def exit_code(self) -> int | None:
        """The process's exit status once it has ended (0: it ended by itself)."""
        return self._process.returncode if self._process is not None else None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None


if __name__ == "__main__":
    trio.run(_child_main)
