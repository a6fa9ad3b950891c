"""Admission: who becomes a member of a table, and private tables (PROTOCOL.md 17).

Only a key the host has admitted can JOIN. The host admits by signing an ADMIT op (kind 12)
that names the key, so admission is part of the signed log and every peer agrees on who is
a member: a JOIN is delivered only if its deps cover the host's ADMIT of its author, and a
JOIN from a key never admitted is rejected (`not_a_member`). The host signs at most
`MAX_ADMITTED` ADMITs over the table's life, so the authors a heartbeat names (the host and
the admitted) never pass the 64 a vector holds, whatever a flood of invented JOINs does.

A would-be member asks the host with a HELLO (its key, role and name). At a public table
the host admits it at once, within its bounds; at a private table it first sends a
CHALLENGE nonce, and admits only on an ANSWER whose MAC under the table's key is right. The
table's key comes from the passphrase by argon2id (`table_key`), slow on purpose so that a
guess costs a fraction of a second and tens of MiB; the passphrase itself never travels.
The MAC binds the table, the host's key, the joiner's key, the role and the nonce, and each
nonce is answered once, so an answer is no use to anyone else, to another host, or twice.
The host tells the joiner the outcome in a VERDICT: the seq of its ADMIT, or why not.

Peers serve ops only to members and admitted keys (`SyncPeer.serves`): a stranger gets the
table's first ops (at a private table only the OPEN), so without the passphrase a peer can
neither join nor watch.

The host's own bounds (its policy, not the gate's; the gate enforces `MAX_ADMITTED`), so
that no flood of HELLOs from invented keys shuts real players out (PROTOCOL.md 17.4):
- room: members present (not left; a spectator silent for `SPECTATOR_GONE` has gone) plus
  keys admitted in the last `ADMIT_TTL` s that have not joined yet stay within the seats
  plus `MAX_SPECTATORS` (players beyond the seats may sit a round out), and spectators
  within `MAX_SPECTATORS` of it, so invented spectators never take the seats' part of the
  room;
- the last ADMITs are the seats': spectators are admitted only while fewer than
  `MAX_ADMITTED` minus the seats are signed, so however many spectators come and go over a
  table's life, the seats stay admissible;
- per address, counted by IP address (a sender picks its ports freely, so counting by port
  bounds nothing): at most `PER_SOURCE_WAITING` admissions or challenges waiting, at most
  `PER_SOURCE_LIFE` (or the seats, if more) admissions in all, and none more once a key it
  got admitted let `ADMIT_TTL` pass without joining (a no-show: an honest joiner JOINs
  within a round trip, a flood never does). This machine's own addresses (loopback, the
  host's interface: the kernel drops a datagram from outside claiming them) are not bounded
  per address: they are the host's own bots;
- a wrong answer pauses its source for `WRONG_ANSWER_PAUSE` s.
A joiner told "busy" asks again every `HELLO_RETRY` for `BUSY_PATIENCE` s before it gives up
(a joiner's bots share its address, and get in as each one before them joins).
"""

from __future__ import annotations

import enum
import functools
import hashlib
import hmac
import ipaddress
from collections import Counter, OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from nacl.pwhash import argon2id

from .envelope import seal
from .errors import DropReason, LocalProtocolError, RemoteProtocolError
from .messages import (
    ADMIT_MAC_LEN,
    ADMIT_NONCE_LEN,
    MAX_MEMBERS,
    SPECTATOR,
    AdmissionMessage,
    Answer,
    Challenge,
    Hello,
    Kinds,
    Op,
    Verdict,
    answer_body,
    challenge_body,
    hello_body,
    verdict_body,
)
from .signing import key_id, verify

if TYPE_CHECKING:
    from .sync import SyncPeer

