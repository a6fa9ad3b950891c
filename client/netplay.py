"""Playing over the network from the command line: `host`, `join`, `spectate`, `list` and
`play --bots N`. A thin shell: it opens sockets, discovery and nodes, lets autopilots play
headless seats, and prints each final round the same way on every peer of the table.

Errors a user can meet are `NetPlayError`s with a plain sentence; the CLI prints them and
exits 1 (no table found, table full, protocol version mismatch, address in use, a peer gone
silent, the host not answering).
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
from collections.abc import Awaitable, Callable, Collection, Container, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

import trio

from nerts_p2p.game.bots import BotLevel, BotPlayer
from nerts_p2p.game.errors import NertsError
from nerts_p2p.game.rules import Rules
from nerts_p2p.net.autopilot import Autopilot
from nerts_p2p.net.discovery import TableAd, TableAnnouncer, TableBrowser, browse, same_name
from nerts_p2p.net.node import Leave, TableNode, VersionMismatch
from nerts_p2p.net.opening import kept_ops, open_table_node, rehosting_refusal, stored_table
from nerts_p2p.net.records import network_match_record, network_round_record
from nerts_p2p.net.replay import save_replay
from nerts_p2p.net.store import (
    DataDirInUseError,
    StoreError,
    TableHeader,
    TableStore,
    data_dir_lock,
    resumable_tables,
)
from nerts_p2p.net.transport import Address, AddressInUseError
from nerts_p2p.table.replica import (
    PeerExpelled,
    RoundFinal,
    RoundStarted,
    RoundVoided,
    StableState,
    TableReplica,
)
from nerts_p2p.table.round import ReplicatedRound
from nerts_p2p.table.status import (
    everyone_else_left,
    has_left,
    seats_taken,
    silences_counted,
    too_few_to_play_on,
    turned_away,
)
from protocol import admission
from protocol.admission import MAX_SPECTATORS, REFUSAL_WORDS, SPECTATOR_GONE, Refusal
from protocol.envelope import PROTOCOL_VERSION
from protocol.messages import PLAYER, SPECTATOR, fit_name, printable_name, quoted_name
from protocol.signing import SigningKeyPair

from .table_text import seats_text, step_text

#: After the match is over here we leave (a LEAVE op) but keep serving the table until
#: every other member has left too (it got what it needed to finish: our heartbeats past
#: our last REVEAL, ops a slow spectator still lacks), at least LINGER_MIN and at most
#: LINGER_MAX seconds.
LINGER_MIN = 1.0
LINGER_MAX = 20.0
#: A joiner that has not got the table's OPEN after this long gives up.
HOST_ANSWER_TIMEOUT = 10.0


class NetPlayError(NertsError):
    """Something a user must be told in plain words; the command exits 1."""


@dataclass
class PeerOptions:
    name: str
    interface: str
    headless: bool
    json: bool
    bots: int = 0
    bot_level: BotLevel | None = None
    bot_pace: float = 1.0
    rounds: int | None = None
    silence: float = 15.0
    announce: bool = True
    port: int = 0
    #: Where keys, the crash store and replays live; None: nothing is kept (practice).
    data_dir: Path | None = None
    #: A private table's passphrase (PROTOCOL.md 17); it never leaves this process.
    passphrase: str | None = None
    #: Where the match's replay is saved, if not under `data_dir` (practice keeps no
    #: store, no key and no lock, but its matches are replays like any other).
    replays: Path | None = None

    @property
    def replays_dir(self) -> Path | None:
        if self.replays is not None:
            return self.replays
        return self.data_dir / "replays" if self.data_dir is not None else None


@dataclass
class Printer:
    """Prints the table's record lines; a closed pipe (`| head -1`) silences it, quietly."""

    json: bool
    closed: bool = False
    lines: list[str] = field(default_factory=list)
    #: Why the output could not be written (a full disk), said once the match is over: the
    #: game does not stop for it.
    failed: str | None = None

    def line(self, text: str) -> None:
        self.lines.append(text)
        if self.closed:
            return
        try:
            print(text, flush=True)
        except BrokenPipeError:
            self._silence()
        except OSError as exc:
            self.failed = exc.strerror or str(exc)
            self._silence()

    def _silence(self) -> None:
        self.closed = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())

    def round(self, record: dict[str, object]) -> None:
        if self.json:
            self.line(json.dumps(record, separators=(",", ":")))
            return
        seats = record["seats"]
        assert isinstance(seats, list)
        scores = "  ".join(f"seat {s['seat']}: {s['score']:+d} ({s['total']})" for s in seats)
        called = record["called_by"]
        by = "" if called is None else f" by seat {called}"
        self.line(
            f"round {record['round']}: {record['ended_by']}{by}, {record['moves']} moves  "
            f"{scores}  hash {record['state_hash']}"
        )

    def match(self, record: dict[str, object]) -> None:
        if self.json:
            self.line(json.dumps(record, separators=(",", ":")))
            return
        winner = record["match_winner"]
        self.line(
            "match winner: "
            + (f"seat {winner}" if winner is not None else "none")
            + f"  totals {record['totals']}"
        )


