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

`TableReplica` keeps the table's state, its intents and the dispatch of sync events; each
concept lives in a module of its own beside it: `round` (folding one round), `lobby`,
`playing`, `round_start`, `deal_secrets`, `stability`, `round_finish`, `departure_votes`,
`events` and `commitments`. Every name this module exported is still importable here.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

from nerts_p2p.game.errors import Rejection
from nerts_p2p.game.moves import Move
from nerts_p2p.game.position import state_digest
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.state import GameState
from protocol.admission import refusal_words
from protocol.errors import LocalProtocolError
from protocol.messages import PLAYER, SPECTATOR, Kind, Kinds, Op, name_size_problem
from protocol.signing import SigningKeyPair
from protocol.sync import (
    AuthorExpelled,
    DeparturesChanged,
    DivergenceDetected,
    OpDelivered,
    OpRejected,
    StartVoided,
    SyncPeer,
)

from . import (
    deal_secrets,
    departure_votes,
    lobby,
    playing,
    round_finish,
    round_start,
    stability,
)
from .commitments import END_MARKER, deal_commitment, lobby_state_hash
from .events import (
    Divergence,
    GameEvent,
    PeerExpelled,
    ProtocolViolation,
    RaceLost,
    RoundEnded,
    RoundFinal,
    RoundStarted,
    RoundVoided,
    SeatDeparted,
    SeatLagging,
    StableState,
)
from .gate import TableGate
from .presence import Presence
from .round import FoldStep, ReplicatedRound
from .wire import rules_from_wire, rules_to_wire

# --- the table ------------------------------------------------------------------------------


class TableReplica:
    """Everything one peer knows and decides about one table."""

    def __init__(
        self, sync: SyncPeer, *, name: str, role: int, randomness: Callable[[int], bytes]
    ) -> None:
        too_long = name_size_problem(name)
        if too_long is not None:
            # Refused here, in words, not when our OPEN or JOIN fails our own gate later.
            raise ValueError(too_long)
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
        #: The shell's, if it wants it: called when one of our moves is signed and queued in
        #: `outgoing()`, before we fold it here, so a shell can persist and send it a fold
        #: sooner (the others fold it meanwhile). Not I/O of the replica's own.
        self.on_signed: Callable[[], None] | None = None

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
            Kinds.OPEN,
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
        ADMIT is here (`lobby.join`)."""
        return lobby.join(self)

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

    def request_table(self, host: bytes, address: Hashable, now: float) -> None:
        """Ask the host for its OPEN (its op 1) before joining."""
        self.sync.admission.host_address = address
        self.sync.request(address, [(host, 1, 1)], now)

    def ready(self) -> Op:
        """Commit to a fresh deal for the next round and show its face-up cards."""
        return lobby.ready(self)

    def start(self) -> Op:
        """(Host) start the next round with every player who is ready for it."""
        return lobby.start(self)

    def leave(self) -> Op:
        """Say goodbye to the table (a LEAVE): the shell does this when its match is over,
        so the others know the match ended for this member rather than wait on it."""
        op = self.sync.author(Kinds.LEAVE, 0, None)
        self._after_sync()
        return op

    def play(self, move: Move) -> Op | Rejection:
        """Play one of our moves (`playing.play`): a Rejection if it does not fit."""
        return playing.play(self, move)

    # --- I/O from the shell ------------------------------------------------------------

    def receive(self, datagram: bytes, source: Hashable, now: float) -> None:
        if not self.sync.receive(datagram, source, now):
            return  # dropped unread: nothing to fold, nothing new to look at
        lobby.join_if_admitted(self)
        self._after_sync()

    def tick(self, now: float) -> None:
        self.sync.tick(now)
        self.sync.admission.tick(now)
        lobby.join_if_admitted(self)
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
            elif isinstance(event, StartVoided):
                self._on_start_voided(event, refold)
        for number, position in sorted(refold.items()):
            self._refold(self.rounds[number], position)
        stability.note_stability(self)
        round_finish.progress(self)
        self.sync.set_state_hash(self._state_hash)  # hashed when a heartbeat needs it

    def _on_delivered(self, event: OpDelivered, refold: dict[int, int]) -> None:
        op = event.op
        if op.kind == Kinds.START:
            log = self.sync.epochs.get(op.epoch)
            if log is not None and log.start is op:  # a former starter's START begins nothing
                round_start.begin_round(self, op)
            return
        if op.epoch == 0 or event.position is None:
            return
        rnd = self.rounds.get(op.epoch)
        if rnd is None:
            return
        if op.author == self.me:
            # Ours, back from the store after a restart: never sent twice.
            rnd.revealed = rnd.revealed or op.kind == Kinds.REVEAL
            rnd.shared = rnd.shared or op.kind == Kinds.SEED_SHARE
        if op.kind == Kinds.REVEAL:
            rnd.reveals[op.author] = op
        elif (
            op.kind == Kinds.SEED_SHARE
            and op.payload[0] == self.me
            and deal_secrets.take_partner_seed(self, rnd, op)
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
        new_steps: dict[bytes, int] | None = None  # made only if one of ours was re-folded
        for old in replaced:
            if old.op.author != self.me or not old.applied:
                continue
            if new_steps is None:
                new_steps = {
                    step.op.hash: i for i, step in enumerate(rnd.steps[position:], position)
                }
            at = new_steps.get(old.op.hash)
            if at is not None and not rnd.steps[at].applied and old.move is not None:
                # Announced once the loss is stable: with several racers, a later op may
                # still take the race from the one that beat us first.
                rnd.losses[old.op.hash] = (old.move, rnd.log.keys[at])
        if not was_ended and rnd.end_position is not None:
            self._announce_end(rnd)

    def _announce_end(self, rnd: ReplicatedRound) -> None:
        state = rnd.state
        self._events.append(RoundEnded(rnd.number, state.ended_by or "", state.called_by))

    # --- fair ties, escrow, departures (PROTOCOL.md 6, 13, 14) ---------------------------

    def _on_departed(self, event: DeparturesChanged, refold: dict[int, int]) -> None:
        rnd = self.rounds.get(event.epoch)
        if rnd is None:
            return
        for author in event.added:
            self._events.append(SeatDeparted(event.epoch, rnd.seat_of[author], author))
        if rnd.final is None:
            refold[event.epoch] = 0  # its late ops go, its seat says stuck from then on

    def _on_start_voided(self, event: StartVoided, refold: dict[int, int]) -> None:
        refold.pop(event.epoch, None)
        if self.rounds.pop(event.epoch, None) is not None:
            self._events.append(RoundVoided(event.epoch, event.start.author))
        self.presence.began.pop(event.epoch, None)  # it begins when its real START comes
        # The acknowledgments watched stay those of the round before: they are reset only
        # for a round whose START is confirmed (`departure_votes.watch_presence`), and a
        # confirmed START is never voided.

    def _watch_presence(self, now: float) -> None:
        """Flag lagging seats; vote a silent participant out (`departure_votes`)."""
        departure_votes.watch_presence(self, now)

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
    "FoldStep",
    "GameEvent",
    "PeerExpelled",
    "ProtocolViolation",
    "RaceLost",
    "ReplicatedRound",
    "RoundEnded",
    "RoundFinal",
    "RoundStarted",
    "RoundVoided",
    "SeatDeparted",
    "SeatLagging",
    "StableState",
    "TableReplica",
    "deal_commitment",
    "lobby_state_hash",
    "rules_from_wire",
    "rules_to_wire",
]