#: argon2id cost of the table key: about 0.2 s and 64 MiB per derivation on the 2-core
#: reference machine (README, "Private tables"). A joiner pays it once per table; a
#: brute-force guesser pays it for every guess.
KDF_OPSLIMIT: Final = 3
KDF_MEMLIMIT: Final = 64 * 1024 * 1024
TABLE_KEY_LEN: Final = 32
SALT_DOMAIN: Final = b"nerts-p2p/passphrase-salt\0"
MAC_DOMAIN: Final = b"nerts-p2p/admit\0"
NONCE_DOMAIN: Final = b"nerts-p2p/admit-nonce\0"

MAX_ADMITTED: Final = MAX_MEMBERS - 1  # ADMITs a table's host may sign (the host is the 64th)
MAX_SPECTATORS: Final = 8  # beside the seats, members present at once (the host's bound)
#: A spectator member silent this long counts as gone for the room (PROTOCOL.md 17.4): the
#: silence bound of a round's players (13.1).
SPECTATOR_GONE: Final = 10.0
ADMIT_TTL: Final = 30.0  # an admitted key that has not joined within this counts no more
CHALLENGE_TTL: Final = 10.0
MAX_CHALLENGES: Final = 64  # outstanding at the host, all joiners together
MAX_SPENT: Final = 256  # answered nonces remembered, to count a replayed answer as such
PER_SOURCE_WAITING: Final = 2  # admissions or challenges waiting, per IP address
PER_SOURCE_LIFE: Final = 8  # admissions over the table's life, per IP address (or the seats)
WRONG_ANSWER_PAUSE: Final = 1.0
HELLO_RETRY: Final = 1.0
#: How long a joiner told "busy" keeps asking: past ADMIT_TTL, so that waiting admissions
#: from its address have joined or lapsed by then.
BUSY_PATIENCE: Final = ADMIT_TTL + 5.0


class Refusal(enum.IntEnum):
    """Why the host did not admit (a VERDICT's reason), or why we did not ask (local)."""

    WRONG_PASSPHRASE = 1
    TABLE_FULL = 2
    NO_SPECTATORS = 3
    BUSY = 4  # too many admissions from one address: try again later
    NOT_ADMITTING = 5  # the host cannot check passphrases now (it has no table key)
    PASSPHRASE_NEEDED = 6  # local: the table is private and we were given no passphrase


REFUSAL_WORDS: Final = {
    Refusal.WRONG_PASSPHRASE: "wrong passphrase",
    Refusal.TABLE_FULL: "the table is full",
    Refusal.NO_SPECTATORS: "the table does not welcome spectators",
    Refusal.BUSY: "too many joins from this address; try again later",
    Refusal.NOT_ADMITTING: "the host cannot admit anyone now",
    Refusal.PASSPHRASE_NEEDED: "the table is private: a passphrase is needed",
}


def refusal_words(reason: int) -> str:
    try:
        return REFUSAL_WORDS[Refusal(reason)]
    except ValueError:
        return f"refused (reason {reason})"


def passphrase_salt(table: bytes) -> bytes:
    """argon2id's 16-byte salt: from the table id, so one passphrase gives every table its
    own key and a guess made for one table is no use at another."""
    return hashlib.sha256(SALT_DOMAIN + table).digest()[: argon2id.SALTBYTES]


@functools.lru_cache(maxsize=16)
def table_key(passphrase: str, table: bytes) -> bytes:
    """The table's key: argon2id(passphrase, salt of the table id). Slow (KDF_*), so it is
    cached: each process derives it once per table, however many peers (bots) it runs."""
    return argon2id.kdf(
        TABLE_KEY_LEN,
        passphrase.encode("utf-8"),
        passphrase_salt(table),
        opslimit=KDF_OPSLIMIT,
        memlimit=KDF_MEMLIMIT,
    )


def admission_mac(
    key: bytes, table: bytes, host_key: bytes, joiner_key: bytes, role: int, nonce: bytes
) -> bytes:
    """BLAKE2b-256 keyed with the table key over MAC_DOMAIN || table (8) || host public key
    (32) || joiner public key (32) || role (1 byte) || nonce (16)."""
    message = MAC_DOMAIN + table + host_key + joiner_key + bytes([role]) + nonce
    return hashlib.blake2b(message, key=key, digest_size=ADMIT_MAC_LEN).digest()