def _bot(options: PeerOptions, label: str) -> BotPlayer:
    from nerts_p2p.game.bots import CASUAL

    level = options.bot_level or CASUAL
    return BotPlayer(level, -1, random.Random(int.from_bytes(os.urandom(8), "big") ^ hash(label)))


@dataclass
class LocalPeer:
    """One node of this process with the autopilot that plays it (if any)."""

    node: TableNode
    pilot: Autopilot
    store: TableStore | None = None


def _bot_dir(data_dir: Path, index: int) -> Path:
    return data_dir / "bots" / f"bot{index + 1}"


def _household_dirs(options: PeerOptions) -> list[Path]:
    """The data dirs of this process's peers: ours, then each of our bots'."""
    if options.data_dir is None:
        return []
    return [options.data_dir, *(_bot_dir(options.data_dir, i) for i in range(options.bots))]


@contextmanager
def _household_locked(options: PeerOptions) -> Iterator[None]:
    """Every data dir this process plays from, locked: a `join --data-dir` pointed at one of
    our bots' dirs would share that bot's key and sign conflicting ops."""
    with ExitStack() as stack:
        for data_dir in _household_dirs(options):
            stack.enter_context(data_dir_lock(data_dir))
        yield


def _household_ops(options: PeerOptions, table: bytes) -> dict[Path, list[bytes]]:
    """What the stores of this process's peers (ours, then each of our bots') kept of
    `table`: a host that ran only its own bots comes back with them."""
    return kept_ops(_household_dirs(options), table)


async def _open_node(
    data_dir: Path | None,
    header: TableHeader,
    interface: str,
    fresh: Callable[[SigningKeyPair], TableReplica],
    *,
    bootstrap: Address | None,
    household: Mapping[Path, list[bytes]],
) -> tuple[TableNode, TableStore | None]:
    """A node for `header`'s table, resumed from this data dir's store of it if its match
    had not ended (`nerts_p2p.net.opening`), with the ops the other peers of this process
    kept (`household`: `_household_ops`)."""
    previous = stored_table(data_dir, header.table)
    neighbours = [op for other, ops in household.items() if other != data_dir for op in ops]
    return await open_table_node(
        data_dir,
        header,
        interface,
        fresh,
        previous=previous,
        bootstrap=bootstrap,
        neighbours=neighbours,
    )


async def _bot_peers(
    options: PeerOptions,
    table: bytes,
    host: bytes,
    host_address: Address,
    household: Mapping[Path, list[bytes]],
) -> list[LocalPeer]:
    """`options.bots` bot players of this process, each a member of its own (its own key,
    socket, node and store), playing through the same signed ops as anyone."""
    peers = []
    for i in range(options.bots):
        name = fit_name(options.name, f"-bot{i + 1}")
        data_dir = _bot_dir(options.data_dir, i) if options.data_dir else None
        header = TableHeader(table, host, host_address, "", name, PLAYER, 0, False)

        def fresh(key: SigningKeyPair, name: str = name) -> TableReplica:
            return TableReplica.joining(key, table, name=name, role=PLAYER, randomness=os.urandom)

        node, store = await _open_node(
            data_dir,
            header,
            options.interface,
            fresh,
            bootstrap=host_address,
            household=household,
        )
        node.table_host = host
        if options.passphrase is not None:
            await _use_passphrase(node.replica, options)  # derived once: the key is cached
        node.events.close()  # nobody reads a bot's events
        pilot = Autopilot(
            node, _bot(options, name), max_rounds=options.rounds, pace=options.bot_pace
        )
        peers.append(LocalPeer(node, pilot, store))
    return peers


async def _use_passphrase(replica: TableReplica, options: PeerOptions) -> None:
    """The table key from the passphrase: argon2id, a fraction of a second of CPU (in a
    thread, so the nursery's other tasks go on), once per table and process."""
    assert options.passphrase is not None
    key = await trio.to_thread.run_sync(admission.table_key, options.passphrase, replica.sync.table)
    replica.use_table_key(key)


async def host_table(options: PeerOptions, rules: Rules, *, spectators: bool = True) -> int:
    with _household_locked(options):
        return await _host_table(options, rules, spectators=spectators)


