"""A small declarative checker for unpacked msgpack values.

Messages are described as data (`Tuple(Int(0, 2**32 - 1), Bin(exact=8), ...)`) and checked in one
call after `unpack_bounded`. A failure is a `RemoteProtocolError(SCHEMA)` whose message names the
path to the bad field and what was expected, e.g.
``body.vv[3][1]: expected int 0..4294967295, got str``, so a drop counter's log line is enough to
find which peer sent what.

The checker only knows wire types: nil, bool, int, str, bin, array, map. Bounds are mandatory where
an attacker could otherwise make us hold something large (arrays), and types are exact: msgpack
gives Python bools, which are ints to `isinstance`, and `Int` must not accept them.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import NoReturn, final

from .errors import DropReason, RemoteProtocolError

__all__ = [
    "Bin",
    "Bool",
    "Const",
    "Int",
    "ListOf",
    "Nil",
    "OneOf",
    "Optional",
    "Record",
    "Spec",
    "Str",
    "Tagged",
    "Tuple",
]


def _wire_type(value: object) -> str:
    """The msgpack name of a value's type, as a peer's author would think of it."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, str):
        return "str"
    if isinstance(value, bytes):
        return "bin"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "map"
    return type(value).__name__


def _fail(path: str, expected: str, got: str) -> NoReturn:
    raise RemoteProtocolError(DropReason.SCHEMA, f"{path}: expected {expected}, got {got}")


def _length_words(lo: int, hi: int | None, unit: str) -> str:
    if hi is None:
        return f"at least {lo} {unit}"
    if lo == hi:
        return f"exactly {lo} {unit}"
    return f"{lo}..{hi} {unit}"


class Spec(abc.ABC):
    """What a value must look like. `check` raises RemoteProtocolError(SCHEMA) or returns."""

    __slots__ = ()

    @abc.abstractmethod
    def check(self, value: object, path: str = "value") -> None:
        """Raise RemoteProtocolError(SCHEMA), naming `path`, unless `value` fits this spec."""

    @abc.abstractmethod
    def valid(self, value: object) -> bool:
        """Does `value` fit this spec? The same verdict as `check`, without words: every
        datagram is checked, and building the path of every field it passes would cost more
        than the checks themselves. Composite specs ask it first and walk the value with paths
        only when it fails, to say where."""

    @abc.abstractmethod
    def describe(self) -> str:
        """The expectation in plain words, used in error messages."""


@final
class Int(Spec):
    """An integer in `lo..hi`, both ends included. Bools are refused."""

    __slots__ = ("hi", "lo")

    def __init__(self, lo: int, hi: int) -> None:
        if lo > hi:
            raise ValueError(f"empty range {lo}..{hi}")
        self.lo = lo
        self.hi = hi

    def describe(self) -> str:
        return f"int {self.lo}..{self.hi}"

    def check(self, value: object, path: str = "value") -> None:
        if not isinstance(value, int) or isinstance(value, bool):
            _fail(path, self.describe(), _wire_type(value))
        if not self.lo <= value <= self.hi:
            _fail(path, self.describe(), f"int {value}")

    def valid(self, value: object) -> bool:
        return (
            type(value) is int or (isinstance(value, int) and not isinstance(value, bool))
        ) and self.lo <= value <= self.hi


@final
class Bool(Spec):
    """True or false, and nothing that merely behaves like it (not 0, not 1)."""

    __slots__ = ()

    def describe(self) -> str:
        return "bool"

    def check(self, value: object, path: str = "value") -> None:
        if not isinstance(value, bool):
            _fail(path, "bool", _wire_type(value))

    def valid(self, value: object) -> bool:
        return isinstance(value, bool)


@final
class Nil(Spec):
    """msgpack nil (Python None)."""

    __slots__ = ()

    def describe(self) -> str:
        return "nil"

    def check(self, value: object, path: str = "value") -> None:
        if value is not None:
            _fail(path, self.describe(), _wire_type(value))

    def valid(self, value: object) -> bool:
        return value is None


@final
class Const(Spec):
    """Exactly one value of one type, for version numbers and tags (1 is not True)."""

    __slots__ = ("value",)

    def __init__(self, value: int | str | bytes | bool | None) -> None:
        self.value = value

    def describe(self) -> str:
        return f"{_wire_type(self.value)} {self.value!r}"

    def check(self, value: object, path: str = "value") -> None:
        if type(value) is not type(self.value) or value != self.value:
            got = _wire_type(value)
            if isinstance(value, int | str | bytes) or value is None:
                got = f"{got} {value!r}"
            _fail(path, self.describe(), got)

    def valid(self, value: object) -> bool:
        return type(value) is type(self.value) and value == self.value


