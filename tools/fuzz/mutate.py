"""`mutate` mode: structure-aware mutation of valid messages, sent at a live peer.

Valid messages come from two places: the traffic of the table itself (every datagram the
honest peers send is captured as it goes) and the schema (`protocol/messages.py` describes
every field's wire type and range, so values can be made that are valid, or exactly one
step out of range). The fuzzer owns one player of the table, the *puppet*: a real member
whose key the fuzzer holds, so it can also send garbage that is correctly signed, legal-
looking ops that break the rules, and valid ops out of protocol order, and reach the gate's
last steps instead of bouncing off the signature check.

Mutations (`MUTATORS`): bit flips, truncation, trailing bytes, oversize, deep nesting, wrong
protocol version, non-canonical encodings, type confusion, boundary integers and lengths,
stale and future seq and lamport, wrong table, garbage re-signed with the puppet's key,
validly signed illegal moves, and valid ops replayed out of order or from another address.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, Final

import msgpack

from protocol import schema as s
from protocol.codec import pack
from protocol.envelope import PROTOCOL_VERSION
from protocol.errors import ProtocolError
from protocol.messages import OP_SCHEMA, SYNC_SCHEMA, Kind
from protocol.signing import SigningKeyPair, sign

BOUNDARY_INTS: Final = (
    0, 1, -1, 2, 127, 128, 255, 256, 65535, 65536, 2**31 - 1, 2**31, 2**32 - 1, 2**32,
    2**48 - 1, 2**48, 2**48 + 1, 2**53, 2**63 - 1, -(2**31), -(2**63), 2**64 - 1,
)  # fmt: skip
STRANGE_STRS: Final = ("", "x" * 32, "x" * 33, "é" * 17, "\x00", "0 5H n-w2", "nerts", "stuck")


def _pack_raw(value: object) -> bytes:
    data: bytes = msgpack.packb(value, use_bin_type=True)
    return data


def envelope(body: bytes, signature: bytes, version: int = PROTOCOL_VERSION) -> bytes:
    return _pack_raw([version, body, signature])


def split(datagram: bytes) -> tuple[bytes, bytes, Any] | None:
    """(body bytes, signature, decoded body) of a well-formed envelope, else None."""
    try:
        outer = msgpack.unpackb(datagram, raw=False)
        _version, body, signature = outer
        return body, signature, msgpack.unpackb(body, raw=False)
    except Exception:
        return None


def spec_for(body: Any) -> s.Spec | None:
    if isinstance(body, list) and body and type(body[0]) is int:
        if body[0] < 16 and body[0] in OP_SCHEMA.variants:
            return OP_SCHEMA.variants[body[0]]
        if body[0] in SYNC_SCHEMA.variants:
            return SYNC_SCHEMA.variants[body[0]]
    return None


def valid_value(spec: s.Spec, rng: random.Random, depth: int = 0) -> Any:
    """A value that fits `spec`, drawn at random (boundaries favoured)."""
    if isinstance(spec, s.Int):
        return rng.choice((spec.lo, spec.hi, rng.randint(spec.lo, spec.hi)))
    if isinstance(spec, s.Bool):
        return rng.random() < 0.5
    if isinstance(spec, s.Nil):
        return None
    if isinstance(spec, s.Const):
        return spec.value
    if isinstance(spec, s.Bin):
        hi = spec.max if spec.max is not None else spec.min + 16
        return rng.randbytes(rng.choice((spec.min, hi, rng.randint(spec.min, hi))))
    if isinstance(spec, s.Str):
        n = rng.choice((spec.min, spec.max, rng.randint(spec.min, spec.max)))
        return "".join(rng.choice("0123456789AHSDCKQJTwnf-+@= ") for _ in range(n))
    if isinstance(spec, s.ListOf):
        n = rng.choice((spec.min, spec.max, rng.randint(spec.min, min(spec.max, spec.min + 3))))
        n = min(n, 4) if depth > 1 else n
        return [valid_value(spec.item, rng, depth + 1) for _ in range(n)]
    if isinstance(spec, s.Tuple):
        return [valid_value(item, rng, depth + 1) for item in spec.items]
    if isinstance(spec, s.OneOf):
        return valid_value(rng.choice(spec.alternatives), rng, depth)
    if isinstance(spec, s.Optional):
        return None if rng.random() < 0.3 else valid_value(spec.spec, rng, depth)
    return None


def out_of_range(spec: s.Spec, rng: random.Random) -> Any:
    """A value of the right wire type one step outside what `spec` allows (or None)."""
    if isinstance(spec, s.Int):
        return rng.choice((spec.lo - 1, spec.hi + 1))
    if isinstance(spec, s.Bin):
        n = spec.max + 1 if spec.max is not None else 0
        return rng.randbytes(rng.choice([x for x in (spec.min - 1, n) if x >= 0] or [0]))
    if isinstance(spec, s.Str):
        return "y" * (spec.max + 1)
    if isinstance(spec, s.ListOf):
        return [valid_value(spec.item, rng) for _ in range(spec.max + 1)]
    if isinstance(spec, s.Tuple):
        items = [valid_value(item, rng) for item in spec.items]
        return items[:-1] if rng.random() < 0.5 else [*items, 0]
    return None


def other_type(value: Any, rng: random.Random) -> Any:
    """Type confusion: a value of another wire type (bool for int, bin for str, ...)."""
    choices: list[Any] = [None, True, 0, -1, "", b"", [], [[]], "0", b"\x00" * 8, 2**64 - 1]
    return rng.choice([c for c in choices if type(c) is not type(value)])


def paths(value: Any, prefix: tuple[int, ...] = ()) -> list[tuple[int, ...]]:
    out = [prefix]
    if isinstance(value, list):
        for i, item in enumerate(value):
            out.extend(paths(item, (*prefix, i)))
    return out


def get_at(value: Any, path: tuple[int, ...]) -> Any:
    for i in path:
        value = value[i]
    return value


def set_at(value: Any, path: tuple[int, ...], new: Any) -> Any:
    if not path:
        return new
    parent = get_at(value, path[:-1])
    parent[path[-1]] = new
    return value


def spec_at(spec: s.Spec | None, path: tuple[int, ...], value: Any) -> s.Spec | None:
    """The schema of the field at `path` (as far as it can be followed)."""
    for depth, i in enumerate(path):
        while isinstance(spec, s.OneOf | s.Optional):
            spec = spec.alternatives[0] if isinstance(spec, s.OneOf) else spec.spec
            here = get_at(value, path[:depth])
            if isinstance(here, list) and here and isinstance(here[0], list):
                break
        if isinstance(spec, s.Tuple) and i < len(spec.items):
            spec = spec.items[i]
        elif isinstance(spec, s.ListOf):
            spec = spec.item
        else:
            return None
    return spec


class Mutator:
    """Makes hostile datagrams from valid ones. `key` is the puppet's signing key."""

    def __init__(
        self,
        rng: random.Random,
        key: SigningKeyPair,
        table: bytes,
        *,
        lamport_cap: int | None = None,
    ) -> None:
        #: Ops get no Lamport time above this (None: up to the schema's 2**48). A scope for
        #: campaigns that must pass on main, which crashes on a time at the ceiling.
        self.lamport_cap = lamport_cap
        self.rng = rng
        self.key = key
        self.table = table
        self.mutators: list[tuple[str, Callable[[bytes], bytes | None]]] = [
            ("bit_flip", self.bit_flip),
            ("truncate", self.truncate),
            ("trailing", self.trailing),
            ("oversize", self.oversize),
            ("deep_nesting", self.deep_nesting),
            ("version", self.version),
            ("noncanonical", self.noncanonical),
            ("type_confusion", self.type_confusion),
            ("boundary", self.boundary),
            ("schema_value", self.schema_value),
            ("seq_lamport", self.seq_lamport),
            ("wrong_table", self.wrong_table),
            ("resigned_garbage", self.resigned_garbage),
            ("replay", self.replay),
        ]

    def mutate(self, seed_datagram: bytes) -> tuple[str, bytes | None]:
        name, mutator = self.rng.choice(self.mutators)
        try:
            return name, mutator(seed_datagram)
        except (ProtocolError, ValueError, TypeError, OverflowError, IndexError, KeyError):
            return name, None  # this mutation does not apply to this message

    # --- raw bytes -----------------------------------------------------------------------

    def bit_flip(self, d: bytes) -> bytes:
        buf = bytearray(d)
        for _ in range(self.rng.choice((1, 1, 2, 8))):
            buf[self.rng.randrange(len(buf))] ^= 1 << self.rng.randrange(8)
        return bytes(buf)

    def truncate(self, d: bytes) -> bytes:
        return d[: self.rng.randrange(len(d))]

    def trailing(self, d: bytes) -> bytes:
        return d + self.rng.randbytes(self.rng.choice((1, 2, 16)))

    def oversize(self, d: bytes) -> bytes:
        return d + bytes(1201 - len(d)) if len(d) <= 1200 else d

    def deep_nesting(self, d: bytes) -> bytes:
        depth = self.rng.choice((15, 16, 17, 100, 1000))
        value: Any = 0
        for _ in range(depth):
            value = [value]
        body = _pack_raw([int(Kind.HEARTBEAT), self.table, self.key.key_id, 1, value, b""])
        inner = body if len(body) <= 1100 else body[:1100]
        return (
            envelope(inner, sign(self.key, inner))
            if self.rng.random() < 0.5
            else _pack_raw([PROTOCOL_VERSION, value, bytes(64)])[:1200]
        )

    def version(self, d: bytes) -> bytes | None:
        parts = split(d)
        if parts is None:
            return None
        body, signature, _ = parts
        return envelope(body, signature, self.rng.choice((0, 2, 255, -1, 2**32)))

    def noncanonical(self, d: bytes) -> bytes | None:
        """The same value with a wider header than needed (uint32 for a small int)."""
        parts = split(d)
        if parts is None:
            return None
        body, signature, _ = parts
        for i, byte in enumerate(body[1:], start=1):
            if byte < 0x80:
                wide = body[:i] + b"\xce" + byte.to_bytes(4, "big") + body[i + 1 :]
                return envelope(wide, self._sign_maybe(wide, signature))
        return None

    # --- structure -----------------------------------------------------------------------

    def _rebuild(self, d: bytes, change: Callable[[Any, s.Spec | None], Any]) -> bytes | None:
        parts = split(d)
        if parts is None:
            return None
        _, signature, body = parts
        spec = spec_for(body)
        body = self._capped(change(body, spec))
        packed = _pack_raw(body)
        return envelope(packed, self._sign_maybe(packed, signature))

    def _capped(self, body: Any) -> Any:
        cap = self.lamport_cap
        if (
            cap is not None
            and isinstance(body, list)
            and len(body) > 5
            and type(body[0]) is int
            and body[0] < 16
            and type(body[5]) is int
            and body[5] > cap
        ):
            body[5] = cap
        if (
            cap is not None
            and isinstance(body, list)
            and len(body) > 3
            and body[0] == Kind.HEARTBEAT
            and type(body[3]) is int
            and body[3] > cap
        ):
            body[3] = cap  # version 2 holds a heartbeat's time as a promise
        return body

    def _sign_maybe(self, body: bytes, signature: bytes) -> bytes:
        """Keep the old signature, sign with the puppet's key, or sign nothing."""
        roll = self.rng.random()
        if roll < 0.45:
            return sign(self.key, body)
        if roll < 0.9:
            return signature
        return bytes(64)

    def type_confusion(self, d: bytes) -> bytes | None:
        def change(body: Any, spec: s.Spec | None) -> Any:
            path = self.rng.choice(paths(body))
            return set_at(body, path, other_type(get_at(body, path), self.rng))

        return self._rebuild(d, change)

    def boundary(self, d: bytes) -> bytes | None:
        def change(body: Any, spec: s.Spec | None) -> Any:
            path = self.rng.choice(paths(body)[1:] or [()])
            field = spec_at(spec, path, body)
            new = out_of_range(field, self.rng) if field is not None else None
            if new is None:
                new = self.rng.choice(BOUNDARY_INTS)
            return set_at(body, path, new)

        return self._rebuild(d, change)

    def schema_value(self, d: bytes) -> bytes | None:
        """A field replaced by another valid value of its type: passes the schema, then
        meets the later steps of the gate (and, for the puppet's ops, the rules)."""

        def change(body: Any, spec: s.Spec | None) -> Any:
            path = self.rng.choice(paths(body)[1:] or [()])
            field = spec_at(spec, path, body)
            if field is None:
                return body
            if isinstance(get_at(body, path), str) and self.rng.random() < 0.5:
                return set_at(body, path, self.rng.choice(STRANGE_STRS))
            return set_at(body, path, valid_value(field, self.rng))

        return self._rebuild(d, change)

    def seq_lamport(self, d: bytes) -> bytes | None:
        """Stale and future seq (body[3]) or lamport (body[5] of an op, body[3] of a
        heartbeat), signed by the puppet with its own id as author."""

        def change(body: Any, spec: s.Spec | None) -> Any:
            if body[0] < 16:
                body[2] = self.key.key_id
                field = self.rng.choice((3, 5))
            else:
                body[2] = self.key.key_id
                field = 3
            old = body[field] if type(body[field]) is int else 1
            body[field] = max(
                0, self.rng.choice((old - 1, old + 1, old + 1000, 1, 0, 2**32 - 1, 2**48))
            )
            return body

        return self._rebuild(d, change)

    def wrong_table(self, d: bytes) -> bytes | None:
        def change(body: Any, spec: s.Spec | None) -> Any:
            body[1] = self.rng.randbytes(8)
            return body

        return self._rebuild(d, change)

    def resigned_garbage(self, d: bytes) -> bytes | None:
        """A schema-valid body of any kind, in the puppet's name, properly signed."""
        kind = self.rng.choice(list(OP_SCHEMA.variants) + list(SYNC_SCHEMA.variants))
        spec = OP_SCHEMA.variants.get(kind) or SYNC_SCHEMA.variants[kind]
        body = valid_value(spec, self.rng)
        body[0], body[1], body[2] = kind, self.table, self.key.key_id
        packed = pack(self._capped(body))
        if len(packed) > 1100:
            return None
        return envelope(packed, sign(self.key, packed))

    def replay(self, d: bytes) -> bytes:
        """A valid datagram as it was: a stale duplicate, or one out of protocol order."""
        return d