async def _host_table(options: PeerOptions, rules: Rules, *, spectators: bool) -> int:
    previous = None
    if options.data_dir is not None:
        previous = next(
            (
                store.header
                for store in resumable_tables(options.data_dir)
                if store.header is not None
                and store.header.hosting
                and store.header.name == options.name
            ),
            None,
        )
    header = previous or TableHeader(
        b"", b"", ("", 0), options.name, options.name, PLAYER, options.port, True
    )

    def fresh(key: SigningKeyPair) -> TableReplica:
        return TableReplica.open_table(
            key,
            name=options.name,
            rules=rules,
            spectators=spectators,
            randomness=os.urandom,
            private=options.passphrase is not None,
        )

    household = _household_ops(options, header.table)  # empty for a new table
    node, store = await _open_node(
        options.data_dir, header, options.interface, fresh, bootstrap=None, household=household
    )
    replica = node.replica
    refusal = rehosting_refusal(
        replica, options.name, passphrase_given=options.passphrase is not None,
        give="its --passphrase", without="--passphrase",
    )  # fmt: skip
    if refusal is not None:
        raise NetPlayError(refusal)
    private = admission.is_private(replica.sync)
    if private:
        await _use_passphrase(replica, options)
    node.table_host = None
    transport_address = node.address
    address = (
        transport_address if options.interface != "0.0.0.0" else ("0.0.0.0", transport_address[1])
    )
    bot = _bot(options, options.name) if options.headless else None
    pilot = Autopilot(node, bot, max_rounds=options.rounds, pace=options.bot_pace)
    me = LocalPeer(node, pilot, store)
    bots = await _bot_peers(options, replica.sync.table, replica.me, transport_address, household)
    announcer = None
    if options.announce:
        table_rules = replica.rules or rules
        ad = TableAd(
            name=options.name,
            address=address,
            protocol_version=PROTOCOL_VERSION,
            table_id=replica.sync.table,
            host_fingerprint=replica.me,
            seats_taken=1,
            seats_max=table_rules.seats * (2 if table_rules.partnerships else 1),
            phase="lobby",
            passphrase=private,
            spectators=spectators,
        )
        announcer = TableAnnouncer(options.interface, ad)
    return await _run(options, me, bots, announcer=announcer, table_name=options.name)


def _likeliest(ads: list[TableAd], role: int, ours: Container[bytes]) -> TableAd:
    """Of tables of one name, the one most likely to be the table meant: one we were at
    (our store holds it), then one that speaks our protocol and has room for us. Anyone can
    announce a table under any name (TXT is a hint), so a namesake that is full, of another
    version or gone must not take the place of the one that lets us in."""

    def unlikely(ad: TableAd) -> tuple[bool, bool, bool, bool]:
        no_room = ad.full if role == PLAYER else not ad.spectators
        return (
            ad.table_id not in ours,
            not ad.speaks_our_protocol,
            no_room,
            ad.phase == "ended",
        )

    return min(ads, key=unlikely)  # the first found, among equals


async def find_table(
    interface: str,
    name: str,
    timeout: float,
    *,
    role: int = PLAYER,
    data_dir: Path | None = None,
) -> TableAd:
    """The table announced as `name` (of namesakes, the likeliest: one `data_dir` was at
    first), or a `NetPlayError` in words: none found, another protocol version."""
    ours = (
        set()
        if data_dir is None
        else {store.header.table for store in resumable_tables(data_dir) if store.header}
    )
    async with TableBrowser(interface) as browser:
        first = await browser.wait_for(name, timeout)
        namesakes = [t for t in browser.tables.values() if same_name(t.name, name) and t != first]
    ad = None if first is None else _likeliest([first, *namesakes], role, ours)
    if ad is not None and namesakes:
        # Names are chosen by people, not unique: say which one we took.
        print(
            f"nerts-p2p: {1 + len(namesakes)} tables are named {quoted_name(name)}; joining "
            f"the one at {ad.address[0]}:{ad.address[1]} (host {ad.host_fingerprint.hex()})",
            file=sys.stderr,
        )
    if ad is None:
        raise NetPlayError(
            f"no table named {quoted_name(name)} found on {interface} within {timeout:g} s "
            "(`nerts-p2p list` shows the tables that are announced; a table is no longer "
            "announced once its match has ended)"
        )
    mismatch = ad.version_mismatch()
    if mismatch is not None:
        raise NetPlayError(mismatch)
    return ad


def passphrase_for(ad: TableAd, table_name: str, given: str | None) -> str | None:
    """The passphrase to join the announced table with: a private one needs it (else a
    `NetPlayError` in words); for an open one it is needless, and said to be (None)."""
    if ad.passphrase and given is None:
        raise NetPlayError(
            f"table {quoted_name(table_name)} is private: give its passphrase with --passphrase"
        )
    if not ad.passphrase and given is not None:
        print(
            f"nerts-p2p: table {quoted_name(table_name)} is not private: the passphrase is not "
            "needed",
            file=sys.stderr,
        )
        return None
    return given


