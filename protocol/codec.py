"""msgpack with limits: the only way bytes from the network become Python values.

`pack` is deterministic (one value, one byte string) because signatures and the `prev` hash chain
are computed over encoded bytes: two peers that encode the same message must get the same bytes.
So there are no floats (their encoding and equality are too loose for that), maps are written
with sorted keys, and only plain msgpack types are allowed.

`unpack_bounded` is the unpack step of the receive gate. The attacker controls every byte, so it
bounds everything before doing work: the input size first, then every length msgpack reads from a
header (a 5-byte array header may claim four billion elements), then the nesting depth. Whatever
goes wrong, the caller sees `RemoteProtocolError` and nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise

import msgpack

from .errors import DropReason, LocalProtocolError, RemoteProtocolError

__all__ = [
    "MAX_DATAGRAM",
    "MAX_DEPTH",
    "pack",
    "unpack_bounded",
    "unpack_own",
]

MAX_DATAGRAM = 1200
"""Largest UDP payload we send or accept: fits a 1280-byte IPv6 minimum MTU with headers to
spare, so datagrams are never fragmented."""

MAX_DEPTH = 16
"""Deepest nesting of arrays and maps in any message. Real messages need about four levels; the
margin costs nothing and a nesting bomb is refused long before it costs anything."""

_INT_MIN = -(2**63)
_INT_MAX = 2**64 - 1


class _RejectedError(Exception):
    """Raised from inside msgpack hooks; msgpack lets it through and we turn it into MALFORMED."""


def _map_key_order(key: str | bytes) -> tuple[bool, str | bytes]:
    # Text keys sort before byte keys, each in natural order (for str that is also UTF-8 byte
    # order), so a map mixing both still has exactly one encoding.
    return (isinstance(key, bytes), key)


def _normalized(value: object, depth: int) -> object:
    """Check that `value` is packable deterministically; return it with maps in key order."""
    if value is None or isinstance(value, bool | str | bytes):
        return value
    if isinstance(value, int):
        if not _INT_MIN <= value <= _INT_MAX:
            raise LocalProtocolError(
                DropReason.SCHEMA, f"integer {value} does not fit in msgpack's 64 bits"
            )
        return value
    if isinstance(value, float):
        raise LocalProtocolError(
            DropReason.SCHEMA, "floats are not allowed on the wire: their encoding is not exact"
        )
    # Only list and tuple become arrays: a bytearray is a Sequence too, and must not silently
    # travel as an array of small ints.
    if isinstance(value, list | tuple | Mapping):
        if depth >= MAX_DEPTH:
            raise LocalProtocolError(
                DropReason.SCHEMA, f"value is nested deeper than {MAX_DEPTH} levels"
            )
        if isinstance(value, Mapping):
            for key in value:
                if not isinstance(key, str | bytes):
                    raise LocalProtocolError(
                        DropReason.SCHEMA,
                        f"map keys must be str or bytes, got {type(key).__name__}",
                    )
            return {
                key: _normalized(value[key], depth + 1) for key in sorted(value, key=_map_key_order)
            }
        return [_normalized(item, depth + 1) for item in value]
    raise LocalProtocolError(
        DropReason.SCHEMA, f"{type(value).__name__} values cannot be sent on the wire"
    )


def pack(obj: object) -> bytes:
    """Encode `obj` deterministically.

    Allowed: None, bool, int (signed or unsigned 64-bit), bytes (as msgpack bin), str, list and
    tuple (as arrays), and maps with str or bytes keys (written in sorted key order).
    Raises `LocalProtocolError` for anything else, since sending it would be our own bug.
    """
    normalized = _normalized(obj, 0)
    try:
        packed = msgpack.packb(normalized, use_bin_type=True)
    except (ValueError, TypeError, OverflowError) as exc:
        # In practice a str that is not valid Unicode (a lone surrogate).
        raise LocalProtocolError(DropReason.SCHEMA, f"cannot encode value: {exc}") from exc
    assert isinstance(packed, bytes)
    return packed


def _refuse_ext(code: int, data: bytes) -> object:
    raise _RejectedError(f"msgpack extension types are not allowed (got type {code})")


def _map_without_duplicates(pairs: list[tuple[object, object]]) -> dict[object, object]:
    result = dict(pairs)
    if len(result) != len(pairs):
        # A repeated key would let one message mean different things to different decoders.
        raise _RejectedError("map repeats a key")
    return result


def _map_in_canonical_order(pairs: list[tuple[object, object]]) -> dict[object, object]:
    # strict_map_key guarantees str or bytes keys; strictly increasing also rules out repeats.
    keys = [_map_key_order(key) for key, _ in pairs if isinstance(key, str | bytes)]
    if len(keys) != len(pairs) or any(left >= right for left, right in pairwise(keys)):
        raise _RejectedError("not in canonical encoding (map keys out of order or repeated)")
    return dict(pairs)


_PLAIN_SCALARS: frozenset[type] = frozenset({type(None), bool, int, str, bytes})


def _check_plain(value: object, depth: int = 0) -> None:
    """Refuse floats, leftover extension values and nesting deeper than MAX_DEPTH.

    Recursive, but never deeper than MAX_DEPTH: the depth is checked before descending, so the
    thousand nested arrays msgpack can build from a 1200-byte datagram are refused at level 16.
    Scalars are skipped without a call, which keeps the common case (a flat op body) cheap.
    """
    kind = type(value)
    if kind in _PLAIN_SCALARS:
        return
    if isinstance(value, list | dict):
        if depth >= MAX_DEPTH:
            raise _RejectedError(f"nested deeper than {MAX_DEPTH} levels")
        children = value.values() if isinstance(value, dict) else value
        for child in children:
            if type(child) not in _PLAIN_SCALARS:
                _check_plain(child, depth + 1)
        return
    if kind is float:
        raise _RejectedError("floats are not allowed")
    raise _RejectedError(f"{kind.__name__} values are not allowed")


def unpack_own(data: bytes) -> object:
    """The value of bytes this process has just made with `pack` (never a network's): no
    limits to enforce, and the same value `unpack_bounded` gives for them."""
    return msgpack.unpackb(data, raw=False, use_list=True)


def unpack_bounded(data: bytes, *, max_len: int = MAX_DATAGRAM, canonical: bool = False) -> object:
    """Decode exactly one msgpack value from `data`, refusing anything outside the limits.

    The size gate comes first (OVERSIZE), so an oversized datagram costs one `len`. Everything
    else that is wrong with the bytes is MALFORMED: incomplete or invalid msgpack, trailing
    bytes, a length over the limits, floats, extension types, repeated map keys, non-UTF-8
    strings, nesting deeper than MAX_DEPTH. With `canonical=True` the bytes must also be exactly
    what `pack` would produce for the decoded value, so one message has one encoding (which keeps
    hashes of bodies meaningful as identities).

    Raises only `RemoteProtocolError`, whatever the bytes.
    """
    size = len(data)
    if size > max_len:
        raise RemoteProtocolError(
            DropReason.OVERSIZE, f"{size} bytes is over the limit of {max_len} bytes"
        )
    if size == 0:
        raise RemoteProtocolError(DropReason.MALFORMED, "empty input")
    try:
        value = msgpack.unpackb(
            data,
            raw=False,
            strict_map_key=True,
            use_list=True,
            # Every element takes at least one byte and every map entry two, so no honest header
            # can claim more than this; a lying header is refused before anything is allocated.
            max_str_len=size,
            max_bin_len=size,
            max_array_len=size,
            max_map_len=size // 2,
            max_ext_len=0,
            ext_hook=_refuse_ext,
            object_pairs_hook=_map_in_canonical_order if canonical else _map_without_duplicates,
        )
        _check_plain(value)
    except _RejectedError as exc:
        raise RemoteProtocolError(DropReason.MALFORMED, str(exc)) from None
    except msgpack.ExtraData:
        raise RemoteProtocolError(
            DropReason.MALFORMED, "trailing bytes after the msgpack value"
        ) from None
    except UnicodeDecodeError:
        raise RemoteProtocolError(DropReason.MALFORMED, "a string is not valid UTF-8") from None
    except msgpack.StackError:
        raise RemoteProtocolError(DropReason.MALFORMED, "nested too deeply") from None
    except (msgpack.UnpackException, ValueError, TypeError, RecursionError) as exc:
        # ValueError covers FormatError, incomplete input and exceeded limits; TypeError and
        # RecursionError are what the pure-Python fallback unpacker raises for some inputs.
        raise RemoteProtocolError(DropReason.MALFORMED, f"not valid msgpack: {exc}") from None
    # With map key order already checked by the hook, what is left to be non-canonical is the
    # choice of header widths, and msgpack's own packer (in C) always picks the smallest, as
    # `pack` does.
    if canonical and msgpack.packb(value, use_bin_type=True) != data:
        raise RemoteProtocolError(
            DropReason.MALFORMED, "not in canonical encoding (a wider header than needed)"
        )
    return value
