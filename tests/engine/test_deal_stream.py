"""The shuffle reads the byte stream exactly as docs/DEAL.md specifies, rejected draws
included: another implementation that audits a round must deal the same decks."""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable, Iterator

import pytest

from nerts_p2p.game import deck
from nerts_p2p.game.deck import shuffled_indexes


def _spec_stream(seed: bytes) -> Iterator[int]:
    """Steps 1-2 of DEAL.md, word by word."""
    counter = 0
    while True:
        digest = hashlib.sha256(seed + counter.to_bytes(8, "big")).digest()
        yield from struct.unpack(">8I", digest)
        counter += 1


def _spec_shuffle(words: Iterator[int], deck_size: int) -> list[int]:
    """Step 3 of DEAL.md, as written."""
    order = list(range(deck_size))
    for i in range(deck_size - 1, 0, -1):
        bound = i + 1
        limit = 2**32 - (2**32 % bound)
        value = next(words)
        while value >= limit:
            value = next(words)
        j = value % bound
        order[i], order[j] = order[j], order[i]
    return order


@pytest.mark.parametrize("deck_size", [52, 53, 54])
def test_the_shuffle_is_the_one_deal_md_specifies(deck_size: int) -> None:
    for i in range(300):
        seed = hashlib.sha256(f"deal-{i}".encode()).digest()
        expected = _spec_shuffle(_spec_stream(seed), deck_size)
        assert shuffled_indexes(seed, deck_size) == expected


def _rejecting(
    words: Callable[[bytes, int, int], tuple[int, ...]],
) -> Callable[..., tuple[int, ...]]:
    """The stream with every third word replaced by one that every bound rejects."""

    def patched(seed: bytes, first_block: int, blocks: int) -> tuple[int, ...]:
        out = list(words(seed, first_block, blocks))
        for k in range(len(out)):
            if (first_block * 8 + k) % 3 == 0:
                out[k] = 2**32 - 1
        return tuple(out)

    return patched


@pytest.mark.parametrize("deck_size", [52, 54])
def test_a_rejected_draw_reads_the_next_word_even_past_the_first_blocks(
    monkeypatch: pytest.MonkeyPatch, deck_size: int
) -> None:
    # Rejections are rare with real seeds (a word must land in the last few of 2**32), so
    # the stream is made to reject a third of its words: the shuffle must then read well
    # past the blocks a shuffle without rejections needs.
    rejecting = _rejecting(deck._uint32_words)
    monkeypatch.setattr(deck, "_uint32_words", rejecting)
    seed = hashlib.sha256(b"rejections").digest()

    def words() -> Iterator[int]:
        block = 0
        while True:
            yield from rejecting(seed, block, 1)
            block += 1

    # bound 2**k never rejects: 2**32 - 1 is below the limit 2**32 for those draws.
    assert shuffled_indexes(seed, deck_size) == _spec_shuffle(words(), deck_size)
