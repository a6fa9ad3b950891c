"""A node restarting reads its store's ops in whatever order the file gives them (PROTOCOL.md
14): the ops that carry keys are taken first, so a long run of one author's ops before its
JOIN is not cut at the bound on ops waiting for a key. (Found by `tools.mutate`, seed 604,
`protocol/sync.py` `SyncPeer.load`.)"""

from __future__ import annotations

import random

import pytest

from protocol.messages import Kind
from protocol.sync import SyncPeer
from tools.gen_vectors import KEYS, TABLE, play_history


@pytest.mark.parametrize("order", ["newest first", "shuffled"])
def test_a_store_read_in_any_order_loads_every_op(order: str) -> None:
    history = play_history()
    for _ in range(70):  # more than the 64 ops a peer parks for an author it has no key for
        history.author("alice", Kind.MOVE, 1, "stuck")
    stored = history.datagrams()
    if order == "newest first":
        stored.reverse()
    else:
        random.Random(604).shuffle(stored)
    peer = SyncPeer(KEYS["sam"], TABLE)
    peer.load(stored)
    assert peer.vector() == history.peers["alice"].vector()
    assert peer.counters.total == 0
    assert peer.outgoing() == []


def test_a_store_missing_the_tables_open_sends_nothing_to_nobody() -> None:
    # A damaged store has lost the host's OPEN, which carries its key: the host's other
    # ops wait for the key. Loading asks the store for nothing, so no REQUEST is left
    # behind without a peer to send it to (every destination `outgoing` gives is a peer
    # or BROADCAST); the network is asked once the node hears the table. (Found by
    # `tools.mutate`, seed 17: with the clean-up deleted, a REQUEST to None went out.)
    history = play_history()
    stored = [op.datagram() for name, op in history.ops if (name, op.seq) != ("host", 1)]
    peer = SyncPeer(KEYS["sam"], TABLE)
    peer.load(stored)
    assert peer.delivered(history.peers["host"].me) == 0
    assert peer.outgoing() == []