async def join_table(options: PeerOptions, table_name: str, *, role: int, timeout: float) -> int:
    with ExitStack() as stack:
        try:
            stack.enter_context(_household_locked(options))
        except DataDirInUseError:
            if role != SPECTATOR:
                raise  # a player's seat is its key's: it cannot play from a borrowed dir
            options = _watching_on_its_own(options)
        return await _join_table(options, table_name, role=role, timeout=timeout)


def _watching_on_its_own(options: PeerOptions) -> PeerOptions:
    """A spectator whose data dir another process holds (the player at this very table, in
    another terminal of this machine): it watches as a member of its own, with a key of this
    run and no store, so it shares no key with that process. A spectator signs only its
    JOIN, so all it loses is coming back as the same member after a crash; its replay is
    still saved in that data dir's replays (their names never collide)."""
    print(
        f"nerts-p2p: another nerts-p2p process is using {options.data_dir}: watching with a "
        "key of this run (give this one its own --data-dir to keep a key)",
        file=sys.stderr,
    )
    return replace(options, data_dir=None, replays=options.replays_dir)


async def _join_table(options: PeerOptions, table_name: str, *, role: int, timeout: float) -> int:
    ad = await find_table(
        options.interface, table_name, timeout, role=role, data_dir=options.data_dir
    )
    earlier = None if options.data_dir is None else TableStore.open(options.data_dir, ad.table_id)
    if earlier is not None and earlier.header is not None and not earlier.ended:
        # We were at this table when this peer stopped: take our seat back.
        role = earlier.header.role
        ad = replace(ad, seats_taken=0)
    if role == PLAYER and ad.full:
        lost = ""
        if earlier is not None and earlier.header is None and earlier.path.exists():
            # Our store of this very table, with not even its first record left.
            lost = (
                f"; this data dir's store of that table ({earlier.path}) is empty or "
                "damaged, so a seat this peer had there cannot be taken back"
            )
        raise NetPlayError(
            f"table {quoted_name(table_name)} is full ({ad.seats_taken} of {ad.seats_max} "
            f"seats taken){lost}"
        )
    if role == SPECTATOR and not ad.spectators:
        raise NetPlayError(f"table {quoted_name(table_name)} does not welcome spectators")
    passphrase_for(ad, table_name, options.passphrase)  # refuses, or says it is needless
    if role == PLAYER and ad.seats_taken + 1 + options.bots > ad.seats_max:
        free = ad.seats_max - ad.seats_taken
        raise NetPlayError(
            f"table {quoted_name(table_name)} is full for us: {free} seat(s) free, we need "
            f"{1 + options.bots}"
        )
    host_address = ad.address
    if host_address[0] == "0.0.0.0":
        raise NetPlayError(f"table {quoted_name(table_name)} announced no usable address")
    header = TableHeader(
        ad.table_id,
        ad.host_fingerprint,
        host_address,
        ad.name,
        options.name,
        role,
        options.port,
        False,
    )

    def fresh(key: SigningKeyPair) -> TableReplica:
        return TableReplica.joining(
            key, ad.table_id, name=options.name, role=role, randomness=os.urandom
        )

    household = _household_ops(options, ad.table_id)
    node, store = await _open_node(
        options.data_dir, header, options.interface, fresh, bootstrap=host_address,
        household=household,
    )  # fmt: skip
    if options.passphrase is not None:
        await _use_passphrase(node.replica, options)
    bot = _bot(options, options.name) if options.headless and role == PLAYER else None
    me = LocalPeer(
        node, Autopilot(node, bot, max_rounds=options.rounds, pace=options.bot_pace), store
    )
    bots = await _bot_peers(options, ad.table_id, ad.host_fingerprint, host_address, household)
    return await _run(options, me, bots, announcer=None, table_name=table_name)


async def list_tables(interface: str, timeout: float, *, as_json: bool) -> int:
    tables = await browse(interface, timeout)
    printer = Printer(as_json)
    for ad in tables:
        if as_json:
            printer.line(
                json.dumps(
                    {
                        "name": ad.name,
                        "address": f"{ad.address[0]}:{ad.address[1]}",
                        "protocol_version": ad.protocol_version,
                        "table_id": ad.table_id.hex(),
                        "host_fingerprint": ad.host_fingerprint.hex(),
                        "seats_taken": ad.seats_taken,
                        "seats_max": ad.seats_max,
                        "phase": ad.phase,
                        "passphrase": ad.passphrase,
                        "spectators": ad.spectators,
                    },
                    separators=(",", ":"),
                )
            )
        else:
            flags = ("private" if ad.passphrase else "open") + (
                "  spectators welcome" if ad.spectators else "  no spectators"
            )
            note = ad.version_note()
            if note is not None:
                flags += f"  ({note}: cannot join)"
            printer.line(
                f"{printable_name(ad.name)}  {ad.seats_taken}/{ad.seats_max} seats  {ad.phase}  "
                f"{ad.address[0]}:{ad.address[1]}  {flags}"
            )
    if not tables and not as_json:
        printer.line(f"no tables found on {interface}")
    return 0