@final
class Bin(Spec):
    """A msgpack bin whose length is `exact`, or within `min..max` bytes."""

    __slots__ = ("max", "min")

    def __init__(self, *, exact: int | None = None, min: int = 0, max: int | None = None) -> None:
        if exact is not None:
            if min != 0 or max is not None:
                raise ValueError("give either exact or min/max, not both")
            min = max = exact
        if min < 0 or (max is not None and max < min):
            raise ValueError(f"bad length bounds {min}..{max}")
        self.min = min
        self.max = max

    def describe(self) -> str:
        return f"bin of {_length_words(self.min, self.max, 'bytes')}"

    def check(self, value: object, path: str = "value") -> None:
        if not isinstance(value, bytes):
            _fail(path, self.describe(), _wire_type(value))
        size = len(value)
        if size < self.min or (self.max is not None and size > self.max):
            _fail(path, self.describe(), f"{size} bytes")

    def valid(self, value: object) -> bool:
        if not isinstance(value, bytes):
            return False
        size = len(value)
        return size >= self.min and (self.max is None or size <= self.max)


@final
class Str(Spec):
    """A UTF-8 string of `min..max` bytes once encoded (bytes, because bytes are what travel)."""

    __slots__ = ("max", "min")

    def __init__(self, *, max: int, min: int = 0) -> None:
        if min < 0 or max < min:
            raise ValueError(f"bad length bounds {min}..{max}")
        self.min = min
        self.max = max

    def describe(self) -> str:
        return f"str of {_length_words(self.min, self.max, 'UTF-8 bytes')}"

    def check(self, value: object, path: str = "value") -> None:
        if not isinstance(value, str):
            _fail(path, self.describe(), _wire_type(value))
        # Lone surrogates cannot come out of msgpack (it decodes strictly), but a locally built
        # value could hold one; surrogatepass measures it instead of raising UnicodeEncodeError.
        size = len(value.encode("utf-8", errors="surrogatepass"))
        if not self.min <= size <= self.max:
            _fail(path, self.describe(), f"{size} bytes")

    def valid(self, value: object) -> bool:
        if not isinstance(value, str):
            return False
        # An ASCII string is as many bytes as characters: no need to encode it.
        size = len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))
        return self.min <= size <= self.max


@final
class ListOf(Spec):
    """An array of `min..max` items, each matching `item`. `max` is required: arrays are where
    an unbounded schema would let a peer make us hold and loop over a lot."""

    __slots__ = ("item", "max", "min")

    def __init__(self, item: Spec, *, max: int, min: int = 0) -> None:
        if min < 0 or max < min:
            raise ValueError(f"bad length bounds {min}..{max}")
        self.item = item
        self.max = max
        self.min = min

    def describe(self) -> str:
        return f"array of {_length_words(self.min, self.max, 'items')}"

    def check(self, value: object, path: str = "value") -> None:
        if self.valid(value):
            return
        if not isinstance(value, list | tuple):
            _fail(path, self.describe(), _wire_type(value))
        if not self.min <= len(value) <= self.max:
            _fail(path, self.describe(), f"{len(value)} items")
        for index, item in enumerate(value):
            self.item.check(item, f"{path}[{index}]")

    def valid(self, value: object) -> bool:
        if not isinstance(value, list | tuple) or not self.min <= len(value) <= self.max:
            return False
        return all(map(self.item.valid, value))


@final
class Tuple(Spec):
    """A fixed-length array whose item i matches `items[i]`."""

    __slots__ = ("items",)

    def __init__(self, *items: Spec) -> None:
        self.items = items

    def describe(self) -> str:
        return f"array of exactly {len(self.items)} items"

    def check(self, value: object, path: str = "value") -> None:
        if self.valid(value):
            return
        if not isinstance(value, list | tuple):
            _fail(path, self.describe(), _wire_type(value))
        if len(value) != len(self.items):
            _fail(path, self.describe(), f"{len(value)} items")
        for index, (spec, item) in enumerate(zip(self.items, value, strict=True)):
            spec.check(item, f"{path}[{index}]")

    def valid(self, value: object) -> bool:
        if not isinstance(value, list | tuple) or len(value) != len(self.items):
            return False
        for spec, item in zip(self.items, value, strict=True):  # noqa: SIM110 (a loop is faster)
            if not spec.valid(item):
                return False
        return True


