"""Logical time: Lamport clocks, version vectors, and the total order of ops.

Every peer must sort the same ops into the same order without asking anyone, so the order is a
pure function of what the ops carry: `(lamport, tiebreak)`, where the tiebreak hashes the round's
seed mix with the author's key. Hashing rather than comparing keys means no seat wins every tie
just because its key happens to sort first, and the seed mix changes who wins ties each round.

A version vector says, per author, the highest `seq` up to which a peer holds *every* op of that
author (ops 1..n, no gaps). That contiguity is what makes the vector a faithful summary for
anti-entropy: "I have up to 7" means ops 8 onwards are what I lack.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import final

from .errors import DropReason, RemoteProtocolError

__all__ = [
    "LamportClock",
    "OrderKey",
    "VersionVector",
    "order_key",
    "tiebreak",
]

OrderKey = tuple[int, bytes]


def _check_count(value: object, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{what} must be a non-negative int, got {value!r}")
    return value


@final
class LamportClock:
    """A Lamport clock: a counter that only moves forward and jumps past anything it hears of.

    - `tick()` before authoring an op: the op gets a stamp above everything this peer has seen.
    - `observe(remote)` on receiving an op stamped `remote`: the clock becomes
      `max(own, remote) + 1`. The `+ 1` is what makes receiving an event of its own, so the
      next op authored here is strictly later than the one just received even if nothing else
      happens in between.
    """

    __slots__ = ("_value",)

    def __init__(self, value: int = 0) -> None:
        # Restarting from the local store passes the last authored or observed stamp here, so a
        # restarted peer never stamps an op lower than one it already sent.
        self._value = _check_count(value, "a Lamport time")

    @property
    def value(self) -> int:
        """The last time this clock handed out or observed."""
        return self._value

    def tick(self) -> int:
        """Advance for a local event (authoring an op) and return its stamp."""
        self._value += 1
        return self._value

    def observe(self, remote: int) -> int:
        """Take in a remote stamp: the clock becomes `max(own, remote) + 1`, which is returned."""
        _check_count(remote, "a Lamport time")
        self._value = max(self._value, remote) + 1
        return self._value

    def __repr__(self) -> str:
        return f"LamportClock({self._value})"


@final
class VersionVector(Mapping[bytes, int]):
    """An immutable map author id -> highest contiguous seq held (ops 1..seq, no gaps).

    An author with nothing held is simply absent (reading it with `seq` gives 0), so two vectors
    that mean the same thing are equal and hash alike whatever zeros they were built with.
    """

    __slots__ = ("_hash", "_seqs")

    def __init__(self, seqs: Mapping[bytes, int] | Iterable[tuple[bytes, int]] = ()) -> None:
        entries: dict[bytes, int] = {}
        for author, seq in seqs.items() if isinstance(seqs, Mapping) else seqs:
            if not isinstance(author, bytes):
                raise ValueError(f"an author id is bytes, got {type(author).__name__}")
            if author in entries:
                raise ValueError(f"author {author.hex()} appears twice")
            entries[author] = _check_count(seq, "a seq")
        # Sorted so iteration order, repr and the wire form are all deterministic.
        self._seqs = {author: entries[author] for author in sorted(entries) if entries[author]}
        self._hash = hash(frozenset(self._seqs.items()))

    @classmethod
    def from_pairs(cls, pairs: Iterable[Sequence[object]]) -> VersionVector:
        """Build from the wire form `[[author, seq], ...]`, which must be canonical: authors
        strictly increasing, every seq at least 1, so one vector has one encoding.

        Raises only RemoteProtocolError(SCHEMA). Author id lengths and seq ranges are the
        message schema's job; the types are checked again here so no input can raise anything
        else.
        """
        previous: bytes | None = None
        checked: list[tuple[bytes, int]] = []
        for pair in pairs:
            if len(pair) != 2:
                raise RemoteProtocolError(
                    DropReason.SCHEMA, "version vector: each entry is [author, seq]"
                )
            author, seq = pair
            if not isinstance(author, bytes) or type(seq) is not int:
                raise RemoteProtocolError(
                    DropReason.SCHEMA, "version vector: each entry is [bin author, int seq]"
                )
            if previous is not None and not author > previous:
                raise RemoteProtocolError(
                    DropReason.SCHEMA, "version vector: authors must be strictly increasing"
                )
            if seq < 1:
                raise RemoteProtocolError(
                    DropReason.SCHEMA, "version vector: a listed author's seq must be at least 1"
                )
            previous = author
            checked.append((author, seq))
        return cls(checked)

    def as_pairs(self) -> list[tuple[bytes, int]]:
        """The wire form: `(author, seq)` sorted by author, no zero entries."""
        return list(self._seqs.items())

    def seq(self, author: bytes) -> int:
        """The highest contiguous seq held from `author`; 0 when none."""
        return self._seqs.get(author, 0)

    def advanced(self, author: bytes, seq: int) -> VersionVector:
        """This vector with `author` raised to `seq` (never lowered)."""
        _check_count(seq, "a seq")
        if seq <= self.seq(author):
            return self
        return VersionVector({**self._seqs, author: seq})

    def merge(self, other: VersionVector) -> VersionVector:
        """The pointwise maximum: what a peer holding both vectors' ops holds."""
        merged = dict(self._seqs)
        for author, seq in other._seqs.items():
            if seq > merged.get(author, 0):
                merged[author] = seq
        return VersionVector(merged)

    def dominates(self, other: VersionVector) -> bool:
        """True if this vector holds everything `other` holds (equal vectors dominate each
        other)."""
        return all(self.seq(author) >= seq for author, seq in other._seqs.items())

    def missing_ranges(self, other: VersionVector) -> list[tuple[bytes, int, int]]:
        """What `other` holds that this vector lacks, as `(author, first_seq, last_seq)`
        inclusive ranges sorted by author: exactly what to ask `other`'s owner for."""
        return [
            (author, self.seq(author) + 1, seq)
            for author, seq in other._seqs.items()
            if seq > self.seq(author)
        ]

    def __getitem__(self, author: bytes) -> int:
        return self._seqs[author]

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._seqs)

    def __len__(self) -> int:
        return len(self._seqs)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, VersionVector):
            return self._seqs == other._seqs
        return NotImplemented

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        inner = ", ".join(f"{author.hex()}: {seq}" for author, seq in self._seqs.items())
        return f"VersionVector({{{inner}}})"


def tiebreak(round_seed_mix: bytes, author_key: bytes) -> bytes:
    """SHA-256(round_seed_mix || author_key), all 32 bytes.

    Plain concatenation is unambiguous here because every author of a round shares the same
    `round_seed_mix`: two tiebreaks can only be equal if the keys are.
    """
    return hashlib.sha256(round_seed_mix + author_key).digest()


def order_key(lamport: int, tiebreak: bytes) -> OrderKey:
    """The sort key of an op in the total order: by Lamport time, ties by `tiebreak`."""
    return (lamport, tiebreak)
