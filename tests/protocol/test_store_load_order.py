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
