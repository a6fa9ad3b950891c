"""A table of replicas with chosen deals and hand-controlled delivery, for race tests.

`ManualTable` delivers nothing until told to: a test can let two players act "at the same
moment" (neither has seen the other's op) and then let everything through.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Sequence

from nerts_p2p.game.cards import RANK_OF, face_index, parse_face
from nerts_p2p.game.deck import deal_seat
from nerts_p2p.game.errors import Rejection
from nerts_p2p.game.fit import fits_work
from nerts_p2p.game.moves import FROM_NERTS, NEW_FOUNDATION, Move
from nerts_p2p.game.position import state_hash
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import GameEvent, TableReplica
from nerts_p2p.table.round import ReplicatedRound
from protocol.envelope import seal
from protocol.messages import PLAYER, Kind, Op, heartbeat_body, op_body
from protocol.signing import SigningKeyPair
from protocol.sync import BROADCAST


def seed_showing(
    rules: Rules,
    wanted: Sequence[str],
    *,
    in_work: Sequence[str] = (),
    nerts_top: str | None = None,
    label: str = "",
    stuck: bool = False,
) -> bytes:
    """A deal seed whose face-up cards include `wanted` (anywhere), `in_work` (on work
    piles) and `nerts_top` (as the Nerts top). `stuck`: a deal with no card to play, at the
    start or after one turn of the stock (the rules refuse "stuck" while a card can go)."""
    for n in range(200_000):
        seed = hashlib.sha256(f"search/{label}/{n}".encode()).digest()
        deal = deal_seat(rules, 0, seed)
        shown = {deal.nerts[-1] & 63, *(c & 63 for c in deal.work)}
        work = {c & 63 for c in deal.work}
        top_ok = nerts_top is None or deal.nerts[-1] & 63 == parse_face(nerts_top)
        if stuck:
            loose = (deal.nerts[-1], deal.stock[min(rules.draw, len(deal.stock)) - 1])
            if any(RANK_OF[c & 63] == 1 for c in (*loose, *deal.work)) or any(
                fits_work((w,), c) for c in loose for w in deal.work
            ):
                continue
        if (
            top_ok
            and all(parse_face(w) in shown for w in wanted)
            and all(parse_face(w) in work for w in in_work)
        ):
            return seed
    raise AssertionError(f"no seed shows {wanted} {in_work}")


def seeds_in_turn(seeds: Sequence[bytes], label: str) -> Callable[[int], bytes]:
    """Randomness handing out `seeds` for the successive 32-byte draws (one deal a READY),
    deterministic bytes for the rest."""
    left = list(seeds)
    counter = 0

    def draw(n: int) -> bytes:
        nonlocal counter
        if n == 32 and left:
            return left.pop(0)
        counter += 1
        return hashlib.sha256(f"{label}/{counter}".encode()).digest()[:n]

    return draw


def fixed_randomness(seed: bytes, label: str) -> Callable[[int], bytes]:
    """Hands out `seed` for the first 32-byte draw (the deal), then deterministic bytes."""
    handed = False
    counter = 0

    def draw(n: int) -> bytes:
        nonlocal handed, counter
        if n == 32 and not handed:
            handed = True
            return seed
        counter += 1
        return hashlib.sha256(f"{label}/{counter}".encode()).digest()[:n]

    return draw


#: A datagram on its way: (sender, destination, datagram).
InFlight = tuple[int, Hashable, bytes]


class ManualTable:
    """Players 0..n-1 (0 is the host); seat i is played by `players[i]` (keys are chosen so
    that the host's seat order, by key id, matches the player index)."""

    def __init__(
        self,
        rules: Rules,
        seeds: Sequence[bytes],
        *,
        spectators: int = 0,
        keys: Sequence[SigningKeyPair] | None = None,
    ) -> None:
        """`keys`: the players' keys (then spectators'), by default `keys_in_seat_order`."""
        self.now = 0.0
        if keys is None:
            keys = keys_in_seat_order(len(seeds) + spectators)
        self.players: list[TableReplica] = []
        host = TableReplica.open_table(
            keys[0],
            name="p0",
            rules=rules,
            spectators=True,
            randomness=fixed_randomness(seeds[0], "host"),
        )
        self.players.append(host)
        for i in range(1, len(seeds) + spectators):
            role = PLAYER if i < len(seeds) else 1
            seed = seeds[i] if i < len(seeds) else bytes(32)
            replica = TableReplica.joining(
                keys[i],
                host.sync.table,
                name=f"p{i}",
                role=role,
                randomness=fixed_randomness(seed, f"p{i}"),
            )
            self.players.append(replica)
        self.queue: list[InFlight] = []
        self.events: list[list[GameEvent]] = [[] for _ in self.players]
        for replica in self.players[1:]:
            replica.request_table(host.me, 0, 0.0)
        self.collect()
        self.deliver_all()
        for replica in self.players[1:]:
            replica.join()
        self.collect()
        self.deliver_all()

    def collect(self, only: Sequence[int] | None = None) -> None:
        """Take what replicas want to send into the queue (nothing is delivered yet)."""
        for i, replica in enumerate(self.players):
            if only is not None and i not in only:
                continue
            for destination, datagram in replica.outgoing():
                self.queue.append((i, destination, datagram))
            self.events[i].extend(replica.events())

    def deliver_all(self, withhold: Callable[[bytes], bool] | None = None) -> list[InFlight]:
        """Deliver until nothing more is said; the datagrams `withhold` picks are put aside
        instead, and returned (sender, destination, datagram)."""
        held: list[InFlight] = []
        while self.queue:
            queue, self.queue = self.queue, []
            for sender, destination, datagram in queue:
                if withhold is not None and withhold(datagram):
                    held.append((sender, destination, datagram))
                    continue
                targets = range(len(self.players)) if destination == BROADCAST else [destination]
                for target in targets:
                    assert isinstance(target, int)
                    if target != sender:
                        self.players[target].receive(datagram, sender, self.now)
            self.collect()
        return held

    def settle(
        self, seconds: float = 1.0, withhold: Callable[[bytes], bool] | None = None
    ) -> list[InFlight]:
        """Heartbeats for a while, everything delivered: ops become stable (but what
        `withhold` picks, returned as `deliver_all` does)."""
        held: list[InFlight] = []
        end = self.now + seconds
        while self.now < end:
            self.now += 0.05
            for replica in self.players:
                replica.tick(self.now)
            self.collect()
            held += self.deliver_all(withhold)
        return held

    def ready_all(self, players: Sequence[TableReplica] | None = None) -> None:
        """Every player (or those given) says READY for the next round, delivered."""
        for replica in self.players if players is None else players:
            if replica.role == PLAYER:
                replica.ready()
        self.collect()
        self.deliver_all()

    def start_round(self, *, deliver: bool = True) -> None:
        """Every player says READY and the host starts; the START is delivered unless
        `deliver` is False (it waits in `queue`)."""
        self.ready_all()
        self.players[0].start()
        self.collect()
        if deliver:
            self.deliver_all()


def keys_in_seat_order(count: int) -> list[SigningKeyPair]:
    """`count` keys sorted by key id: a host that seats players by key id seats them in
    this order."""
    keys = [
        SigningKeyPair(hashlib.sha256(f"seatkey/{i}".encode()).digest()) for i in range(count * 3)
    ]
    keys.sort(key=lambda k: k.key_id)
    return keys[:count]


def face(text: str) -> int:
    return parse_face(text)


__all__ = [
    "ManualTable",
    "face",
    "face_index",
    "fixed_randomness",
    "seed_showing",
    "seeds_in_turn",
    "three_at_play",
]


def three_at_play(label: str) -> ManualTable:
    """Three seats, a round started and every mix nonce in: moves count."""
    rules = Rules(seats=3)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"{label}/{i}") for i in range(3)])
    table.start_round()
    table.settle(0.5)
    return table


