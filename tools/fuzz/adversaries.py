"""The hostile mode's adversaries: each sets up a table with one peer (or an outsider) that
the fuzzer controls, and says how the honest peers should notice it (`Watch`)."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from protocol.clocks import LamportClock
from protocol.codec import pack
from protocol.envelope import PROTOCOL_VERSION, seal
from protocol.errors import DropReason
from protocol.messages import (
    NO_PREV,
    Batch,
    Kind,
    Op,
    derive_table_id,
    op_body,
    seal_op,
)
from protocol.signing import SigningKeyPair
from protocol.sync import SyncPeer
from tools.fuzz.schedule import Schedule
from tools.fuzz.table import FuzzTable, Peer, TableConfig
from tools.fuzz.watching import decoded

ATTACK_AT: Final = 3.0  # simulated second the adversary starts (the round is on by then)
ADVERSARIES: Final = (
    "forger",
    "replayer",
    "equivocator",
    "backdater",
    "blind",
    "non_member",
    "spectator_mover",
    "reveal_cheat",
    "lobby_wedger",
    "join_flooder",
    "datagram_flooder",
    "withholder",
    "garbled_author",
)


@dataclass
class Watch:
    """When each honest peer first noticed: by events naming the adversary, or by a drop
    counter rising after the attack began."""

    adversary: bytes
    reasons: tuple[DropReason, ...] = ()
    seen: dict[int, float] = field(default_factory=dict)
    baseline: dict[int, int] = field(default_factory=dict)


def reauthor(op: Op, key: SigningKeyPair, **changes: Any) -> Op:
    fields = {
        "kind": op.kind,
        "table": op.table,
        "author": op.author,
        "seq": op.seq,
        "prev": op.prev,
        "lamport": op.lamport,
        "epoch": op.epoch,
        "deps": [list(d) for d in op.lobby_deps] if op.epoch == 0 else list(op.round_deps),
        "payload": op.payload,
    }
    fields.update(changes)
    payload = fields.pop("payload")
    return seal_op(key, op_body(payload=_thaw(payload), **fields))


def _thaw(value: object) -> object:
    return [_thaw(v) for v in value] if isinstance(value, tuple) else value


def _own_ops(
    table: FuzzTable, peer_index: int, out: list[tuple[Hashable, bytes]]
) -> list[tuple[int, Op]]:
    """The ops of its own among what a peer sends, with their places in `out`."""
    me = table.peers[peer_index].key.key_id
    found: list[tuple[int, Op]] = []
    for i, (_, datagram) in enumerate(out):
        message = decoded(datagram, table.table_id)
        if isinstance(message, Op) and message.author == me:
            found.append((i, message))
    return found


def _rewriting(
    peer_index: int, kind: Kind, lie: Callable[[Op], Op]
) -> Callable[[FuzzTable, list[tuple[Hashable, bytes]]], list[tuple[Hashable, bytes]]]:
    """A `Peer.transform` for peer `peer_index`: each op of its own of `kind` goes out as
    the op `lie` makes of it instead."""

    def transform(t: FuzzTable, out: list[tuple[Hashable, bytes]]) -> list[tuple[Hashable, bytes]]:
        result = list(out)
        for i, op in _own_ops(t, peer_index, out):
            if op.kind == kind:
                result[i] = (result[i][0], lie(op).datagram())
        return result

    return transform


def _from_attack(
    table: FuzzTable, every: Callable[[], float], action: Callable[[FuzzTable], bool]
) -> None:
    """`action` at `ATTACK_AT`, and again `every()` seconds later for as long as it says
    True."""

    def turn(t: FuzzTable) -> None:
        if action(t):
            t.call_at(t.now + every(), turn)

    table.call_at(ATTACK_AT, turn)


def _to_honest(table: FuzzTable, datagram: bytes, source: Hashable) -> None:
    """`datagram` to every honest peer of the table (the adversary sits last), now."""
    for p in table.peers[:-1]:
        table.inject(table.now, p.index, datagram, source)


def _next_move_body(sync: SyncPeer, number: int, participants: Sequence[bytes]) -> list[object]:
    """The body of the MOVE "turn" that `sync` would author next in round `number`."""
    return op_body(
        Kind.MOVE,
        sync.table,
        sync.me,
        sync.delivered(sync.me) + 1,
        sync.logs[sync.me][-1].hash,
        sync.clock.value + 1,
        number,
        [sync.delivered(p) for p in participants],
        "turn",
    )


class BlindSyncPeer(SyncPeer):
    """Admits to seeing nothing but its own ops (and keeps its clock low): its moves sort
    early and win races. Its deps name only itself; its clock only clears the START floor."""

    def deps_for(self, kind: Kind, epoch: int, payload: object) -> list[object]:
        deps = super().deps_for(kind, epoch, payload)
        if epoch == 0 or kind == Kind.START:
            return deps
        log = self.epochs[epoch]
        return [d if p == self.me else 0 for p, d in zip(log.participants, deps, strict=True)]

    def author(self, kind: Kind, epoch: int, payload: object) -> Op:
        if epoch and epoch in self.epochs:
            own = self.logs[self.me][-1].lamport if self.logs.get(self.me) else 0
            floor = max(own, self.epochs[epoch].start.lamport)
            self.clock = LamportClock(floor)
        return super().author(kind, epoch, payload)


def table_with_adversary(config: TableConfig, *, spectator: bool = False) -> tuple[FuzzTable, Peer]:
    """The honest players of `config` and one more peer, the adversary (a player, or a
    spectator), which sits last."""
    cfg = replace(
        config, players=config.players + (0 if spectator else 1), spectators=1 if spectator else 0
    )
    table = FuzzTable(cfg, Schedule(cfg.seed))
    table.peers[-1].honest = False
    # The host seats exactly the honest players plus a playing adversary.
    return table, table.peers[-1]


# --- the adversaries -------------------------------------------------------------------------

Setup = Callable[[TableConfig], tuple[FuzzTable, Watch]]


def _forger(config: TableConfig) -> tuple[FuzzTable, Watch]:
    """Sends MOVEs in an honest player's name, signed with its own key."""
    table, bad = table_with_adversary(config)
    victim = table.peers[1]
    rng = random.Random(f"forger/{config.seed}")

    def forge(t: FuzzTable) -> bool:
        rnd = victim.replica.current_round
        if rnd is not None:
            body = _next_move_body(victim.replica.sync, rnd.number, rnd.log.participants)
            # The victim's name on it, the forger's signature under it.
            _to_honest(t, seal(bad.key, body), bad.index)
        return True

    _from_attack(table, lambda: 0.25 + rng.random() * 0.25, forge)
    return table, Watch(victim.key.key_id, (DropReason.BAD_SIGNATURE,))


