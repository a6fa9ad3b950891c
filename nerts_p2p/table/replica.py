"""A table as every peer holds it: the sync state machine of `protocol` under the game.

`TableReplica` is sans-I/O like the `SyncPeer` it wraps: the trio node (later) feeds it
datagrams and the time and sends what it returns. It turns delivered ops into the game:

- the lobby: who is at the table, who is ready for the next round, the table's rules;
- each round: the ops of the round in `(lamport, tiebreak)` order folded through the rules
  engine. A late op that sorts before others re-folds from its position: that is a rollback,
  and a local move that no longer fits becomes a `RaceLost` event saying who was first;
- "cards in the air": after the op that ended the round, an op still counts if its author's
  deps do not include that op (its author had not seen the end);
- the fair deal: READY carries a commitment to the seed and the cards the seed shows; once
  the end of a round is stable each player reveals its seed, and when every reveal is stable
  the round is audited and scored on every peer alike (`RoundFinal`), cheaters named.

Randomness (deal seeds, salts) is handed in by the shell; nothing here reads a clock.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from nerts_p2p.game.audit import AuditReport, audit_round
from nerts_p2p.game.cards import make_card
from nerts_p2p.game.deck import SALT_BYTES, SEED_BYTES, deal_seat
from nerts_p2p.game.engine import apply, complete, declare_gone, public_start, shown_cards
from nerts_p2p.game.errors import NertsError, NotationError, Rejection, RejectReason
from nerts_p2p.game.moves import TO_FOUNDATION, Move, move_text, parse_move
from nerts_p2p.game.position import state_digest, state_hash
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.scoring import SeatScore, match_winner, score_round
from nerts_p2p.game.state import GameState
from protocol.admission import refusal_words
from protocol.clocks import VersionVector
from protocol.errors import LocalProtocolError, RemoteProtocolError
from protocol.messages import MIX_NONCE_LEN, PLAYER, SPECTATOR, Kind, Op
from protocol.order import EpochLog, nonce_commitment
from protocol.sealed import open_from, seal_for
from protocol.signing import SigningKeyPair
from protocol.sync import (
    AuthorExpelled,
    DeparturesChanged,
    DivergenceDetected,
    OpDelivered,
    OpRejected,
    SyncPeer,
)

from .gate import TableGate, seating_problem
from .presence import LAG_WARN, PRESENCE_CHECK, Presence, open_escrow, seal_escrow
from .wire import rules_from_wire, rules_to_wire

COMMIT_DOMAIN = b"nerts-p2p/deal\0"
#: The REVEAL payload of a participant that deals no seed (a partner): its end of the round.
END_MARKER = (bytes(SEED_BYTES), bytes(SALT_BYTES))


LOBBY_HASH_DOMAIN = b"nerts-p2p/lobby\0"


def lobby_state_hash(vector: Sequence[tuple[bytes, int]]) -> bytes:
    """The state hash a heartbeat carries before the first round (PROTOCOL.md section 9): the
    lobby is a function of exactly the ops in the vector, so the vector names it. First 16
    bytes of SHA-256("nerts-p2p/lobby" || 0x00 || author || seq as 4 bytes big-endian ...),
    entries in the vector's order (authors ascending)."""
    data = b"".join(author + seq.to_bytes(4, "big") for author, seq in vector)
    return hashlib.sha256(LOBBY_HASH_DOMAIN + data).digest()[:16]


def deal_commitment(seed: bytes, salt: bytes) -> bytes:
    return hashlib.sha256(COMMIT_DOMAIN + seed + salt).digest()


# --- game events ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RoundStarted:
    round: int
    seat: int | None  # ours, or None when we watch


@dataclass(frozen=True)
class StableState:
    """The stable prefix of a round grew: this state can no longer change on any peer."""

    round: int
    stable_ops: int
    state: GameState = field(repr=False)

    @cached_property
    def state_hash(self) -> str:
        # Hashed when someone reads it: a peer catching up announces a stable prefix per
        # datagram, and hashing a state costs more than folding an op.
        return state_hash(self.state)


@dataclass(frozen=True)
class RaceLost:
    """One of our moves was applied, then a late op sorted before it and it no longer fits."""

    round: int
    move: Move
    reason: str
    winner_seat: int | None


@dataclass(frozen=True)
class RoundEnded:
    round: int
    ended_by: str
    called_by: int | None


@dataclass(frozen=True)
class RoundFinal:
    round: int
    scores: tuple[SeatScore, ...]
    cheaters: frozenset[int]
    audit: AuditReport
    totals: tuple[int, ...]
    match_winner: int | None
    #: Seats whose players departed (PROTOCOL.md 13): frozen as they lay, scored that way,
    #: and not audited (their seeds were never revealed).
    departed: frozenset[int] = frozenset()


@dataclass(frozen=True)
class SeatDeparted:
    """The round's other participants agreed that this seat's player has gone."""

    round: int
    seat: int
    author: bytes


@dataclass(frozen=True)
class SeatLagging:
    """A participant has not acknowledged what the others have for `seconds`: a peer that
    hides what it saw (or a bad link). Past the bound it is treated as silent."""

    round: int
    seat: int
    author: bytes
    seconds: float


@dataclass(frozen=True)
class PeerExpelled:
    author: bytes
    seq: int


@dataclass(frozen=True)
class ProtocolViolation:
    author: bytes
    reason: str