# --- running a peer --------------------------------------------------------------------------


@dataclass
class LiveMoves:
    """A spectator's text view, live: a round's seats, then each of its moves once it is
    stable (no late op can sort before it any more), printed as `nerts-p2p replay` prints
    them, then (by the caller) its summary; rounds strictly one after the other. A spectator
    that joins late catches up on several rounds at once, their stable prefixes growing side
    by side: a later round's moves wait until the rounds before it are over here."""

    printer: Printer
    #: the round being printed: the earliest one not over here (None: none seen yet)
    current: int | None = None
    #: its steps printed so far (None: not even its seats)
    printed: int | None = None

    def show(self, replica: TableReplica) -> None:
        """Print what is stable of the current round and not printed yet."""
        if self.current is None:
            if not replica.rounds:
                return
            self.current = min(replica.rounds)
        rnd = replica.rounds.get(self.current)
        if rnd is None:
            return
        self._print(replica, rnd, min(rnd.announced_stable, len(rnd.steps)))

    def finish(self, replica: TableReplica, number: int) -> None:
        """Round `number` is final here: the rest of its moves (its summary follows), then
        on to the next round."""
        if self.current is None:
            self.current = number
        while self.current <= number:
            rnd = replica.rounds.get(self.current)
            if rnd is not None:
                self._print(replica, rnd, len(rnd.steps))
            self.current += 1
            self.printed = None

    def voided(self, number: int) -> None:
        """The round's START lost to a departure vote: a new START will open the round of
        this number again (its seats may differ), and it is printed from its beginning."""
        if number == self.current and self.printed is not None:
            self.printed = None
            self.printer.line(
                f"round {number} begins again: the table had voted out the player who started it"
            )

    def _print(self, replica: TableReplica, rnd: ReplicatedRound, end: int) -> None:
        if self.printed is None:
            self.printer.line(f"round {rnd.number} begins: {seats_text(replica, rnd)}")
            self.printed = 0
        for step in rnd.steps[self.printed : end]:
            line = step_text(step)
            if line is not None:
                self.printer.line(line)
        self.printed = max(self.printed, end)


@dataclass
class _Watch:
    """What the main peer's events tell the command."""

    printer: Printer
    table_name: str
    finals: list[RoundFinal] = field(default_factory=list)
    error: str | None = None
    #: a spectator's moves as text (not with --json: its lines are the players' lines)
    live: LiveMoves | None = None
    #: a round began without a seat for us or any of our bots at a full table ("table
    #: full"): the command's ending says goodbye for us all
    turned_away: bool = False
    #: Said at the end, after the match's record (exit 1): we were turned away, but our
    #: bots that got seats played on, this process serving them to the match's end.
    said_last: str | None = None
    #: We said we are asking to be let in: say so once we are (our JOIN is delivered).
    admission_pending: bool = False


async def _run(
    options: PeerOptions,
    me: LocalPeer,
    bots: list[LocalPeer],
    *,
    announcer: TableAnnouncer | None,
    table_name: str,
) -> int:
    printer = Printer(options.json)
    watching = me.node.replica.role == SPECTATOR and not options.json
    watch = _Watch(printer, table_name, live=LiveMoves(printer) if watching else None)
    everyone = [me, *bots]
    async with trio.open_nursery() as nursery:
        for peer in everyone:
            await nursery.start(peer.node.run)
        if announcer is not None:
            await announcer.open()
        if not options.json:
            # A person at a terminal sees that something is going on: nothing else comes
            # until the first round begins (with --json, stdout is the records alone).
            print(f"nerts-p2p: {_lobby_words(me.node, table_name)}", file=sys.stderr)
            watch.admission_pending = _asking_in(me.node)
        try:
            nursery.start_soon(_watch_events, me.node, everyone, watch, options)
            for peer in everyone:
                nursery.start_soon(peer.pilot.run)
            if announcer is not None:
                nursery.start_soon(_keep_announcement, announcer, me.node)
            await _until_done(me, everyone, watch, options)
        finally:
            _leave_if_nothing_played(everyone)
            if watch.turned_away:
                rnd = me.node.replica.current_round
                _leave_unseated(everyone, {} if rnd is None else rnd.seat_of)
            if announcer is not None:
                await announcer.aclose()
            nursery.cancel_scope.cancel()
            _save_replay(me, options)
    for peer in everyone:
        peer.node.transport.close()  # the nodes have stopped: their sockets go with them
    if watch.error is not None:
        raise NetPlayError(watch.error)
    last = watch.finals[-1] if watch.finals else None
    target_reached = last is not None and last.match_winner is not None
    for peer in everyone:
        if peer.store is not None:
            peer.store.end()  # the match is over: nothing to resume
    watch.printer.match(network_match_record(watch.finals, target_reached=target_reached))
    if watch.printer.failed is not None:
        raise NetPlayError(f"could not write the output: {watch.printer.failed}")
    if watch.said_last is not None:
        raise NetPlayError(watch.said_last)
    return 0