def turn_or_recycle(player: TableReplica, seat: int) -> Op:
    """`player` turns its seat's stock (or recycles its waste once the stock is empty):
    a move that is always legal. Returns the op it signed."""
    rnd = player.current_round
    assert rnd is not None
    op = player.play(Move(seat, "turn" if rnd.state.seats[seat].stock else "recycle"))
    assert isinstance(op, Op)
    return op


def signed_move(player: TableReplica, seq_offset: int, prev: bytes, lamport: int) -> bytes:
    """A "turn" MOVE of `player`, signed by hand `seq_offset` ops past its next one, on top
    of `prev`, stamped `lamport` (two with one seq and prev, stamped apart, equivocate)."""
    sync = player.sync
    rnd = player.current_round
    assert rnd is not None
    deps = sync.deps_for(Kind.MOVE, rnd.number, "turn")
    me = sync.logs[sync.me]
    deps[rnd.log.index[sync.me]] = len(me) + seq_offset
    body = op_body(
        Kind.MOVE, sync.table, sync.me, len(me) + 1 + seq_offset, prev, lamport, rnd.number,
        deps, "turn",
    )  # fmt: skip
    return seal(sync.key, body)


def own_promise_returns(player: TableReplica, lamport: int, now: float) -> None:
    """A heartbeat of `player` stamped `lamport` comes back to it (relayed): a promise it
    made, which nothing it stamps later may break."""
    sync = player.sync
    promise = heartbeat_body(sync.table, sync.me, lamport, sync.vector(), b"")
    player.receive(seal(sync.key, promise), "relay", now)


def one_card_nerts_table(
    label: str = "", *, settle: float = 0.3, spectators: int = 0
) -> ManualTable:
    """Two seats, Nerts piles of one card; seat 0's is the ace of spades: it can call at once.
    The round is started, then the table runs `settle` seconds (0.3: every mix nonce is
    in, so moves count; 0: nothing but the START is delivered). `spectators` watch it
    (players 2 and up)."""
    prefix = f"{label}/" if label else ""
    rules = Rules(seats=2, nerts_size=1)
    seeds = [
        seed_showing(rules, [], nerts_top="AS", label=f"{prefix}caller"),
        seed_showing(rules, [], label=f"{prefix}other"),
    ]
    table = ManualTable(rules, seeds, spectators=spectators)
    table.start_round()
    if settle:
        table.settle(settle)
    return table