@dataclass(frozen=True)
class Divergence:
    peer: bytes


GameEvent = (
    RoundStarted
    | StableState
    | RaceLost
    | RoundEnded
    | RoundFinal
    | PeerExpelled
    | ProtocolViolation
    | Divergence
    | SeatDeparted
    | SeatLagging
)


# --- one round ------------------------------------------------------------------------------


@dataclass
class FoldStep:
    op: Op
    move: Move | None
    applied: bool
    reason: str
    #: After the round's end: True if the move counted as in the air, None if its author had
    #: already seen the end (so it is out of the round, and out of the audit's replay too).
    in_the_air: bool | None = False
    #: departed seats declared gone (stuck for good) right after this op; the audit
    #: replays them too
    departed_stuck: tuple[int, ...] = ()


@dataclass
class ReplicatedRound:
    number: int
    rules: Rules
    log: EpochLog
    seat_of: dict[bytes, int]
    commitments: dict[bytes, bytes]  # participant -> its READY commitment
    dealer: dict[int, bytes]  # seat -> the participant whose deck it plays
    start_state: GameState
    states: list[GameState] = field(default_factory=list)  # states[i]: after i ops
    steps: list[FoldStep] = field(default_factory=list)
    end_position: int | None = None
    reveals: dict[bytes, Op] = field(default_factory=dict)  # dealer -> its REVEAL
    final: RoundFinal | None = None
    revealed: bool = False
    shared: bool = False  # partnerships: our seed went to our partner
    announced_stable: int = 0  # ops in the stable prefix when we last said so
    #: our lost races, not yet stable: op hash -> (the move, the op's order key)
    losses: dict[bytes, tuple[Move, tuple[int, bytes]]] = field(default_factory=dict)
    #: op hash -> its move, or why it is unreadable (a re-fold does not parse again)
    parsed: dict[bytes, Move | str] = field(default_factory=dict)
    covered: dict[bytes, bool] = field(default_factory=dict)  # op hash -> nonces_covered

    def __post_init__(self) -> None:
        if not self.states:
            self.states = [self.start_state]

    @property
    def state(self) -> GameState:
        return self.states[-1]

    @property
    def stable_state(self) -> GameState:
        return self.states[min(self.log.stable_count(), len(self.states) - 1)]

    def fold_from(self, position: int) -> list[FoldStep]:
        """Re-fold the ops from `position` on; returns the steps that were replaced."""
        position = min(position, len(self.steps))
        old = self.steps[position:]
        del self.steps[position:]
        del self.states[position + 1 :]
        if self.end_position is not None and self.end_position >= position:
            self.end_position = None
        for op in self.log.ops[position:]:
            self.fold_one(op)
        return old

    def fold_one(self, op: Op) -> None:
        state = self.states[-1]
        step = FoldStep(op, None, False, "")
        position = len(self.steps)
        key = self.log.keys[position] if position < len(self.log.keys) else self.log.order_key(op)
        if op.kind == Kind.MOVE and self.log.counts(op):
            seat = self.seat_of[op.author]
            result: GameState | Rejection
            parsed = self.parsed.get(op.hash)
            if parsed is None:
                # Parsed once per op: a late op sorting early re-folds the ops after it.
                try:
                    parsed = parse_move(f"{seat} {op.payload}")
                except NotationError as exc:
                    parsed = f"unreadable move: {exc}"
                self.parsed[op.hash] = parsed
            if isinstance(parsed, str):
                result = Rejection(RejectReason.NO_SUCH_PILE, parsed)
            else:
                step.move = parsed
                if self.nonces_covered(op, key):
                    result = self._apply(state, op, step.move, step)
                else:
                    # PROTOCOL.md 6: ties are coins of every participant's nonce, so no move
                    # counts before its author had seen every nonce.
                    result = Rejection(
                        RejectReason.MISSING_REVEAL,
                        "played before every player's mix nonce had arrived",
                    )
            if isinstance(result, Rejection):
                step.reason = result.message
            else:
                step.applied = True
                state = result
        state = self._departed_say_stuck(state, key, step)
        if state.ended_by is not None and self.end_position is None:
            self.end_position = position
        self.steps.append(step)
        self.states.append(state)

    def nonces_covered(self, op: Op, key: tuple[int, bytes]) -> bool:
        """The op's author had every mix nonce it owed at its place in the order."""
        log = self.log
        # Once every nonce is in and nobody departed or was expelled, the answer depends on
        # the op alone: remembered, since a re-fold asks again for every op after a late one.
        settled = (
            not log.departed_at and not log.excluded and len(log.nonces) == len(log.participants)
        )
        if settled:
            known = self.covered.get(op.hash)
            if known is not None:
                return known
        covered = all(log.covers_nonce(op, p) for p in log.participants if log.owes_nonce(p, key))
        if settled:
            self.covered[op.hash] = covered
        return covered

    def departed_seats(self, key: tuple[int, bytes] | None = None) -> frozenset[int]:
        """Seats all of whose players had departed at `key` in the order (None: by now)."""
        gone: dict[int, bool] = {}
        for player, seat in self.seat_of.items():
            at = self.log.departed_at.get(player)
            gone[seat] = gone.get(seat, True) and at is not None and (key is None or at <= key)
        return frozenset(seat for seat, left in gone.items() if left)

    def _departed_say_stuck(
        self, state: GameState, key: tuple[int, bytes], step: FoldStep
    ) -> GameState:
        """A departed seat is frozen as it lies: it counts as stuck, so the others can
        still end the round by all being stuck."""
        if not self.log.departed_at or state.ended_by is not None:
            return state
        for seat in sorted(self.departed_seats(key)):
            if not state.seats[seat].stuck and state.ended_by is None:
                state = declare_gone(state, seat)
                step.departed_stuck += (seat,)
        return state

    def _apply(self, state: GameState, op: Op, move: Move, step: FoldStep) -> GameState | Rejection:
        if state.ended_by is None or self.end_position is None:
            return apply(state, move)
        end_op = self.steps[self.end_position].op
        seen_end = op.round_deps[self.log.index[end_op.author]] >= end_op.seq
        if seen_end or op.author == end_op.author:
            step.in_the_air = None
            return Rejection(RejectReason.ROUND_OVER, "the round was over when this was played")
        step.in_the_air = True
        return apply(state, move, in_the_air=True)

    def covers_end(self, op: Op) -> bool:
        """Had `op`'s author seen the op that ended the round (its deps name it)?"""
        if self.end_position is None:
            return False
        end_op = self.steps[self.end_position].op
        return op.round_deps[self.log.index[end_op.author]] >= end_op.seq

    def end_is_stable(self) -> bool:
        return self.end_position is not None and self.end_position < self.log.stable_count()

    def moves_in_fold_order(self) -> list[tuple[Move, bool] | int]:
        """Every parsed move with its in-the-air flag, for the audit."""
        out: list[tuple[Move, bool] | int] = []
        for step in self.steps:
            if step.move is not None and step.in_the_air is not None:
                out.append((step.move, step.in_the_air))
            out.extend(step.departed_stuck)
        return out


