"""A seat's deck order as a documented function of its seed, and the deal.

The shuffle must be reproducible by any implementation that audits a round, so it uses
no library PRNG. The specification (also in docs/DEAL.md):

1. The byte stream is SHA-256(seed || counter) for counter = 0, 1, 2, ... written as
   8-byte big-endian integers, the 32-byte digests concatenated.
2. The stream is read as 4-byte big-endian unsigned integers.
3. Fisher-Yates: start from the deck in index order (S A..K, H A..K, D A..K, C A..K,
   then jokers X1, X2) and for i = n-1 down to 1 pick j uniform in 0..i by rejection:
   with bound = i + 1 and limit = 2**32 - (2**32 % bound), draw integers until one is
   below limit; j = value % bound; swap positions i and j.
4. The deal reads the shuffled order front to back: the first `nerts_size` cards form the
   Nerts pile bottom to top (the last of them is the face-up top), the next `work_piles`
   cards go to work piles 0, 1, ..., and the rest form the stock, top card first.
"""

from __future__ import annotations

import hashlib
import struct
from typing import NamedTuple

from nerts_p2p.game.cards import make_card
from nerts_p2p.game.rules import Rules

SEED_BYTES = 32
SALT_BYTES = 16  # the commitment H(seed || salt) hides a seed even if seeds were guessable


def _uint32_words(seed: bytes, first_block: int, blocks: int) -> tuple[int, ...]:
    """Words of the stream (step 1-2 below) from block `first_block` on, `blocks` blocks
    (a block is eight big-endian 32-bit words)."""
    digests = b"".join(
        hashlib.sha256(seed + counter.to_bytes(8, "big")).digest()
        for counter in range(first_block, first_block + blocks)
    )
    return struct.unpack(f">{8 * blocks}I", digests)


#: The rejection limit of step 3 for each bound: 2**32 - (2**32 % bound), for every deck a
#: card index can name (64 cards per owner; a deck is 52 cards and up to two jokers).
_LIMITS = tuple(2**32 - (2**32 % bound) if bound else 0 for bound in range(65))


def shuffled_indexes(seed: bytes, deck_size: int) -> list[int]:
    """The deck's face indexes in shuffled order (step 1-3 of the module docstring)."""
    order = list(range(52)) + [52 + j for j in range(deck_size - 52)]
    # The words a shuffle needs without any rejection, read at once (every simulated
    # round deals a deck per seat); more blocks follow only when a draw is rejected.
    blocks = (deck_size + 6) // 8
    words = list(_uint32_words(seed, 0, blocks))
    at = 0
    for i in range(deck_size - 1, 0, -1):
        bound = i + 1
        limit = _LIMITS[bound]
        while True:  # draw until a word is below the limit
            if at == len(words):
                words.extend(_uint32_words(seed, blocks, 1))
                blocks += 1
            value = words[at]
            at += 1
            if value < limit:
                break
        j = value % bound
        order[i], order[j] = order[j], order[i]
    return order


class Deal(NamedTuple):
    """One seat's dealt layout, every card known (the owner's private view)."""

    nerts: tuple[int, ...]  # bottom to top; the last card is the face-up top
    work: tuple[int, ...]  # one face-up card per work pile
    stock: tuple[int, ...]  # top card first


def deal_seat(rules: Rules, seat: int, seed: bytes) -> Deal:
    owner = make_card(seat, 0)  # a card is its owner's base plus its index
    cards = [owner + i for i in shuffled_indexes(seed, rules.deck_size)]
    n, w = rules.nerts_size, rules.work_piles
    return Deal(tuple(cards[:n]), tuple(cards[n : n + w]), tuple(cards[n + w :]))


def seat_seed(match_seed: int | bytes, round_number: int, seat: int) -> bytes:
    """A seat's deal seed derived from a simulation's match seed (simulator and tests only:
    real peers draw their seeds from the OS and commit to them)."""
    base = match_seed if isinstance(match_seed, bytes) else str(match_seed).encode()
    return hashlib.sha256(
        b"nerts-p2p/sim-seed\0" + base + b"\0" + f"{round_number}:{seat}".encode()
    ).digest()
