"""Who is still at the table: silence, lagging acknowledgments, departure votes, and the
sealed escrow that lets a restarted dealer get its own deal back.

The sync layer (`protocol.departure`) decides when a departure is agreed; this module decides
when *this* peer votes, from what it has heard and when (time is handed in):

- **silence**: a participant of the current round we have had no sign of life from (no op
  of its delivered, no heartbeat; `SyncPeer.signs_of_life`: a heartbeat naming an op of its
  own that has not come shows nothing, nor does a copy we rejected) for `SILENCE_BOUND`
  seconds, or that has not revealed its mix nonce `SILENCE_BOUND` seconds after the round
  began here, gets our DEPART vote;
- **lag** (the blind peer): every participant must acknowledge, in its heartbeat vector,
  what every other participant had acknowledged; a requirement it has not met
  `ACK_BOUND` seconds after we set it makes it lag. A lag of `LAG_WARN` seconds is shown
  to the user (`SeatLagging`); owing it for `ACK_BOUND` seconds *during which we heard from
  the participant* is treated as silence (a vote). Stretches of `QUIET_GAP` or more with no
  sign of life do not count: a participant that went wholly silent meanwhile (crashed,
  restarting and catching up quietly, its cable pulled) is judged by `SILENCE_BOUND` alone,
  and when it comes back it has the whole `ACK_BOUND` to catch up on what it missed. (It
  once had only until our next look, a quarter of a second: a player whose cable was out
  for three seconds, back on a loaded machine, was voted out of its round.)

Why these bounds. Heartbeats go every 75 ms, so an honest peer acknowledges what the
others hold within two or three heartbeats on a LAN (about 0.2 s), a few more under heavy
loss. `LAG_WARN` = 1 s is well past that. `ACK_BOUND` = 3 s bounds how long a blind peer can
pretend not to have seen the table's moves. `SILENCE_BOUND` = 10 s is far beyond a Wi-Fi
roaming hiccup (typically under 2 s) and short enough that a table does not wait long for
a closed laptop lid.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from protocol.clocks import VersionVector
from protocol.errors import DropReason, RemoteProtocolError
from protocol.messages import MIX_NONCE_LEN
from protocol.order import EpochLog
from protocol.sealed import open_from, seal_for
from protocol.signing import SigningKeyPair

SILENCE_BOUND: Final = 10.0
ACK_BOUND: Final = 3.0
LAG_WARN: Final = 1.0
#: No sign of life for this long (six heartbeats) is a silence: it does not count against
#: an acknowledgment owed (a cable pulled for a few seconds, a Wi-Fi hiccup).
QUIET_GAP: Final = 0.5
PRESENCE_CHECK: Final = 0.25  # seconds between looks at the acknowledgments


def seal_escrow(key: SigningKeyPair, secret: bytes, box_nonce: bytes) -> bytes:
    """seed || salt || mix nonce, sealed from our key to our own key: only we can open it,
    and it is in every peer's copy of the log."""
    return seal_for(key, key.public_key, secret, box_nonce)


def open_escrow(key: SigningKeyPair, sealed: bytes) -> tuple[bytes, bytes, bytes]:
    """(seed, salt, mix nonce) from our own READY's escrow."""
    secret = open_from(key, key.public_key, sealed)
    if len(secret) != 32 + 16 + MIX_NONCE_LEN:
        raise RemoteProtocolError(DropReason.SCHEMA, "the escrow holds the wrong number of bytes")
    return secret[:32], secret[32:48], secret[48:]


@dataclass
class AckRequirement:
    """What a participant must acknowledge, and since when we have asked it of it.

    `silent` counts the seconds since then during which we had no sign of life from the
    participant (stretches of at least `QUIET_GAP`): a peer cannot acknowledge what it
    could not receive, so only the time it was with us counts against the bound."""

    since: float
    wanted: VersionVector
    silent: float = 0.0
    quiet_from: float | None = None  # its last sign before the silence we are seeing
    quiet_seen: float = 0.0  # our latest look that saw that silence

    def owed(self, last_sign: float) -> float:
        """Seconds we heard from the participant while it owed this acknowledgment, up to
        its last sign of life (a silence still going on holds it still)."""
        return last_sign - self.since - self.silent