def call_nerts(table: ManualTable, *, settle: float | None = 2.0) -> Op:
    """Seat 0 plays its ace (its whole Nerts pile) and calls Nerts; then, unless `settle` is
    None, everything is delivered and the table runs that many seconds. Returns the call."""
    caller = table.players[0]
    rnd = caller.current_round
    assert rnd is not None
    ace = rnd.state.seats[0].nerts_up[-1]
    assert not isinstance(
        caller.play(Move(0, "play", ace, FROM_NERTS, "f", NEW_FOUNDATION)), Rejection
    )
    call = caller.play(Move(0, "nerts"))
    assert isinstance(call, Op)
    table.collect()
    if settle is not None:
        table.deliver_all()
        table.settle(settle)
    return call


def rounds_after(table: ManualTable, seconds: float) -> list[ReplicatedRound]:
    """Everything said so far delivered, then the table runs `seconds`: each player's
    current round."""
    table.collect()
    table.deliver_all()
    table.settle(seconds)
    rounds = [player.current_round for player in table.players]
    assert all(rnd is not None for rnd in rounds)
    return [rnd for rnd in rounds if rnd is not None]


def partners_after_their_share(label: str) -> tuple[ManualTable, TableReplica, TableReplica, str]:
    """A partnership round between two pairs of stuck players, once each dealer's genuine seed
    share has reached its partner: (table, seat 0's dealer, its partner, the partner's state
    hash then). The partner's events are cleared, so what follows is all they show."""
    rules = Rules(seats=2, partnerships=True)
    seeds = [seed_showing(rules, [], label=f"{label}{i}", stuck=True) for i in range(4)]
    table = ManualTable(rules, seeds)
    table.start_round()
    table.settle(0.5)  # the genuine seed share arrives
    dealer, partner = table.players[0], table.players[1]
    rnd = partner.current_round
    assert rnd is not None
    before = state_hash(rnd.state)
    table.collect()
    table.events[1].clear()
    return table, dealer, partner, before


def restored_from_store(old: TableReplica, name: str, **complete: bool) -> TableReplica:
    """`old` restarted from a store that kept every op it held (and its clock); `complete`
    is passed on to `TableReplica.restore`."""
    stored = [op.datagram() for log in old.sync.logs.values() for op in log]
    return TableReplica.restore(
        old.sync.key,
        old.sync.table,
        stored,
        name=name,
        role=PLAYER,
        randomness=fixed_randomness(bytes(32), "restored"),
        clock=old.sync.clock.value,
        **complete,
    )


#: (speaker, listener, datagram) -> True if that datagram is lost on that way.
Drop = Callable[[TableReplica, TableReplica, bytes], bool]


def exchange(replicas: list[TableReplica], now: float, drop: Drop | None = None) -> None:
    """Everything the given replicas say reaches each other (but what `drop` picks), and
    nobody else."""
    while True:
        said = [(r, d) for r in replicas for _, d in r.outgoing()]
        if not said:
            return
        for sender, datagram in said:
            for other in replicas:
                if other is not sender and (drop is None or not drop(sender, other, datagram)):
                    other.receive(datagram, id(sender), now)


def tick_together(
    replicas: list[TableReplica], start: float, seconds: float, drop: Drop | None = None
) -> float:
    """Ticks for `seconds`, everything said reaching the given replicas only (but what
    `drop` picks)."""
    now = start
    while now < start + seconds:
        now += 0.05
        for replica in replicas:
            replica.tick(now)
        exchange(replicas, now, drop)
    return now


def ready_and_its_twin(
    table: ManualTable, rules: Rules, seeds: Sequence[bytes], player: int
) -> tuple[Op, list[object]]:
    """Every player says READY; then `player` signs a second READY and the body of its
    twin: the same place in its chain, the same shown cards under another commitment (an
    equivocation, as a copy of its data dir playing elsewhere would sign). The first is
    authored (queued, not delivered); the twin is for the test to seal and send."""
    from nerts_p2p.table.commitments import deal_commitment

    for each in table.players:
        each.ready()
    table.collect()
    table.deliver_all()
    signer = table.players[player]
    deal = deal_seat(rules, 0, seeds[player])
    shown = [deal.nerts[-1] & 63, *(c & 63 for c in deal.work)]
    extra = [bytes(32), bytes(104)]  # mix nonce commitment and escrow: not what is judged here
    one = signer.sync.author(
        Kind.READY, 0, [1, deal_commitment(b"\1" * 32, b"\2" * 16), shown, *extra]
    )
    deps = [list(d) for d in one.lobby_deps]
    other = [1, deal_commitment(b"\3" * 32, b"\4" * 16), shown, *extra]
    twin = op_body(one.kind, signer.sync.table, one.author, one.seq, one.prev, one.lamport, 0,
                   deps, other)  # fmt: skip
    signer.outgoing()
    return one, twin