@final
class OneOf(Spec):
    """Matches if any alternative matches; alternatives are tried in order.

    The error names the alternatives, not why each one failed: for tagged messages use `Tagged`,
    which reports the failure inside the chosen variant.
    """

    __slots__ = ("alternatives",)

    def __init__(self, *alternatives: Spec) -> None:
        if not alternatives:
            raise ValueError("OneOf needs at least one alternative")
        self.alternatives = alternatives

    def describe(self) -> str:
        return "one of (" + " | ".join(spec.describe() for spec in self.alternatives) + ")"

    def check(self, value: object, path: str = "value") -> None:
        for spec in self.alternatives:
            try:
                spec.check(value, path)
            except RemoteProtocolError:
                continue
            return
        _fail(path, self.describe(), _wire_type(value))

    def valid(self, value: object) -> bool:
        for spec in self.alternatives:  # noqa: SIM110 (a loop: any() over a generator is slower)
            if spec.valid(value):
                return True
        return False


@final
class Optional(Spec):
    """nil, or a value matching `spec`."""

    __slots__ = ("spec",)

    def __init__(self, spec: Spec) -> None:
        self.spec = spec

    def describe(self) -> str:
        return f"nil or {self.spec.describe()}"

    def check(self, value: object, path: str = "value") -> None:
        if value is not None:
            self.spec.check(value, path)

    def valid(self, value: object) -> bool:
        return value is None or self.spec.valid(value)


@final
class Tagged(Spec):
    """An array whose first item is a kind tag that selects the shape of the rest.

    `Tagged({1: Tuple(Int(0, 9)), 2: Tuple()})` accepts `[1, 5]` and `[2]`. An unknown tag is
    reported as such ("unknown kind 7"), and errors inside a variant keep the full array's
    indices, so `[1, "x"]` fails at `[1]`.
    """

    __slots__ = ("variants",)

    def __init__(self, variants: Mapping[int | str, Tuple]) -> None:
        if not variants:
            raise ValueError("Tagged needs at least one variant")
        self.variants = dict(variants)

    def describe(self) -> str:
        kinds = ", ".join(repr(kind) for kind in self.variants)
        return f"array starting with a kind tag ({kinds})"

    def check(self, value: object, path: str = "value") -> None:
        if self.valid(value):
            return
        if not isinstance(value, list | tuple) or not value:
            got = _wire_type(value) if not isinstance(value, list | tuple) else "empty array"
            _fail(path, self.describe(), got)
        tag = value[0]
        # Exact types: True would find variant 1 (True == 1), and a list tag cannot be hashed.
        variant = self.variants.get(tag) if type(tag) is int or type(tag) is str else None
        if variant is None:
            shown = repr(tag) if isinstance(tag, int | str | bytes) else _wire_type(tag)
            raise RemoteProtocolError(DropReason.SCHEMA, f"{path}[0]: unknown kind {shown}")
        rest = value[1:]
        if len(rest) != len(variant.items):
            _fail(
                path,
                f"kind {tag!r} as an array of exactly {len(variant.items) + 1} items",
                f"{len(value)} items",
            )
        for index, (spec, item) in enumerate(zip(variant.items, rest, strict=True), start=1):
            spec.check(item, f"{path}[{index}]")

    def valid(self, value: object) -> bool:
        if not isinstance(value, list | tuple) or not value:
            return False
        tag = value[0]
        variant = self.variants.get(tag) if type(tag) is int or type(tag) is str else None
        if variant is None or len(value) != len(variant.items) + 1:
            return False
        for spec, item in zip(variant.items, value[1:], strict=True):  # noqa: SIM110 (faster)
            if not spec.valid(item):
                return False
        return True


@final
class Record(Spec):
    """A map with exactly these str keys, each value matching its spec."""

    __slots__ = ("fields",)

    def __init__(self, fields: Mapping[str, Spec]) -> None:
        self.fields = dict(fields)

    def describe(self) -> str:
        return "map with keys " + ", ".join(sorted(self.fields))

    def check(self, value: object, path: str = "value") -> None:
        if not isinstance(value, dict):
            _fail(path, self.describe(), _wire_type(value))
        missing = sorted(key for key in self.fields if key not in value)
        if missing:
            raise RemoteProtocolError(
                DropReason.SCHEMA, f"{path}: missing key(s) {', '.join(missing)}"
            )
        unknown = sorted(repr(key) for key in value if key not in self.fields)
        if unknown:
            raise RemoteProtocolError(
                DropReason.SCHEMA, f"{path}: unknown key(s) {', '.join(unknown)}"
            )
        for key, spec in self.fields.items():
            spec.check(value[key], f"{path}.{key}")

    def valid(self, value: object) -> bool:
        return (
            isinstance(value, dict)
            and len(value) == len(self.fields)
            and all(key in value and spec.valid(value[key]) for key, spec in self.fields.items())
        )
