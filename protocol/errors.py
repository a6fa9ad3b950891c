"""Why a datagram was dropped, and whose fault it was.

Every step of the receive gate (DESIGN.md section 4: size -> rate limit -> unpack -> schema ->
table id -> signature -> seq/chain/lamport) has its own `DropReason`, so drop counters say which
step stopped a message and a fuzzer can check that only the expected steps fire.

The split between `LocalProtocolError` and `RemoteProtocolError` follows h11: a remote error is the
peer's fault and is the *only* exception the receive path may raise for any input bytes; the node
catches it, counts `reason`, and drops the datagram. A local error means this peer tried to do
something the protocol forbids (a body too large to send, a float in a message): that is a bug in
our own code and should surface loudly instead of being counted as network noise.
"""

from __future__ import annotations

import enum

__all__ = [
    "DropReason",
    "LocalProtocolError",
    "ProtocolError",
    "RemoteProtocolError",
]


class DropReason(enum.StrEnum):
    """One value per gate step that can refuse a datagram or an op, in gate order."""

    OVERSIZE = "oversize"
    """The datagram, or a value we were asked to encode, is larger than the protocol allows."""
    RATE_LIMITED = "rate_limited"
    """The source sent more than its token bucket allows."""
    MALFORMED = "malformed"
    """Not one complete msgpack value within the limits (bad bytes, trailing bytes, floats,
    extension types, nesting too deep, non-canonical encoding)."""
    WRONG_VERSION = "wrong_version"
    """An envelope of another protocol version (say, a version-1 peer at a version-2 table)."""
    SCHEMA = "schema"
    """Valid msgpack of the wrong shape: types, ranges, lengths, unknown kind, wrong version."""
    WRONG_TABLE = "wrong_table"
    """Signed for another table (or another round of this one)."""
    UNKNOWN_AUTHOR = "unknown_author"
    """The author key id is not one we know a public key for."""
    BAD_SIGNATURE = "bad_signature"
    """The Ed25519 signature does not verify over the exact body bytes."""
    REPLAYED = "replayed"
    """An op we already hold, byte for byte: harmless duplication, not misconduct."""
    BROKEN_CHAIN = "broken_chain"
    """`prev` is not the hash of the author's previous op, or a seq gap where one is not allowed."""
    BACKDATED = "backdated"
    """The lamport stamp breaks the discipline: not above the author's previous op, or not above
    an op its version vector claims to have seen."""
    EQUIVOCATION = "equivocation"
    """A second, different op for an (author, seq) we already hold: proof of a cheating peer."""
    BROKEN_PROMISE = "broken_promise"
    """An op stamped at or below a Lamport time, or naming deps below a vector, that its author
    had promised in a signed HEARTBEAT: proof of a lie about time, like equivocation."""
    NOT_A_MEMBER = "not_a_member"
    """The author is not (or no longer) a member of the table."""
    SPECTATOR_OP = "spectator_op"
    """A spectator authored a game op; spectators may only watch."""
    BAD_PROOF = "bad_proof"
    """An ANSWER whose MAC is wrong: the joiner does not know the table's passphrase."""


class ProtocolError(Exception):
    """A message or action the protocol does not allow.

    Never raised as such: raise `LocalProtocolError` or `RemoteProtocolError` so the handler
    knows whose fault it is.
    """

    reason: DropReason
    message: str

    def __init__(self, reason: DropReason, message: str) -> None:
        if type(self) is ProtocolError:
            raise TypeError("raise LocalProtocolError or RemoteProtocolError, not ProtocolError")
        super().__init__(reason, message)
        self.reason = reason
        self.message = message

    def __str__(self) -> str:
        return f"{self.reason.value}: {self.message}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.reason!r}, {self.message!r})"


class LocalProtocolError(ProtocolError):
    """This peer tried to do something the protocol forbids: a bug on our side."""


class RemoteProtocolError(ProtocolError):
    """A peer sent something the protocol forbids. Count `reason` and drop the input."""