async def _until_done(
    me: LocalPeer, everyone: list[LocalPeer], watch: _Watch, options: PeerOptions
) -> None:
    node = me.node
    replica = node.replica
    ours = {peer.node.replica.me for peer in everyone}  # this process's peers: our bots
    started = trio.current_time()
    while watch.error is None:
        now = trio.current_time()
        if me.pilot.match_over() and len(watch.finals) >= len(replica.rounds):
            # Goodbye from us and our bots, then keep serving the table a little while.
            for peer in everyone:
                if peer.node.replica.is_member and not has_left(peer.node.replica):
                    peer.node.submit(Leave())  # (a peer turned away has said it already)
            await trio.sleep(LINGER_MIN)
            with trio.move_on_after(LINGER_MAX - LINGER_MIN):
                while _others_present(replica, options.silence, node):
                    await trio.sleep(0.1)
            return
        if watch.admission_pending and replica.is_member:
            watch.admission_pending = False
            print(f"nerts-p2p: {_admitted_words(replica, watch.table_name)}", file=sys.stderr)
        refused = replica.admission_refused
        if refused is not None:
            if refused == REFUSAL_WORDS[Refusal.WRONG_PASSPHRASE]:
                watch.error = f"wrong passphrase for table {quoted_name(watch.table_name)}"
            elif refused == REFUSAL_WORDS[Refusal.TABLE_FULL] and replica.role == SPECTATOR:
                watch.error = (
                    f"table {quoted_name(watch.table_name)} has no room for another spectator "
                    f"(at most {MAX_SPECTATORS} watch at once; one who went away frees a place "
                    f"within {SPECTATOR_GONE:g} s)"
                )
            else:
                watch.error = f"table {quoted_name(watch.table_name)} did not let us in: {refused}"
            return
        if replica.sync.open_op is None and now - started > HOST_ANSWER_TIMEOUT:
            watch.error = (
                f"the table's host does not answer (nothing for {HOST_ANSWER_TIMEOUT:g} s)"
            )
            return
        waiting_to_begin = not replica.rounds and replica.sync.host == replica.me
        # A host whose joiners all left its lobby keeps its table open for others to sit
        # down (it used to give up, "everyone else left", and withdraw the table).
        if everyone_else_left(replica) and not me.pilot.match_over() and not waiting_to_begin:
            rnd = replica.current_round
            watch.error = "everyone else left the table" + (
                f" before round {rnd.number} was final here"
                if rnd is not None and rnd.final is None
                else ""
            )
            return
        if too_few_to_play_on(replica) and not me.pilot.match_over():
            watch.error = (
                f"too few players are left to play round {max(replica.rounds) + 1}: "
                "the others left the table or were voted out as silent"
            )
            return
        silent = _silent_participant(node, now, options.silence, ours)
        if silent is not None:
            watch.error = silent
            return
        await trio.sleep(0.1)


def _lobby_words(node: TableNode, table_name: str) -> str:
    """What this peer is doing when it starts, in words: a host has opened its table; a
    joiner is asking to be let in (it used to say it was at the table, waiting for its next
    round, and then that its passphrase was wrong); a restarted one is back."""
    replica = node.replica
    ip, port = node.address
    address = f"port {port} of every interface" if ip == "0.0.0.0" else f"{ip}:{port}"
    name = quoted_name(table_name)
    if replica.sync.host == replica.me:
        return f"table {name} is open on {address}: waiting for players"
    if not _asking_in(node):
        return f"back at table {name} (from {address}): catching up"
    doing = "watch" if replica.role == SPECTATOR else "join"
    return f"asking to {doing} table {name} (from {address})"


def _asking_in(node: TableNode) -> bool:
    """A newcomer, still to be let in: not a member yet, and not a restarted peer whose
    store holds its own JOIN (it is let in again as that JOIN is delivered)."""
    return not node.replica.is_member and node.resume_target == 0