# --- the table ------------------------------------------------------------------------------


class TableReplica:
    """Everything one peer knows and decides about one table."""

    def __init__(
        self, sync: SyncPeer, *, name: str, role: int, randomness: Callable[[int], bytes]
    ) -> None:
        self.sync = sync
        TableGate(sync).install()  # the game's checks at the gate: nobody can wedge the table
        self.name = name
        self.role = role
        self.randomness = randomness
        self.rounds: dict[int, ReplicatedRound] = {}
        #: Match totals per player (the dealer of a seat; partners share it).
        self.totals: dict[bytes, int] = {}
        self.my_secrets: dict[int, tuple[bytes, bytes]] = {}  # round -> (seed, salt)
        self.my_nonces: dict[int, bytes] = {}  # round -> our mix nonce (PROTOCOL.md 6)
        self.presence = Presence()
        self._events: list[GameEvent] = []
        self._digest_of: tuple[GameState, bytes] | None = None

    # --- construction ----------------------------------------------------------------

    @classmethod
    def open_table(
        cls,
        key: SigningKeyPair,
        *,
        name: str,
        rules: Rules,
        spectators: bool,
        randomness: Callable[[int], bytes],
        heartbeat_interval: float = 0.075,
        private: bool = False,
    ) -> TableReplica:
        """`private`: joining needs the passphrase whose key `use_table_key` gives the
        replica (PROTOCOL.md 17); the OPEN says so."""
        from protocol.messages import derive_table_id

        nonce = randomness(8)
        table = derive_table_id(key.public_key, nonce)
        replica = cls(
            SyncPeer(key, table, heartbeat_interval=heartbeat_interval),
            name=name,
            role=PLAYER,
            randomness=randomness,
        )
        replica.sync.author(
            Kind.OPEN,
            0,
            [key.public_key, name, rules_to_wire(rules), rules.seats, spectators, nonce, private],
        )
        replica.sync.admission.player_limit = rules.seats * (2 if rules.partnerships else 1)
        replica._after_sync()
        return replica

    @classmethod
    def joining(
        cls,
        key: SigningKeyPair,
        table: bytes,
        *,
        name: str,
        role: int,
        randomness: Callable[[int], bytes],
        heartbeat_interval: float = 0.075,
        restarting: bool = False,
    ) -> TableReplica:
        """A replica that will join `table` once it has the table's OPEN (`join` after
        `request_table`). `restarting`: this key may have been at the table before and its
        log is lost; it authors nothing until the table has shown it its own ops
        (PROTOCOL.md 14), then continues its chain (no JOIN if it is already a member)."""
        replica = cls(
            SyncPeer(key, table, heartbeat_interval=heartbeat_interval),
            name=name,
            role=role,
            randomness=randomness,
        )
        if restarting:
            replica.sync.quarantine()
        return replica

    @classmethod
    def restore(
        cls,
        key: SigningKeyPair,
        table: bytes,
        stored_ops: Iterable[bytes],
        *,
        name: str,
        role: int,
        randomness: Callable[[int], bytes],
        heartbeat_interval: float = 0.075,
        complete: bool = True,
        clock: int = 0,
    ) -> TableReplica:
        """A replica rebuilt from the op datagrams a node's store kept (its own ops and any
        others, in any order). Our deal seeds and mix nonces come back from the escrow in
        our own READYs, so the store need not keep secrets. `complete=False` when the
        store may have lost our latest ops (then we wait as a restart does). `clock`: the
        last Lamport time the store saw us use (heartbeats promise it, so our next op must
        be stamped above it)."""
        replica = cls.joining(
            key,
            table,
            name=name,
            role=role,
            randomness=randomness,
            heartbeat_interval=heartbeat_interval,
            restarting=not complete,
        )
        replica.sync.load(list(stored_ops))
        replica.sync.clock.observe(clock)
        if complete:
            # Quiet until caught up: our ops wait for their deps, and our last heartbeats
            # promised deps we may not hold yet (PROTOCOL.md 14).
            replica.sync.resume()
        replica._after_sync()
        return replica

    # --- reading ---------------------------------------------------------------------

    @property
    def me(self) -> bytes:
        return self.sync.me

    @property
    def rules(self) -> Rules | None:
        op = self.sync.open_op
        return rules_from_wire(op.payload[2]) if op is not None else None

    @property
    def is_member(self) -> bool:
        return self.me in self.sync.members

    @property
    def can_author(self) -> bool:
        """False while a restarted peer waits to be shown its own ops, or to catch up."""
        return self.sync.quarantined is None and self.sync.resuming is None

    @property
    def current_round(self) -> ReplicatedRound | None:
        return self.rounds[max(self.rounds)] if self.rounds else None

    @property
    def seat(self) -> int | None:
        rnd = self.current_round
        return rnd.seat_of.get(self.me) if rnd else None

    def upcoming_round(self) -> int | None:
        """The round the lobby prepares now: None while a round is still being played or
        the match is won (every shell's "between rounds" asks this one question)."""
        last = max(self.rounds) if self.rounds else 0
        if last:
            final = self.rounds[last].final
            if final is None or final.match_winner is not None:
                return None
        return last + 1

    def may_start(self, round_number: int, ready_needed: int) -> bool:
        """Whether we are the one to START `round_number` (the host, or its successor after
        a departure: PROTOCOL.md 5) and at least `ready_needed` players are ready for it."""
        return (
            round_number not in self.sync.epochs
            and self.sync.starter(round_number) == self.me
            and len(self.ready_players(round_number)) >= ready_needed
        )

    def ready_players(self, round_number: int) -> list[bytes]:
        return [
            a
            for (r, a), ops in sorted(self.sync.readies.items())
            if r == round_number and ops and not self.sync.members[a].left
        ]

    def events(self) -> list[GameEvent]:
        out, self._events = self._events, []
        return out

    # --- intents ---------------------------------------------------------------------

    def join(self) -> Op | None:
        """Join the table: ask the host to admit us (PROTOCOL.md 17), and JOIN once its
        ADMIT is here. Returns the JOIN if it could be signed now; else it is signed by
        itself when the admission arrives (`admission_refused` says if it never will)."""
        if self.sync.open_op is None:
            raise NertsError("the table's OPEN has not arrived yet")
        door = self.sync.admission
        door.knock(self.role, self.name, door.now)
        op = self._join_if_admitted()
        self._after_sync()
        return op

    @property
    def admission_refused(self) -> str | None:
        """Why the host did not let us in, in words; None while we may still get in."""
        door = self.sync.admission
        if door.refused is None or self.is_member:
            return None
        return refusal_words(door.refused)

    def use_table_key(self, key: bytes) -> None:
        """The table key derived from the passphrase (`protocol.admission.table_key`)."""
        self.sync.admission.key = key

    def _join_if_admitted(self) -> Op | None:
        sync = self.sync
        door = sync.admission
        if door.wanted is None or self.is_member or not self.can_author:
            return None
        admitted = sync.admits.get(self.me)
        if admitted is None or sync.host is None or sync.delivered(sync.host) < admitted[0]:
            return None
        try:
            return sync.author(Kind.JOIN, 0, [sync.key.public_key, self.name, self.role])
        except LocalProtocolError:
            return None  # not yet (a restart waits for its own chain): asked again later

    def request_table(self, host: bytes, address: Hashable, now: float) -> None:
        """Ask the host for its OPEN (its op 1) before joining."""
        self.sync.admission.host_address = address
        self.sync.request(address, [(host, 1, 1)], now)

    def ready(self) -> Op:
        """Commit to a fresh deal for the next round and show its face-up cards."""
        rules = self.rules
        if rules is None or self.role != PLAYER:
            raise NertsError("only a player at an open table can be ready")
        number = (max(self.rounds) if self.rounds else 0) + 1
        seed, salt = self.randomness(SEED_BYTES), self.randomness(SALT_BYTES)
        nonce = self.randomness(MIX_NONCE_LEN)
        deal = deal_seat(rules, 0, seed)
        shown = [deal.nerts[-1] & 63, *(c & 63 for c in deal.work)]
        escrow = seal_escrow(self.sync.key, seed + salt + nonce, self.randomness(24))
        op = self.sync.author(
            Kind.READY,
            0,
            [number, deal_commitment(seed, salt), shown, nonce_commitment(nonce), escrow],
        )
        self.my_secrets[number] = (seed, salt)
        self.my_nonces[number] = nonce
        self._after_sync()
        return op

    def start(self) -> Op:
        """(Host) start the next round with every player who is ready for it."""
        rules = self.rules
        number = (max(self.rounds) if self.rounds else 0) + 1
        starter = self.sync.starter(number)
        if rules is None or starter != self.me:
            if starter != self.sync.host:
                raise NertsError("only the departed host's successor starts this round")
            raise NertsError("only the table's host starts a round")
        if self.rounds and self.rounds[number - 1].final is None:
            raise NertsError(f"round {number - 1} is not final yet")
        per_seat = 2 if rules.partnerships else 1
        players = self.ready_players(number)[: rules.seats * per_seat]
        players = players[: len(players) - len(players) % per_seat]
        if len(players) < 2 * per_seat:
            raise NertsError(f"a round needs at least {2 * per_seat} ready players")
        seats = [i // per_seat for i in range(len(players))]
        seated = Rules.from_dict({**rules.to_dict(), "seats": len(players) // per_seat})
        payload = [players, seats, rules_to_wire(seated)]
        # A START that would fail here would fail everywhere and use up round `number` for
        # good: check the round can start before signing it.
        latest = {p: self.sync.readies[(number, p)][-1] for p in players}
        self._round_setup(number, payload, dict(latest))
        try:
            op = self.sync.author(Kind.START, number, payload)
        except LocalProtocolError as exc:
            # Refused before it was signed or sent: round `number` is still free to start.
            raise NertsError(f"round {number} cannot start: {exc.message}") from exc
        self._after_sync()
        return op

    def leave(self) -> Op:
        """Say goodbye to the table (a LEAVE): the shell does this when its match is over,
        so the others know the match ended for this member rather than wait on it."""
        op = self.sync.author(Kind.LEAVE, 0, None)
        self._after_sync()
        return op

    def play(self, move: Move) -> Op | Rejection:
        """Play one of our moves: checked against our speculative state, completed with the
        cards it turns up, then signed and sent."""
        rnd = self.current_round
        seat = self.seat
        if rnd is None or seat is None or move.seat != seat:
            return Rejection(RejectReason.NO_SUCH_SEAT, "you have no seat in this round")
        if not self.can_author:
            return Rejection(RejectReason.MISSING_REVEAL, "restarting: waiting for our own ops")
        if any(
            p not in rnd.log.nonces and rnd.log.owes_nonce(p, (2**62, b""))
            for p in rnd.log.participants
        ):
            return Rejection(
                RejectReason.MISSING_REVEAL, "waiting for every player's mix nonce to arrive"
            )
        try:
            completed = complete(rnd.state, move)
        except NertsError:
            return Rejection(
                RejectReason.MISSING_REVEAL,
                "your partner's deal has not reached "
                "you yet: you cannot turn up cards of this seat",
            )
        result = apply(rnd.state, completed)
        if isinstance(result, Rejection):
            return result
        payload = move_text(completed).split(" ", 1)[1]
        try:
            op = self.sync.author(Kind.MOVE, rnd.number, payload)
        except LocalProtocolError as exc:
            # Refused by our own gate (the table's Lamport time spent, say): never sent.
            return Rejection(RejectReason.ROUND_OVER, exc.message)
        self._after_sync()
        return op

    # --- I/O from the shell ------------------------------------------------------------

    def receive(self, datagram: bytes, source: Hashable, now: float) -> None:
        self.sync.receive(datagram, source, now)
        self._join_if_admitted()
        self._after_sync()

    def tick(self, now: float) -> None:
        self.sync.tick(now)
        self.sync.admission.tick(now)
        self._join_if_admitted()
        self._after_sync()
        self._watch_presence(now)

    def outgoing(self) -> list[tuple[Hashable, bytes]]:
        return self.sync.outgoing()

    # --- folding -----------------------------------------------------------------------

    def _after_sync(self) -> None:
        refold: dict[int, int] = {}
        for event in self.sync.events():
            if isinstance(event, OpDelivered):
                self._on_delivered(event, refold)
            elif isinstance(event, AuthorExpelled):
                self._events.append(PeerExpelled(event.author, event.seq))
                for number in self.rounds:
                    refold[number] = 0
            elif isinstance(event, OpRejected):
                self._events.append(ProtocolViolation(event.op.author, event.message))
            elif isinstance(event, DivergenceDetected):
                self._events.append(Divergence(event.peer))
            elif isinstance(event, DeparturesChanged):
                self._on_departed(event, refold)
        for number, position in sorted(refold.items()):
            self._refold(self.rounds[number], position)
        self._note_stability()
        self._progress()
        self.sync.set_state_hash(self._state_hash)  # hashed when a heartbeat needs it

    def _on_delivered(self, event: OpDelivered, refold: dict[int, int]) -> None:
        op = event.op
        if op.kind == Kind.START:
            self._begin_round(op)
            return
        if op.epoch == 0 or event.position is None:
            return
        rnd = self.rounds.get(op.epoch)
        if rnd is None:
            return
        if op.author == self.me:
            # Ours, back from the store after a restart: never sent twice.
            rnd.revealed = rnd.revealed or op.kind == Kind.REVEAL
            rnd.shared = rnd.shared or op.kind == Kind.SEED_SHARE
        if op.kind == Kind.REVEAL:
            rnd.reveals[op.author] = op
        elif (
            op.kind == Kind.SEED_SHARE
            and op.payload[0] == self.me
            and self._take_partner_seed(rnd, op)
        ):
            refold[op.epoch] = 0
            return
        position = event.position
        if op.epoch in refold:
            refold[op.epoch] = min(refold[op.epoch], position)
        elif position == len(rnd.steps):
            was_ended = rnd.end_position is not None
            rnd.fold_one(op)
            if not was_ended and rnd.end_position is not None:
                self._announce_end(rnd)
        else:
            refold[op.epoch] = position

    def _refold(self, rnd: ReplicatedRound, position: int) -> None:
        was_ended = rnd.end_position is not None
        replaced = rnd.fold_from(position)
        new_steps = {step.op.hash: i for i, step in enumerate(rnd.steps[position:], position)}
        for old in replaced:
            if old.op.author != self.me or not old.applied:
                continue
            at = new_steps.get(old.op.hash)
            if at is not None and not rnd.steps[at].applied and old.move is not None:
                # Announced once the loss is stable: with several racers, a later op may
                # still take the race from the one that beat us first.
                rnd.losses[old.op.hash] = (old.move, rnd.log.keys[at])
        if not was_ended and rnd.end_position is not None:
            self._announce_end(rnd)

    @staticmethod
    def _race_winner(rnd: ReplicatedRound, move: Move) -> int | None:
        if move.dest_kind != TO_FOUNDATION:
            return None
        face = move.declare if move.declare >= 0 else move.card & 63
        for step in reversed(rnd.steps):
            m = step.move
            if step.applied and m is not None and m.dest_kind == TO_FOUNDATION:
                their_face = m.declare if m.declare >= 0 else m.card & 63
                if their_face == face and m.seat != move.seat:
                    return m.seat
        return None

    def _announce_end(self, rnd: ReplicatedRound) -> None:
        state = rnd.state
        self._events.append(RoundEnded(rnd.number, state.ended_by or "", state.called_by))

    def _begin_round(self, op: Op) -> None:
        """A START delivered: the round's public start state from the players' READYs. A
        START that makes no sense as a game is reported and the round never starts here, the
        same on every peer (the check depends on the START and its causal past only)."""
        participants = op.payload[0]
        readies = {p: self.sync.ready_for(op.epoch, p, op) for p in participants}
        try:
            rules, seat_of, commitments, dealer, start = self._round_setup(
                op.epoch, op.payload, readies
            )
        except NertsError as exc:
            self._events.append(ProtocolViolation(op.author, f"round cannot start: {exc}"))
            return
        log = self.sync.epochs[op.epoch]
        self.rounds[op.epoch] = ReplicatedRound(
            op.epoch, rules, log, seat_of, commitments, dealer, start
        )
        self.rounds[op.epoch].fold_one(op)
        self._events.append(RoundStarted(op.epoch, seat_of.get(self.me)))

    def _round_setup(
        self, number: int, payload: Sequence[Any], readies: dict[bytes, Op | None]
    ) -> tuple[Rules, dict[bytes, int], dict[bytes, bytes], dict[int, bytes], GameState]:
        """Rules, seating, commitments, dealers and public start state of a round from its
        START payload and the READY each participant's entry uses. Raises NertsError (in
        words) if the round cannot start: the host checks this before it signs a START."""
        participants, seats, wire_rules = payload
        rules = rules_from_wire(wire_rules)
        problem = seating_problem(rules, seats)
        if problem is not None:
            raise NertsError(problem)
        seat_of = dict(zip(participants, seats, strict=True))
        commitments: dict[bytes, bytes] = {}
        shown_by_seat: dict[int, list[int]] = {}
        dealer: dict[int, bytes] = {}
        for author in participants:
            ready = readies.get(author)
            if ready is None:
                raise NertsError("a participant has no READY for this round")
            commitments[author] = ready.payload[1]
            seat = seat_of[author]
            if seat not in dealer:
                dealer[seat] = author
                shown_by_seat[seat] = [make_card(seat, i) for i in ready.payload[2]]
        shown = [shown_by_seat[s] for s in range(rules.seats)]
        my_seat = seat_of.get(self.me)
        own_seed = None
        if my_seat is not None:
            self._recover_secrets(number, readies.get(self.me))
        if my_seat is not None and dealer.get(my_seat) == self.me:
            own_seed = self.my_secrets.get(number, (None, None))[0]
        start = public_start(rules, shown, own_seat=my_seat, own_seed=own_seed)
        return rules, seat_of, commitments, dealer, start

    def _note_stability(self) -> None:
        rnd = self.current_round
        if rnd is None:
            return
        stable = min(rnd.log.stable_count(), len(rnd.states) - 1)
        if rnd.losses:
            # Each loss is found by its order key (not by a scan of the stable prefix, which
            # would cost the whole prefix on every datagram while a loss waits).
            now_stable = []
            for op_hash, (move, key) in rnd.losses.items():
                at = bisect.bisect_left(rnd.log.keys, key)
                if at < stable and rnd.steps[at].op.hash == op_hash:
                    now_stable.append((at, op_hash, move))
            for at, op_hash, move in sorted(now_stable):
                del rnd.losses[op_hash]
                step = rnd.steps[at]
                if not step.applied:
                    winner = self._race_winner(rnd, move)
                    self._events.append(RaceLost(rnd.number, move, step.reason, winner))
        if stable > rnd.announced_stable:
            rnd.announced_stable = stable
            self._events.append(StableState(rnd.number, stable, rnd.states[stable]))

    def _progress(self) -> None:
        """Reveal our seed once the end is stable; finish rounds whose reveals are stable."""
        for rnd in self.rounds.values():
            if rnd.final is not None:
                continue
            if not self.can_author or rnd.log.excluded.get(self.me) is not None:
                if rnd.end_is_stable() and self._reveals_stable(rnd):
                    self._finish(rnd)
                continue
            self._reveal_nonce(rnd)
            if not rnd.shared and rnd.rules.partnerships:
                self._share_seed(rnd)
            if not rnd.revealed and self.me in rnd.seat_of and rnd.end_is_stable():
                self._reveal(rnd)
            if rnd.end_is_stable() and self._reveals_stable(rnd):
                self._finish(rnd)

    # --- fair ties, escrow, departures (PROTOCOL.md 6, 13, 14) ---------------------------

    def _recover_secrets(self, number: int, ready: Op | None) -> None:
        """After a restart our deal seed and mix nonce for a round are gone from memory, but
        our READY (the one the START used) escrowed them to ourselves: open it."""
        if number in self.my_secrets and number in self.my_nonces:
            return
        if ready is None:
            return
        try:
            seed, salt, nonce = open_escrow(self.sync.key, ready.payload[4])
        except RemoteProtocolError as exc:
            self._events.append(ProtocolViolation(self.me, f"our own escrow: {exc.message}"))
            return
        if deal_commitment(seed, salt) == ready.payload[1]:
            self.my_secrets[number] = (seed, salt)
        if nonce_commitment(nonce) == ready.payload[3]:
            self.my_nonces[number] = nonce

    def _reveal_nonce(self, rnd: ReplicatedRound) -> None:
        """As a participant, reveal our mix nonce once the round has started (every
        commitment is fixed by then)."""
        log = rnd.log
        if self.me not in log.index or self.me in log.nonces:
            return
        nonce = self.my_nonces.get(rnd.number)
        if nonce is not None:
            self._author_now(Kind.MIX, rnd.number, nonce)

    def _on_departed(self, event: DeparturesChanged, refold: dict[int, int]) -> None:
        rnd = self.rounds.get(event.epoch)
        if rnd is None:
            return
        for author in event.added:
            self._events.append(SeatDeparted(event.epoch, rnd.seat_of[author], author))
        if rnd.final is None:
            refold[event.epoch] = 0  # its late ops go, its seat says stuck from then on

    def _watch_presence(self, now: float) -> None:
        """Flag lagging seats; vote a silent (or hopelessly lagging) participant out."""
        rnd = self.current_round
        if rnd is None or self.me not in rnd.log.index or self.me in rnd.log.excluded:
            return
        log, presence = rnd.log, self.presence
        if presence.round != rnd.number:
            presence.reset(rnd.number)
        presence.round_seen(rnd.number, now)
        looked = rnd.final is not None
        if rnd.final is None and now >= presence.next_check:
            looked = True
            # Four looks a second are plenty for bounds of seconds, and cheap.
            presence.next_check = now + PRESENCE_CHECK
            vectors = dict(self.sync.acks)
            vectors[self.me] = VersionVector(self.sync.vector())
            presence.update(log, vectors, now)
            for p in log.participants:
                lag = presence.lag(p, now)
                if lag >= LAG_WARN and p not in presence.warned and p != self.me:
                    presence.warned.add(p)
                    self._events.append(SeatLagging(rnd.number, rnd.seat_of[p], p, lag))
        if not self.can_author or not looked:
            # Votes only right after a look: the acknowledgments and the signs of life are
            # then of the same moment (a heartbeat heard since would look unacknowledged).
            return
        for target in presence.silent(log, self.sync.heard, self.me, now):
            if target in log.departed:
                continue
            if rnd.final is not None and (
                self.sync.starter(rnd.number + 1) != target or rnd.number + 1 in self.sync.epochs
            ):
                continue  # after a final round only a vanished starter matters
            held = self.sync.delivered(target)
            if presence.voted.get((rnd.number, target), -1) >= held:
                continue
            presence.voted[(rnd.number, target)] = held
            try:
                self.sync.author(Kind.DEPART, rnd.number, [target, held])
            except LocalProtocolError as exc:
                self._events.append(ProtocolViolation(self.me, exc.message))
        self._after_sync()

    def _reveal(self, rnd: ReplicatedRound) -> None:
        """Every participant's end of the round: a dealer reveals its seed and salt; a partner
        that deals no seed sends a REVEAL of zero bytes (`END_MARKER`), which says the same
        thing: it has seen the end, and it makes no more moves in this round."""
        if self.me in rnd.dealer.values():
            if rnd.number not in self.my_secrets:
                return  # nothing to reveal with (a restart without its seed)
            seed, salt = self.my_secrets[rnd.number]
        else:
            seed, salt = END_MARKER
        rnd.revealed = True
        self._author_now(Kind.REVEAL, rnd.number, [seed, salt])

    def _take_partner_seed(self, rnd: ReplicatedRound, op: Op) -> bool:
        """Our partner (the seat's dealer) sealed the seat's seed to us: from now on we know
        the seat's face-down cards too. True if our view of the round was rebuilt."""
        seat = rnd.seat_of.get(self.me)
        if seat is None or rnd.dealer.get(seat) != op.author or op.author == self.me:
            self._events.append(
                ProtocolViolation(op.author, "a seed share from someone who does not deal our seat")
            )
            return False
        try:
            secret = open_from(self.sync.key, self.sync.keys[op.author], op.payload[1])
        except RemoteProtocolError as exc:
            self._events.append(ProtocolViolation(op.author, exc.message))
            return False
        seed, salt = secret[:32], secret[32:]
        if deal_commitment(seed, salt) != rnd.commitments[op.author]:
            self._events.append(
                ProtocolViolation(
                    op.author, "the shared seed does not match the partner's commitment"
                )
            )
            return False
        shown = [list(shown_cards(rnd.start_state, s)) for s in range(rnd.rules.seats)]
        rnd.start_state = public_start(rnd.rules, shown, own_seat=seat, own_seed=seed)
        rnd.states = [rnd.start_state]
        # The steps stay until the caller folds the round again from its start: that re-fold
        # compares them with the new ones to tell us which of our moves no longer fit.
        rnd.end_position = None
        return True

    def _share_seed(self, rnd: ReplicatedRound) -> None:
        """As a seat's dealer, seal the seed to our partner, once."""
        rnd.shared = True
        seat = rnd.seat_of.get(self.me)
        if seat is None or rnd.dealer.get(seat) != self.me or rnd.number not in self.my_secrets:
            return
        seed, salt = self.my_secrets[rnd.number]
        for partner, partner_seat in rnd.seat_of.items():
            if partner_seat == seat and partner != self.me:
                sealed = seal_for(
                    self.sync.key, self.sync.keys[partner], seed + salt, self.randomness(24)
                )
                self._author_now(Kind.SEED_SHARE, rnd.number, [partner, sealed])

    def _author_now(self, kind: Kind, epoch: int, payload: object) -> None:
        """Author an op from inside event handling and fold it at once."""
        try:
            self.sync.author(kind, epoch, payload)
        except LocalProtocolError as exc:
            # Our own gate refused it (the table's Lamport time spent, say): reported, and
            # nothing is raised out of receive() or tick().
            self._events.append(ProtocolViolation(self.me, exc.message))
            return
        for event in self.sync.events():
            if isinstance(event, OpDelivered) and event.position is not None:
                self._on_delivered(event, {})

    def _reveals_stable(self, rnd: ReplicatedRound) -> bool:
        """Every participant still in the round has revealed (a partner that deals no seed: its
        end marker), and its REVEAL is stable (an op is
        stable exactly when its Lamport time is within the round's stable bound)."""
        bound = rnd.log.stable_bound()
        return all(
            author in rnd.reveals and rnd.reveals[author].lamport <= bound
            for author in rnd.seat_of
            if rnd.log.counts_author(author)
        )

    def _finish(self, rnd: ReplicatedRound) -> None:
        cheaters: set[int] = set()
        seeds: list[bytes] = []
        departed = rnd.departed_seats()
        for seat in range(rnd.rules.seats):
            author = rnd.dealer[seat]
            reveal = rnd.reveals.get(author)
            if reveal is not None and not rnd.log.counts_for_order(reveal):
                # Its author was expelled from before it: it counts nowhere, whether or not
                # this peer delivered it before the proof arrived (issue 9, `fuzz mutate`).
                reveal = None
            seed, salt = reveal.payload if reveal is not None else (bytes(32), bytes(16))
            if deal_commitment(seed, salt) != rnd.commitments[author] and (
                reveal is not None or seat not in departed
            ):
                cheaters.add(seat)
            seeds.append(seed)
        # A REVEAL (or end marker) that had not seen the op that ended the round was made
        # before its author knew the round was over: honest peers never do that.
        for author, reveal in rnd.reveals.items():
            if rnd.log.counts_author(author) and not rnd.covers_end(reveal):
                cheaters.add(rnd.seat_of[author])
        # The audit replays the round from the seeds and must reach the fold's end state (in
        # public knowledge); `report.diverged` says if it did not. A departed dealer never
        # revealed: its seat is taken at its word (the audit's redaction), not judged.
        end = rnd.states[-1]
        report = audit_round(rnd.rules, seeds, rnd.start_state, rnd.moves_in_fold_order(), end)
        if departed:
            report = AuditReport(
                tuple(m for m in report.mismatches if m.seat not in departed), report.diverged
            )
        cheaters |= report.cheaters
        scores = score_round(end, cheaters=frozenset(cheaters))
        for score in scores:
            player = rnd.dealer[score.seat]
            self.totals[player] = self.totals.get(player, 0) + score.score
        totals = tuple(self.totals[rnd.dealer[s]] for s in range(rnd.rules.seats))
        rnd.final = RoundFinal(
            rnd.number,
            scores,
            frozenset(cheaters),
            report,
            totals,
            match_winner(totals, rnd.rules, rnd.number),
            departed,
        )
        self._events.append(rnd.final)

    def _state_hash(self) -> bytes:
        rnd = self.current_round
        if rnd is None:
            return lobby_state_hash(self.sync.vector())
        # States are immutable: most datagrams (heartbeats) leave the state as it was, so the
        # digest of the same object is reused rather than written out and hashed again.
        cached = self._digest_of
        if cached is None or cached[0] is not rnd.state:
            self._digest_of = cached = (rnd.state, state_digest(rnd.state))
        return cached[1]


__all__ = [
    "END_MARKER",
    "SPECTATOR",
    "Divergence",
    "GameEvent",
    "PeerExpelled",
    "ProtocolViolation",
    "RaceLost",
    "ReplicatedRound",
    "RoundEnded",
    "RoundFinal",
    "RoundStarted",
    "SeatDeparted",
    "SeatLagging",
    "StableState",
    "TableReplica",
    "deal_commitment",
    "lobby_state_hash",
    "rules_from_wire",
    "rules_to_wire",
]