def _replayer(config: TableConfig) -> tuple[FuzzTable, Watch]:
    """Captures the table's traffic and sends it all again, in bursts, to everyone."""
    table, bad = table_with_adversary(config)
    captured: list[bytes] = []
    table.taps.append(lambda s, d, data: captured.append(data) if len(captured) < 5000 else None)
    rng = random.Random(f"replayer/{config.seed}")

    def replay(t: FuzzTable) -> bool:
        for datagram in rng.sample(captured, min(200, len(captured))):
            t.inject(t.now, rng.randrange(len(t.peers) - 1), datagram, bad.index)
        return True

    _from_attack(table, lambda: 0.5, replay)
    return table, Watch(bad.key.key_id, (DropReason.REPLAYED,))


def _equivocator(config: TableConfig) -> tuple[FuzzTable, Watch]:
    """Each of its moves goes to half the table as is and to the other half changed."""
    table, bad = table_with_adversary(config)

    def transform(t: FuzzTable, out: list[tuple[Hashable, bytes]]) -> list[tuple[Hashable, bytes]]:
        if t.now < ATTACK_AT:
            return out
        result = list(out)
        for i, op in _own_ops(t, bad.index, out):
            if op.kind != Kind.MOVE:
                continue
            other = reauthor(op, bad.key, payload="stuck" if op.payload != "stuck" else "turn")
            half = len(t.peers) // 2
            result[i] = ("drop", b"")
            for p in range(len(t.peers) - 1):
                result.append((p, op.datagram() if p < half else other.datagram()))
        return [(d, g) for d, g in result if d != "drop"]

    bad.transform = transform
    return table, Watch(bad.key.key_id, (DropReason.EQUIVOCATION,))


def _backdater(config: TableConfig) -> tuple[FuzzTable, Watch]:
    """Stamps its first move after the attack just above its own previous op."""
    table, bad = table_with_adversary(config)
    done: list[bool] = []

    def transform(t: FuzzTable, out: list[tuple[Hashable, bytes]]) -> list[tuple[Hashable, bytes]]:
        if t.now < ATTACK_AT or done:
            return out
        result = list(out)
        sync = bad.replica.sync
        for i, op in _own_ops(t, bad.index, out):
            if op.kind != Kind.MOVE or op.seq < 2:
                continue
            previous = sync.logs[sync.me][op.seq - 2]
            backdated = reauthor(op, bad.key, lamport=previous.lamport + 1)
            if backdated.lamport < op.lamport:
                result[i] = (result[i][0], backdated.datagram())
                done.append(True)
                break
        return result

    bad.transform = transform
    return table, Watch(bad.key.key_id, (DropReason.BACKDATED,))