@dataclass
class Presence:
    """One peer's record of the others' signs of life in the current round."""

    round: int = 0  # the round the acknowledgment records are about
    next_check: float = 0.0
    began: dict[int, float] = field(default_factory=dict)  # round -> when it began here
    voted: dict[tuple[int, bytes], int] = field(default_factory=dict)  # (round, target) -> held
    acks: dict[bytes, VersionVector] = field(default_factory=dict)  # latest heartbeat vectors
    required: dict[bytes, AckRequirement] = field(default_factory=dict)
    warned: set[bytes] = field(default_factory=set)  # participants flagged as lagging

    def round_seen(self, number: int, now: float) -> float:
        return self.began.setdefault(number, now)

    def silent(
        self,
        log: EpochLog,
        heard: dict[bytes, float],
        me: bytes,
        now: float,
        *,
        playing: bool,
    ) -> list[bytes]:
        """Participants with no sign of life (`heard`: author -> when it last showed one) or
        whose nonce is missing, for the bound; and, while the round is `playing`, hopelessly
        lagging ones. Once it is final nobody's acknowledgments are looked at any more (a
        blind peer has nothing left to gain), so what one owed then must not count: it once
        voted out every starter that took more than `ACK_BOUND` to start the next round
        (players still reading the scores) if it owed anything at the final moment."""
        began = self.round_seen(log.epoch, now)
        out = []
        for p in log.participants:
            if p == me or p in log.excluded:
                continue
            last = max(heard.get(p, began), began)
            quiet = now - last >= SILENCE_BOUND
            no_nonce = p not in log.nonces and now - began >= SILENCE_BOUND
            # Owing an acknowledgment counts against a participant that goes on showing
            # signs of life (a heartbeat, an op) for the bound and still does not
            # acknowledge: the blind peer. One that fell silent meanwhile (a crash, a
            # restart catching up) is judged by the silence bound, so a peer back within
            # it keeps its seat (PROTOCOL.md 14).
            req = self.required.get(p)
            blind = (
                playing and req is not None and req.owed(last) >= ACK_BOUND and self.lag(p, now) > 0
            )
            if quiet or no_nonce or blind:
                out.append(p)
        return out

    def update(self, log: EpochLog, vectors: dict[bytes, VersionVector], now: float) -> None:
        """Latest heartbeat vectors of the participants (ours included): whoever met what
        we asked of it is asked the next thing, what every other participant acknowledges
        by now."""
        live = [p for p in log.participants if p not in log.excluded]
        self.acks = {p: vectors[p] for p in live if p in vectors}
        if len(self.acks) < len(live) or len(live) < 2:
            return  # not heard from everyone yet (or nobody left to compare): ask nothing
        for p in live:
            req = self.required.get(p)
            if req is not None and not _covers(self.acks[p], req.wanted):
                continue
            others = [self.acks[q] for q in live if q != p]
            wanted = {a: min(v.seq(a) for v in others) for a in live}
            self.required[p] = AckRequirement(
                now, VersionVector.from_pairs(sorted((a, n) for a, n in wanted.items() if n))
            )
            self.warned.discard(p)

    def note_silences(self, heard: dict[bytes, float], now: float) -> None:
        """At each look: a participant owing an acknowledgment that we have not heard from
        for `QUIET_GAP` is in a silence; once we hear from it again, the silence (from its
        last sign before to our last look that saw it silent, so at most one look short)
        stops counting as time it owed."""
        for p, req in self.required.items():
            last = heard.get(p)
            if last is None:
                continue
            quiet = now - last >= QUIET_GAP
            if req.quiet_from is not None and (not quiet or last > req.quiet_from):
                req.silent += max(0.0, req.quiet_seen - max(req.quiet_from, req.since))
                req.quiet_from = None
            if quiet:
                if req.quiet_from is None:
                    req.quiet_from = last
                req.quiet_seen = now

    def lag(self, participant: bytes, now: float) -> float:
        """Seconds a participant has owed an acknowledgment (0 if it owes none)."""
        req = self.required.get(participant)
        theirs = self.acks.get(participant)
        if req is None or (theirs is not None and _covers(theirs, req.wanted)):
            return 0.0
        return now - req.since

    def reset(self, number: int) -> None:
        """A new round: every acknowledgment requirement starts over."""
        self.round = number
        self.acks.clear()
        self.required.clear()
        self.warned.clear()


def _covers(vector: VersionVector, wanted: VersionVector) -> bool:
    return all(vector.seq(a) >= n for a, n in wanted.items())


__all__ = [
    "ACK_BOUND",
    "LAG_WARN",
    "PRESENCE_CHECK",
    "QUIET_GAP",
    "SILENCE_BOUND",
    "AckRequirement",
    "Presence",
    "open_escrow",
    "seal_escrow",
]
