from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol import (
    DropReason,
    LamportClock,
    RemoteProtocolError,
    VersionVector,
    order_key,
    tiebreak,
)

A, B, C = b"a" * 8, b"b" * 8, b"c" * 8


def test_lamport_tick_counts_local_events() -> None:
    clock = LamportClock()
    assert clock.value == 0
    assert clock.tick() == 1
    assert clock.tick() == 2
    assert clock.value == 2


def test_lamport_observe_is_max_plus_one() -> None:
    clock = LamportClock(2)
    assert clock.observe(10) == 11  # remote ahead: jump past it
    assert clock.observe(3) == 12  # remote behind: still move forward
    assert clock.observe(12) == 13  # equal: still strictly later
    assert clock.tick() == 14
    assert clock.value == 14


def test_lamport_op_authored_after_observing_is_later_than_what_was_observed() -> None:
    clock = LamportClock(5)
    received = 40
    clock.observe(received)
    assert clock.tick() > received


@pytest.mark.parametrize("bad", [-1, True, 1.5])
def test_lamport_refuses_values_that_are_not_counts(bad: object) -> None:
    with pytest.raises(ValueError, match="Lamport"):
        LamportClock(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Lamport"):
        LamportClock().observe(bad)  # type: ignore[arg-type]


def test_vector_ignores_zero_entries() -> None:
    assert VersionVector({A: 3, B: 0}) == VersionVector({A: 3})
    assert hash(VersionVector({A: 3, B: 0})) == hash(VersionVector([(A, 3)]))
    assert len(VersionVector({A: 3, B: 0})) == 1
    assert VersionVector({A: 3}).seq(B) == 0
    assert B not in VersionVector({A: 3, B: 0})


def test_vector_merge_takes_the_highest_seq_per_author() -> None:
    left = VersionVector({A: 3, B: 5})
    right = VersionVector({A: 7, C: 1})
    assert left.merge(right) == VersionVector({A: 7, B: 5, C: 1})


def test_vector_dominates() -> None:
    big = VersionVector({A: 3, B: 5})
    assert big.dominates(VersionVector({A: 3, B: 4}))
    assert big.dominates(big)
    assert big.dominates(VersionVector())
    assert not big.dominates(VersionVector({A: 4}))
    assert not big.dominates(VersionVector({C: 1}))
    assert not VersionVector().dominates(big)


def test_vector_missing_ranges_are_what_to_ask_for() -> None:
    mine = VersionVector({A: 3, B: 5})
    theirs = VersionVector({A: 7, B: 2, C: 4})
    assert mine.missing_ranges(theirs) == [(A, 4, 7), (C, 1, 4)]
    assert theirs.missing_ranges(mine) == [(B, 3, 5)]
    assert mine.missing_ranges(mine) == []


def test_vector_advanced_never_lowers() -> None:
    vector = VersionVector({A: 3})
    assert vector.advanced(A, 5) == VersionVector({A: 5})
    assert vector.advanced(A, 2) == vector
    assert vector.advanced(B, 1) == VersionVector({A: 3, B: 1})
    assert vector == VersionVector({A: 3})  # immutable


def test_vector_wire_form_is_sorted_pairs() -> None:
    vector = VersionVector({C: 1, A: 3})
    assert vector.as_pairs() == [(A, 3), (C, 1)]
    assert VersionVector.from_pairs([[A, 3], [C, 1]]) == vector
    assert list(vector) == [A, C]


@pytest.mark.parametrize(
    ("pairs", "words"),
    [
        pytest.param([[C, 1], [A, 3]], "strictly increasing", id="unsorted"),
        pytest.param([[A, 1], [A, 3]], "strictly increasing", id="repeated author"),
        pytest.param([[A, 0]], "at least 1", id="zero seq"),
        pytest.param([[A]], "[author, seq]", id="short entry"),
        pytest.param([["a", 1]], "bin author", id="str author"),
        pytest.param([[A, True]], "int seq", id="bool seq"),
    ],
)
def test_vector_from_wire_must_be_canonical(pairs: list[list[object]], words: str) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        VersionVector.from_pairs(pairs)
    assert info.value.reason is DropReason.SCHEMA
    assert words in info.value.message


def test_vector_refuses_bad_local_entries() -> None:
    with pytest.raises(ValueError, match="twice"):
        VersionVector([(A, 1), (A, 2)])
    with pytest.raises(ValueError, match="seq"):
        VersionVector({A: -1})
    with pytest.raises(ValueError, match="bytes"):
        VersionVector({"a": 1})  # type: ignore[arg-type]


vectors = st.dictionaries(st.sampled_from([A, B, C, b"d" * 8]), st.integers(0, 20)).map(
    VersionVector
)


@given(vectors, vectors, vectors)
def test_merge_is_a_join(x: VersionVector, y: VersionVector, z: VersionVector) -> None:
    assert x.merge(y) == y.merge(x)
    assert x.merge(y).merge(z) == x.merge(y.merge(z))
    assert x.merge(x) == x
    assert x.merge(y).dominates(x)
    assert x.merge(y).dominates(y)


@given(vectors, vectors)
def test_dominates_agrees_with_merge_and_missing_ranges(x: VersionVector, y: VersionVector) -> None:
    assert x.dominates(y) == (x.merge(y) == x) == (x.missing_ranges(y) == [])


@given(vectors, vectors)
def test_fetching_the_missing_ranges_catches_up(x: VersionVector, y: VersionVector) -> None:
    caught_up = x
    for author, first, last in x.missing_ranges(y):
        assert first == x.seq(author) + 1
        assert first <= last
        caught_up = caught_up.advanced(author, last)
    assert caught_up == x.merge(y)


def test_tiebreak_is_sha256_of_mix_and_key() -> None:
    mix, key = b"m" * 32, b"k" * 32
    assert tiebreak(mix, key) == hashlib.sha256(mix + key).digest()
    assert len(tiebreak(mix, key)) == 32


def test_no_key_wins_every_tie() -> None:
    first, second = b"\x00" * 32, b"\xff" * 32
    winners = {
        min(first, second, key=lambda key: tiebreak(bytes([round_]) * 32, key))
        for round_ in range(32)
    }
    assert winners == {first, second}


def test_ops_sort_by_lamport_then_tiebreak() -> None:
    low, high = b"\x00" * 32, b"\xff" * 32
    keys = [order_key(2, low), order_key(1, high), order_key(2, high), order_key(1, low)]
    assert sorted(keys) == [(1, low), (1, high), (2, low), (2, high)]