def _admitted_words(replica: TableReplica, table_name: str) -> str:
    """Said once the host has let us in (our JOIN is in the table's log)."""
    if replica.role == SPECTATOR:
        return f"watching table {quoted_name(table_name)}"
    return f"at table {quoted_name(table_name)}: waiting for its next round"


def _leave_if_nothing_played(everyone: list[LocalPeer]) -> None:
    """Stopped (Ctrl-C, an error) before the table's first round began: say goodbye for us
    and our bots, so the table does not wait for seats nobody will take (it used to give
    up on the silent joiner, 15 s later). Nothing was played, so nothing is to resume: the
    store is closed for good. (In the lobby between rounds the seat is kept, as a crash
    keeps it; and a host keeps its table, its own bots with it, to be started again:
    PROTOCOL.md 14.) Synchronous: it runs while the nursery is being cancelled."""
    if any(peer.node.replica.sync.host == peer.node.replica.me for peer in everyone):
        return
    for peer in everyone:
        replica = peer.node.replica
        if replica.rounds or not replica.is_member or replica.role != PLAYER:
            continue
        if replica.sync.members[replica.me].left or not replica.can_author:
            continue
        peer.node.apply_intent(Leave())
        if peer.store is not None:
            peer.store.end()


def _leave_unseated(everyone: list[LocalPeer], seated: Container[bytes]) -> None:
    """Turned away from a full table (joiners racing for its last seats): goodbye for us
    and those of our bots the round has no seat for (not in `seated`), so the table does
    not wait for them at the next round. Our bots that did get a seat stay: this process
    serves them to the match's end."""
    for peer in everyone:
        replica = peer.node.replica
        if (
            replica.me not in seated
            and replica.is_member
            and replica.can_author
            and not has_left(replica)
        ):
            peer.node.apply_intent(Leave())
            if peer.store is not None:
                peer.store.end()


def _save_replay(me: LocalPeer, options: PeerOptions) -> None:
    """Every finished or interrupted match is kept as its signed log (`nerts-p2p replay`)."""
    replica = me.node.replica
    replays = options.replays_dir
    if replays is None or not replica.rounds:
        return
    header = me.store.header if me.store is not None else None
    name = header.name if header is not None else options.name
    try:
        path = save_replay(replays, replica, table_name=name)
    except OSError as exc:
        print(f"nerts-p2p: could not save the replay in {replays}: {exc.strerror}", file=sys.stderr)
        return
    print(f"nerts-p2p: replay saved to {path}", file=sys.stderr)


def _others_present(replica: TableReplica, silence: float, node: TableNode) -> bool:
    """Someone else is still at the table: a member who has not left and is not silent."""
    now = trio.current_time()
    for author, member in replica.sync.members.items():
        if author == replica.me or member.left:
            continue
        quiet = node.silence(author, now)
        if quiet is not None and quiet < silence:
            return True
    return False


def _silent_participant(
    node: TableNode, now: float, bound: float, ours: Collection[bytes] = ()
) -> str | None:
    """A player the table waits for who has sent nothing for `bound` seconds, in words.
    One voted out of the round (or the table) as silent is waited for no more. When every
    player on another machine (two or more of them) has gone quiet at once, they have all
    gone or (likelier) this machine's own network has (a cable out, Wi-Fi gone), and the
    words say so rather than blame whoever happened to fall silent first. `ours`: the
    peers of this process (our bots), which still hear us when the network is gone. Who
    is waited for, and since when, is the table's rule (`status.silences_counted`)."""
    replica = node.replica
    quiet_for: dict[bytes, float] = {}
    for author, since in silences_counted(replica).items():
        member = replica.sync.members.get(author)
        if member is None or member.left:
            continue
        quiet = node.silence(author, now)
        if quiet is not None:
            quiet_for[author] = min(quiet, now - since)
    silent = [a for a, quiet in quiet_for.items() if quiet > bound]
    if not silent:
        return None
    elsewhere = [a for a in quiet_for if a not in ours]
    # A peer that is alive is heard several times a second: one quiet for nearly the
    # bound too went quiet together with the first.
    if len(elsewhere) >= 2 and all(quiet_for[a] > bound - 1.0 for a in elsewhere):
        names = ", ".join(printable_name(replica.sync.members[a].name) for a in elsewhere)
        return (
            f"nothing has come from any other machine at the table for "
            f"{min(quiet_for[a] for a in elsewhere):.0f} s ({names}): "
            "they have all gone, or this machine is off the network"
        )
    first = silent[0]
    name = printable_name(replica.sync.members[first].name)
    return f"a peer went silent: {name} has sent nothing for {quiet_for[first]:.0f} s"