def _blind(config: TableConfig) -> tuple[FuzzTable, Watch]:
    table, bad = table_with_adversary(replace(config, level="expert"))
    bad.replica.sync.__class__ = BlindSyncPeer
    return table, Watch(bad.key.key_id, (DropReason.BACKDATED, DropReason.EQUIVOCATION))


def _outsider_op(
    table: FuzzTable, key: SigningKeyPair, kind: Kind, payload: object, seq: int = 1
) -> bytes:
    host = table.peers[0].replica.sync
    rnd = table.peers[0].replica.current_round
    epoch = rnd.number if rnd is not None and kind != Kind.JOIN else 0
    deps: list[object] = (
        [0] * len(rnd.log.participants) if epoch and rnd is not None else [[host.me, 1]]
    )
    op = seal_op(
        key,
        op_body(
            kind,
            table.table_id,
            key.key_id,
            seq,
            NO_PREV,
            host.clock.value + 5,
            epoch,
            deps,
            payload,
        ),
    )
    return op.datagram()


def _non_member(config: TableConfig) -> tuple[FuzzTable, Watch]:
    """Never joins, and sends moves for the round."""
    table, _ = table_with_adversary(config)
    key = SigningKeyPair(hashlib.sha256(f"outsider/{config.seed}".encode()).digest())

    def attack(t: FuzzTable) -> bool:
        if t.peers[0].replica.current_round is not None:
            _to_honest(t, _outsider_op(t, key, Kind.MOVE, "turn"), "outsider")
        return True

    _from_attack(table, lambda: 0.5, attack)
    return table, Watch(key.key_id, (DropReason.UNKNOWN_AUTHOR, DropReason.NOT_A_MEMBER))


def _spectator_mover(config: TableConfig) -> tuple[FuzzTable, Watch]:
    """Joins as a spectator, then signs moves as if it had a seat."""
    table, bad = table_with_adversary(config, spectator=True)

    def attack(t: FuzzTable) -> bool:
        sync = bad.replica.sync
        rnd = bad.replica.current_round
        if rnd is None or not sync.logs.get(sync.me):
            return True  # not seated in a round yet: try again
        body = _next_move_body(sync, rnd.number, rnd.log.participants)
        _to_honest(t, seal(bad.key, body), bad.index)
        return False

    _from_attack(table, lambda: 0.5, attack)
    return table, Watch(bad.key.key_id, (DropReason.SPECTATOR_OP,))


def _reveal_cheat(config: TableConfig) -> tuple[FuzzTable, Watch]:
    """Its REVEAL names a seed that is not the one it committed to."""
    table, bad = table_with_adversary(config)

    bad.transform = _rewriting(
        bad.index, Kind.REVEAL, lambda op: reauthor(op, bad.key, payload=[bytes(32), op.payload[1]])
    )
    return table, Watch(bad.key.key_id, ())


def _lobby_wedger(config: TableConfig) -> tuple[FuzzTable, Watch]:
    """READY with shown=[]: a round that seats it cannot start."""
    table, bad = table_with_adversary(config)

    def wedge(op: Op) -> Op:
        return reauthor(op, bad.key, payload=[*op.payload[:2], [], *op.payload[3:]])

    bad.transform = _rewriting(bad.index, Kind.READY, wedge)
    return table, Watch(bad.key.key_id, ())


def _join_flooder(config: TableConfig) -> tuple[FuzzTable, Watch]:
    """JOINs from hundreds of made-up members."""
    table, bad = table_with_adversary(config)
    count = [0]

    def attack(t: FuzzTable) -> bool:
        for _ in range(50):
            count[0] += 1
            key = SigningKeyPair(
                hashlib.sha256(f"flood/{config.seed}/{count[0]}".encode()).digest()
            )
            payload = [key.public_key, f"j{count[0]}", 1]
            _to_honest(t, _outsider_op(t, key, Kind.JOIN, payload), bad.index)
        return count[0] < 500

    _from_attack(table, lambda: 0.1, attack)
    return table, Watch(bad.key.key_id, (DropReason.RATE_LIMITED, DropReason.NOT_A_MEMBER))


def _datagram_flooder(config: TableConfig) -> tuple[FuzzTable, Watch]:
    """5,000 datagrams a second from one address at every honest peer, for 10 seconds."""
    table, bad = table_with_adversary(config)
    rng = random.Random(f"flood/{config.seed}")
    junk = [
        derive_table_id(rng.randbytes(32), rng.randbytes(8)) * rng.randint(1, 100)
        for _ in range(64)
    ]
    end = ATTACK_AT + 10.0

    def attack(t: FuzzTable) -> bool:
        for _ in range(50):
            _to_honest(t, rng.choice(junk), bad.index)
        return t.now < end

    _from_attack(table, lambda: 0.01, attack)
    return table, Watch(bad.key.key_id, (DropReason.RATE_LIMITED,))