# --- the gate's rules (every peer, on the op and its causal past) ----------------------------


def admit_problem(sync: SyncPeer, op: Op) -> tuple[DropReason, str] | None:
    """An ADMIT counts if the host signed it, it names a key not admitted before, the
    table takes that role, and the host has signed fewer than MAX_ADMITTED before it."""
    if op.author != sync.host:
        return DropReason.NOT_A_MEMBER, "only the table's host admits"
    admitted = key_id(op.payload[0])
    if admitted == sync.host or admitted in sync.admits:
        return DropReason.SCHEMA, "ADMIT names a key that is already admitted"
    if len(sync.admits) >= MAX_ADMITTED:
        return DropReason.SCHEMA, f"the table's host has admitted {MAX_ADMITTED} keys already"
    if op.payload[1] == SPECTATOR and not spectators_welcome(sync):
        return DropReason.SCHEMA, "ADMIT of a spectator at a table without spectators"
    return None


def join_problem(sync: SyncPeer, op: Op) -> tuple[DropReason, str] | None:
    """A JOIN counts only if its deps cover the host's ADMIT of its author, as that role."""
    admitted = sync.admits.get(op.author)
    host = sync.host
    if admitted is None or host is None or dict(op.lobby_deps).get(host, 0) < admitted[0]:
        return DropReason.NOT_A_MEMBER, "a JOIN from a key the host has not admitted"
    if op.payload[2] != admitted[1]:
        return DropReason.NOT_A_MEMBER, "a JOIN in another role than its ADMIT"
    return None


def is_private(sync: SyncPeer) -> bool:
    return sync.open_op is not None and bool(sync.open_op.payload[6])


def spectators_welcome(sync: SyncPeer) -> bool:
    return sync.open_op is None or bool(sync.open_op.payload[4])


# --- the handshake -------------------------------------------------------------------------


def origin(source: Hashable) -> Hashable:
    """Where a datagram came from, for the per-address bounds: the IP address of an
    (address, port) source, since a sender chooses its ports freely; any other source (a
    test's or a simulator's label) as it is."""
    if isinstance(source, tuple) and len(source) == 2 and isinstance(source[0], str):
        return source[0]
    return source


def is_loopback(where: Hashable) -> bool:
    if not isinstance(where, str):
        return False
    try:
        return ipaddress.ip_address(where).is_loopback
    except ValueError:
        return False


@dataclass
class _Challenged:
    public_key: bytes
    role: int
    source: Hashable
    issued: float


@dataclass
class _Admitted:
    role: int
    where: Hashable  # the origin it asked from
    when: float


