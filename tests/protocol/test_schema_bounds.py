"""The schema's fast verdict (`valid`, asked of every datagram) at the very bounds of
lengths, where a wrong comparison lets a field through unchecked, and the bounds the wire
format gives (PROTOCOL.md 3): a name may be empty. (Found by `tools.mutate`, seed 102,
`protocol/schema.py`: random values rarely land on a bound.)"""

from __future__ import annotations

import pytest

from protocol import RemoteProtocolError
from protocol.messages import NO_PREV, OP_SCHEMA, PLAYER, Kind, op_body
from protocol.schema import Bin, Int, ListOf, Spec, Str
from tools.gen_vectors import KEYS, TABLE


def _checks(spec: Spec, value: object) -> bool:
    try:
        spec.check(value)
    except RemoteProtocolError:
        return False
    return True


@pytest.mark.parametrize(
    ("spec", "fitting", "not_fitting"),
    [
        (Bin(max=4), [b"", b"x" * 4], [b"x" * 5]),
        (Bin(min=2, max=4), [b"xx", b"x" * 4], [b"x", b"x" * 5]),
        (Bin(exact=8), [b"x" * 8], [b"x" * 7, b"x" * 9]),
        (Str(max=4), ["", "x" * 4, "\u00e9" * 2], ["x" * 5, "\u00e9" * 3]),
        (Str(min=1, max=4), ["x"], [""]),
        (ListOf(Int(0, 9), min=1, max=2), [[1], [1, 2]], [[], [1, 2, 3]]),
    ],
)
def test_valid_and_check_agree_at_every_length_bound(
    spec: Spec, fitting: list[object], not_fitting: list[object]
) -> None:
    for value in fitting:
        assert spec.valid(value), value
        assert _checks(spec, value), value
    for value in not_fitting:
        assert not spec.valid(value), value
        assert not _checks(spec, value), value


def test_a_join_with_an_empty_name_fits_the_wire_format() -> None:
    # PROTOCOL.md 3: `name (str <= 32 bytes)`; nothing says it has a least length.
    key = KEYS["mallory"]
    for name, fits in (("", True), ("x" * 32, True), ("x" * 33, False)):
        body = op_body(
            Kind.JOIN, TABLE, key.key_id, 1, NO_PREV, 5, 0, [[KEYS["host"].key_id, 1]],
            [key.public_key, name, PLAYER],
        )  # fmt: skip
        assert OP_SCHEMA.valid(body) is fits
        assert _checks(OP_SCHEMA, body) is fits