def swap_op(
    datagram: bytes, op: Op, copy: Callable[[], tuple[bytes, bytes]], key: SigningKeyPair
) -> bytes:
    """`datagram` with `op` in it, on its own or in a BATCH (re-signed with `key`, the
    sender's), swapped for another copy: `copy()` gives its (body, signature)."""
    message = decoded(datagram, op.table)
    if isinstance(message, Op) and message.hash == op.hash:
        return pack([PROTOCOL_VERSION, *copy()])
    if isinstance(message, Batch) and any(body == op.body for body, _ in message.ops):
        ops = [list(copy()) if body == op.body else [body, sig] for body, sig in message.ops]
        return seal(key, [int(Kind.BATCH), op.table, message.sender, ops])
    return datagram


def invalid_copies(op: Op, previous: Op, key: SigningKeyPair) -> Callable[[], tuple[bytes, bytes]]:
    """Copies of `op` that every peer rejects, in turn: validly signed but stamped no later
    than `previous` (the author's op seq-1: `backdated`), and that body with a signature of
    zero bytes (`bad_signature`). Not `op`'s own body with a bad signature: the author's
    next op names that body by `prev`, which vouches for it (PROTOCOL.md 4, step 6)."""
    backdated = reauthor(op, key, lamport=previous.lamport)
    turn = [0]

    def copy() -> tuple[bytes, bytes]:
        turn[0] += 1
        if turn[0] % 2:
            return backdated.body, backdated.signature
        return backdated.body, bytes(64)

    return copy


def _withholder(config: TableConfig) -> tuple[FuzzTable, Watch]:
    """Its first move after the attack goes out only as invalid copies (`invalid_copies`),
    to every peer and every time it sends it (its answers to requests too): never the
    valid op. It goes on heartbeating (its heartbeats name that move) and playing on top of
    it. Contained when the others agree that it has departed: a heartbeat naming an op
    nobody can deliver is no sign of life (PROTOCOL.md 13.1)."""
    table, bad = table_with_adversary(config)
    withheld: list[tuple[Op, Callable[[], tuple[bytes, bytes]]]] = []

    def transform(t: FuzzTable, out: list[tuple[Hashable, bytes]]) -> list[tuple[Hashable, bytes]]:
        if t.now < ATTACK_AT:
            return out
        if not withheld:
            log = bad.replica.sync.logs[bad.key.key_id]
            for _, op in _own_ops(t, bad.index, out):
                if op.kind == Kind.MOVE and op.seq >= 2:
                    withheld.append((op, invalid_copies(op, log[op.seq - 2], bad.key)))
                    break
            else:
                return out
        op, copy = withheld[0]
        return [(to, swap_op(datagram, op, copy, bad.key)) for to, datagram in out]

    bad.transform = transform
    return table, Watch(bad.key.key_id, ())


def _garbled_author(config: TableConfig) -> tuple[FuzzTable, Watch]:
    """Its first move after the attack goes out with a signature of zero bytes, to every
    peer and every time (its answers too), and it plays on top of it: its next op names the
    move by `prev`, which vouches for it (PROTOCOL.md 4). Contained when every honest peer
    takes the move on that voucher (nobody votes it out, nothing splits)."""
    table, bad = table_with_adversary(config)
    garbled: list[Op] = []

    def transform(t: FuzzTable, out: list[tuple[Hashable, bytes]]) -> list[tuple[Hashable, bytes]]:
        if t.now < ATTACK_AT:
            return out
        if not garbled:
            move = next((op for _, op in _own_ops(t, bad.index, out) if op.kind == Kind.MOVE), None)
            if move is None:
                return out
            garbled.append(move)
        op = garbled[0]
        return [(to, swap_op(d, op, lambda: (op.body, bytes(64)), bad.key)) for to, d in out]

    bad.transform = transform
    return table, Watch(bad.key.key_id, (DropReason.BAD_SIGNATURE,))


SETUPS: Final[dict[str, Setup]] = {
    "forger": _forger,
    "replayer": _replayer,
    "equivocator": _equivocator,
    "backdater": _backdater,
    "blind": _blind,
    "non_member": _non_member,
    "spectator_mover": _spectator_mover,
    "reveal_cheat": _reveal_cheat,
    "lobby_wedger": _lobby_wedger,
    "join_flooder": _join_flooder,
    "datagram_flooder": _datagram_flooder,
    "withholder": _withholder,
    "garbled_author": _garbled_author,
}