class Admission:
    """One peer's side of the handshake: the host's door, and a joiner's knock."""

    def __init__(self, sync: SyncPeer) -> None:
        self.sync = sync
        #: The table key (`table_key`): needed to answer (joiner) or to check answers (host)
        #: at a private table. None: no passphrase was given.
        self.key: bytes | None = None
        #: How many members may play at once (the host's bound; the game sets it from the
        #: rules: seats, twice with partnerships). None: twice the OPEN's seats.
        self.player_limit: int | None = None
        # host side
        #: This machine's own addresses besides loopback (the node adds the host's
        #: interface): not bounded per address, they are the host's own bots.
        self.own_addresses: set[Hashable] = set()
        self._challenges: OrderedDict[bytes, _Challenged] = OrderedDict()  # nonce -> joiner
        self._spent: OrderedDict[bytes, None] = OrderedDict()
        self._admitted: dict[bytes, _Admitted] = {}
        self._source_life: Counter[Hashable] = Counter()  # admissions per origin
        self._paused: dict[Hashable, float] = {}
        self._nonces = 0
        self.refused_count: Counter[Refusal] = Counter()
        # joiner side
        self.host_address: Hashable | None = None
        self.wanted: tuple[int, str] | None = None  # role, name: we asked to join
        self.admit_seq: int | None = None
        self.refused: Refusal | None = None
        self.busy_since: float | None = None  # the host said "busy": we ask again a while
        self._next_hello = 0.0
        self.now = 0.0

    # --- joiner ----------------------------------------------------------------------

    def knock(self, role: int, name: str, now: float) -> None:
        """Ask the host to let us in (again after HELLO_RETRY, the datagram may be lost)."""
        self.now = max(self.now, now)
        self.wanted = (role, name)
        sync = self.sync
        if self.admit_seq is not None or self.refused is not None or sync.open_op is None:
            return
        if is_private(sync) and self.key is None:
            self.refused = Refusal.PASSPHRASE_NEEDED
            return
        if self.admit_seq is None and sync.me in sync.admits:
            self.admit_seq = sync.admits[sync.me][0]  # the host's ADMIT reached us first
            return
        if now < self._next_hello:
            return
        address = self.host_address
        if address is None and sync.host is not None:
            address = sync.peers.get(sync.host)
        if address is None:
            return
        self._next_hello = now + HELLO_RETRY
        body = hello_body(sync.table, sync.me, sync.key.public_key, role, name)
        sync.send_to(address, seal(sync.key, body))

    def tick(self, now: float) -> None:
        self.now = max(self.now, now)
        if self.wanted is not None and self.sync.me not in self.sync.members:
            self.knock(*self.wanted, now)
        for nonce, pending in list(self._challenges.items()):
            if now - pending.issued <= CHALLENGE_TTL:
                break
            del self._challenges[nonce]

    def receive(self, message: AdmissionMessage, source: Hashable, now: float) -> None:
        """One verified-on-the-way admission message. Raises RemoteProtocolError to drop."""
        self.now = max(self.now, now)
        if isinstance(message, Hello):
            verify(message.public_key, message.body, message.signature)
            self._on_hello(message, source, now)
        elif isinstance(message, Answer):
            self._on_answer(message, source, now)
        else:
            sync = self.sync
            if message.joiner != sync.me or message.sender != sync.host:
                raise RemoteProtocolError(
                    DropReason.NOT_A_MEMBER, "admission news from someone not our host"
                )
            host_key = sync.keys.get(message.sender)
            if host_key is None:
                raise RemoteProtocolError(DropReason.UNKNOWN_AUTHOR, "the host's OPEN is not here")
            verify(host_key, message.body, message.signature)
            if isinstance(message, Challenge):
                self._on_challenge(message, source)
            else:
                self._on_verdict(message, source)

    def _on_challenge(self, message: Challenge, source: Hashable) -> None:
        sync = self.sync
        if self.wanted is None or self.admit_seq is not None:
            return
        if self.key is None:
            self.refused = Refusal.PASSPHRASE_NEEDED
            return
        host_key = sync.keys[message.sender]
        role = self.wanted[0]
        mac = admission_mac(
            self.key, sync.table, host_key, sync.key.public_key, role, message.nonce
        )
        sync.send_to(source, seal(sync.key, answer_body(sync.table, sync.me, message.nonce, mac)))

    def _on_verdict(self, message: Verdict, source: Hashable) -> None:
        if message.admit_seq:
            self.admit_seq = message.admit_seq
            self.refused = None
            self.busy_since = None
            self.sync.peers[message.sender] = source
        elif self.admit_seq is None:
            reason = (
                Refusal(message.reason)
                if message.reason in Refusal._value2member_map_
                else Refusal.NOT_ADMITTING
            )
            if reason == Refusal.BUSY:
                # Others from our address are being let in (our own bots, say): ask again
                # (`knock` every HELLO_RETRY) until BUSY_PATIENCE has passed.
                if self.busy_since is None:
                    self.busy_since = self.now
                if self.now - self.busy_since < BUSY_PATIENCE:
                    return
            self.refused = reason

    # --- host ------------------------------------------------------------------------

    def _is_door(self) -> bool:
        sync = self.sync
        return sync.open_op is not None and sync.host == sync.me and sync.quarantined is None

    def _on_hello(self, hello: Hello, source: Hashable, now: float) -> None:
        sync = self.sync
        if not self._is_door():
            raise RemoteProtocolError(DropReason.NOT_A_MEMBER, "a HELLO for the host only")
        joiner = hello.sender
        if joiner in sync.admits:
            # Asked again (our VERDICT was lost): the same answer, no second ADMIT.
            sync.peers[joiner] = source
            self._verdict(source, joiner, sync.admits[joiner][0], 0)
            return
        if self._paused.get(origin(source), -1.0) > now:
            raise RemoteProtocolError(DropReason.RATE_LIMITED, "a wrong answer came from here")
        if self._restarting():
            return
        refusal = self._policy(hello.role, source, now)
        if refusal is not None:
            self._refuse(source, joiner, refusal)
            return
        if not is_private(sync):
            self._admit(hello.public_key, hello.role, source, now)
            return
        if self.key is None:
            self._refuse(source, joiner, Refusal.NOT_ADMITTING)
            return
        self._nonces += 1
        nonce = hashlib.blake2b(
            NONCE_DOMAIN + self._nonces.to_bytes(8, "big") + hello.public_key,
            key=sync.key.seed,
            digest_size=ADMIT_NONCE_LEN,
        ).digest()
        self._challenges[nonce] = _Challenged(hello.public_key, hello.role, source, now)
        while len(self._challenges) > MAX_CHALLENGES:
            self._challenges.popitem(last=False)
        sync.send_to(source, seal(sync.key, challenge_body(sync.table, sync.me, joiner, nonce)))

    def _on_answer(self, answer: Answer, source: Hashable, now: float) -> None:
        sync = self.sync
        if not self._is_door():
            raise RemoteProtocolError(DropReason.NOT_A_MEMBER, "an ANSWER for the host only")
        pending = self._challenges.get(answer.nonce)
        if pending is None or key_id(pending.public_key) != answer.sender:
            if answer.nonce in self._spent:
                raise RemoteProtocolError(DropReason.REPLAYED, "an answer to a spent nonce")
            raise RemoteProtocolError(DropReason.REPLAYED, "an answer to no challenge of ours")
        verify(pending.public_key, answer.body, answer.signature)
        del self._challenges[answer.nonce]  # each nonce is answered once, right or wrong
        self._spent[answer.nonce] = None
        while len(self._spent) > MAX_SPENT:
            self._spent.popitem(last=False)
        if now - pending.issued > CHALLENGE_TTL:
            raise RemoteProtocolError(DropReason.REPLAYED, "an answer to an expired challenge")
        assert self.key is not None  # a challenge is only issued with a key
        expected = admission_mac(
            self.key,
            sync.table,
            sync.key.public_key,
            pending.public_key,
            pending.role,
            answer.nonce,
        )
        if not hmac.compare_digest(expected, answer.mac):
            self._paused[origin(source)] = now + WRONG_ANSWER_PAUSE
            if len(self._paused) > 4 * MAX_CHALLENGES:
                self._paused = {s: t for s, t in self._paused.items() if t > now}
            sync.counters.count(DropReason.BAD_PROOF)
            self._refuse(source, answer.sender, Refusal.WRONG_PASSPHRASE)
            return
        if answer.sender in sync.admits:
            self._verdict(source, answer.sender, sync.admits[answer.sender][0], 0)
            return
        if self._restarting():
            return
        refusal = self._policy(pending.role, source, now, answering=True)
        if refusal is not None:
            self._refuse(source, answer.sender, refusal)
            return
        self._admit(pending.public_key, pending.role, source, now)

    def _policy(
        self, role: int, source: Hashable, now: float, *, answering: bool = False
    ) -> Refusal | None:
        """The host's bounds (module docstring, PROTOCOL.md 17.4), or None to go ahead."""
        sync = self.sync
        if role == SPECTATOR and not spectators_welcome(sync):
            return Refusal.NO_SPECTATORS
        seats = self._player_limit()
        signed = len(sync.admits)
        if signed >= MAX_ADMITTED or (role == SPECTATOR and signed >= MAX_ADMITTED - seats):
            return Refusal.TABLE_FULL  # the last ADMITs are kept for the seats
        waiting: list[_Admitted] = []
        no_shows: set[Hashable] = set()
        for joiner, admitted in self._admitted.items():
            if joiner in sync.members:
                continue
            if now - admitted.when <= ADMIT_TTL:
                waiting.append(admitted)
            else:
                no_shows.add(admitted.where)
        heard = sync.signs_of_life()
        roles = Counter(
            m.role
            for author, m in sync.members.items()
            if not m.left
            # A spectator says no goodbye (a window closed, Ctrl-C): one silent for
            # SPECTATOR_GONE has gone, and its place is free for the next (after eight
            # had come and gone nobody could watch the table any more).
            and (m.role != SPECTATOR or now - heard.get(author, now) < SPECTATOR_GONE)
        )
        roles.update(a.role for a in waiting)
        if roles.total() >= seats + MAX_SPECTATORS:
            return Refusal.TABLE_FULL
        if role == SPECTATOR and roles[SPECTATOR] >= MAX_SPECTATORS:
            return Refusal.TABLE_FULL  # spectators never take the seats' part of the room
        where = origin(source)
        if is_loopback(where) or where in self.own_addresses:
            return None  # this machine: the host's own bots
        if where in no_shows:
            return Refusal.BUSY
        from_here = sum(1 for a in waiting if a.where == where)
        if not answering:
            from_here += sum(1 for c in self._challenges.values() if origin(c.source) == where)
        life = max(PER_SOURCE_LIFE, seats)
        if from_here >= PER_SOURCE_WAITING or self._source_life[where] >= life:
            return Refusal.BUSY
        return None

    def _restarting(self) -> bool:
        """A host back from a crash authors no ADMIT until it has its own chain back
        (PROTOCOL.md 14): it answers nobody meanwhile, and the joiner's next HELLO (every
        HELLO_RETRY) finds it ready, where a refusal would have sent it away ("full")."""
        return self.sync.resuming is not None or self.sync.quarantined is not None

    def _player_limit(self) -> int:
        if self.player_limit is not None:
            return self.player_limit
        assert self.sync.open_op is not None
        seats: int = self.sync.open_op.payload[3]
        return 2 * seats

    def _admit(self, public_key: bytes, role: int, source: Hashable, now: float) -> None:
        sync = self.sync
        joiner = key_id(public_key)
        try:
            op = sync.author(Kinds.ADMIT, 0, [public_key, role])
        except LocalProtocolError:
            self._refuse(source, joiner, Refusal.TABLE_FULL)
            return
        self._admitted[joiner] = _Admitted(role, origin(source), now)
        self._source_life[origin(source)] += 1
        sync.peers[joiner] = source  # what we broadcast reaches it, and it may catch up
        self._verdict(source, joiner, op.seq, 0)
        if sync._last_heartbeat is not None:
            # What the table holds (our latest heartbeat, again): the joiner asks for it
            # now, and for the ops our ADMIT waits on, rather than at our next heartbeat.
            sync.send_to(source, sync._last_heartbeat)

    def _refuse(self, source: Hashable, joiner: bytes, reason: Refusal) -> None:
        self.refused_count[reason] += 1
        self._verdict(source, joiner, 0, int(reason))

    def _verdict(self, source: Hashable, joiner: bytes, seq: int, reason: int) -> None:
        sync = self.sync
        sync.send_to(source, seal(sync.key, verdict_body(sync.table, sync.me, joiner, seq, reason)))


__all__ = [
    "KDF_MEMLIMIT",
    "KDF_OPSLIMIT",
    "MAX_ADMITTED",
    "MAX_SPECTATORS",
    "REFUSAL_WORDS",
    "SPECTATOR_GONE",
    "Admission",
    "Refusal",
    "admission_mac",
    "admit_problem",
    "is_private",
    "join_problem",
    "passphrase_salt",
    "refusal_words",
    "table_key",
]