async def _watch_events(
    node: TableNode, household: list[LocalPeer], watch: _Watch, options: PeerOptions
) -> None:
    """What the main peer's events say, for the command (`household`: the peers of this
    process, the main one first, then our bots)."""
    replica = node.replica
    store = household[0].store
    async for event in node.events:
        if isinstance(event, StableState) and watch.live is not None:
            watch.live.show(replica)
        elif isinstance(event, RoundVoided) and watch.live is not None:
            watch.live.voided(event.round)
        elif isinstance(event, RoundFinal):
            rnd = replica.rounds[event.round]
            if watch.live is not None:
                watch.live.finish(replica, event.round)  # every move, then the summary
            watch.finals.append(event)
            record = network_round_record(rnd, event)
            if store is not None and event.round > len(store.finals):
                store.append_final(record)
            watch.printer.round(record)
            if watch.live is not None:
                watch.live.show(replica)  # the next round's seats and moves so far
        elif isinstance(event, PeerExpelled) and event.author == replica.me:
            # The table holds two different ops of ours signed for one place in our chain:
            # a copy of this data dir plays somewhere else with our key. We count for
            # nothing at this table any more; waiting on would wait for ever.
            watch.error = (
                "this peer was thrown out of the table: two different ops were signed with "
                "its key for one place in its chain (is a copy of this data dir playing "
                "somewhere else?)"
            )
        elif isinstance(event, VersionMismatch):
            watch.error = (
                f"protocol version mismatch: the table speaks version {event.version}, "
                f"this program speaks version {PROTOCOL_VERSION}"
            )
        elif (
            isinstance(event, RoundStarted)
            and event.seat is None
            and replica.role == PLAYER
            and options.headless
            and not has_left(replica)  # (turned away before, with a bot of ours seated)
            and turned_away(replica, event.round)
        ):
            _turned_away(replica, event.round, household, watch)


def _turned_away(
    replica: TableReplica, number: int, household: list[LocalPeer], watch: _Watch
) -> None:
    """Round `number` began at a full table without a seat for us. With none of our bots
    seated either, the command stops ("table full"; its ending says goodbye for us all).
    Bots of ours that got seats are players of the round, whom the table waits for: only
    the unseated of us say goodbye now, and this process serves the seated to the match's
    end (a table of bots whose process quit waited for them until it gave up)."""
    full = f"table full: round {number} started without a seat for us"
    # Seats as our own replica folded the START (a bot's node may fold it a moment later).
    in_round = replica.rounds[number].seat_of
    seated = [p.node.replica for p in household if p.node.replica.me in in_round]
    if not seated:
        watch.error = full
        watch.turned_away = True
        return
    _leave_unseated(household, in_round)
    names = ", ".join(printable_name(bot.name) for bot in seated)
    bots, plays = (
        (f"our bots {names}", "play") if len(seated) > 1 else (f"our bot {names}", "plays")
    )
    print(f"nerts-p2p: {full}; {bots} {plays} on to the match's end", file=sys.stderr)
    watch.said_last = f"{full}; {bots} played on to the match's end"


async def _keep_announcement(announcer: TableAnnouncer, node: TableNode) -> None:
    replica = node.replica
    while True:
        rnd = replica.current_round
        phase = "playing" if rnd is not None and rnd.final is None else "lobby"
        await announcer.update(seats_taken=seats_taken(replica), phase=phase)
        await trio.sleep(0.5)


#: Signals that end a network command in order: what its `finally` blocks keep (the
#: replay of an interrupted match, a withdrawn announcement) is kept, and the store is left
#: as a crash leaves it, so the same command takes the seat back.
STOP_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


async def _until_stopped(command: Callable[[], Awaitable[int]]) -> int:
    """`command`'s exit status, or 128 + the signal's number if one of `STOP_SIGNALS`
    came first (Ctrl-C: 130, `kill`: 143), after cancelling it."""
    status: list[int] = []
    with trio.open_signal_receiver(*STOP_SIGNALS) as signals:
        try:
            async with trio.open_nursery() as nursery:

                async def run() -> None:
                    status.append(await command())
                    nursery.cancel_scope.cancel()

                async def stop() -> None:
                    async for signum in signals:
                        status.append(128 + signum)
                        nursery.cancel_scope.cancel()
                        return

                nursery.start_soon(run)
                nursery.start_soon(stop)
        except BaseExceptionGroup as group:
            # The command's own error, as the command raised it (one plain line).
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
    return status[0]


def run_command(command: Callable[[], Awaitable[int]]) -> int:
    """Run a network command; what a user must be told comes out as one plain line on
    stderr and exit status 1."""
    try:
        return trio.run(_until_stopped, command)
    except (NetPlayError, AddressInUseError, StoreError) as exc:
        print(f"nerts-p2p: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # before the signal receiver is up, or after it is gone
        return 130
