"""How long a peer that claims ops we do not hold still counts as alive (PROTOCOL.md 13.1):
its heartbeats count only up to the moment its claim last made progress, and fully again
once every op it claimed is delivered. Pinned step by step on two players. (Found by
`tools.mutate`, seed 501, `protocol/sync_liveness.py`.)"""

from __future__ import annotations

from tests.protocol.test_anti_entropy_rules import _heartbeat, _table, _turn


def test_a_claim_met_op_by_op_holds_signs_of_life_at_its_progress_until_it_is_met() -> None:
    table = _table()
    mover, watcher = table.players
    first, second = _turn(mover, 2)
    t = table.now  # steps of 0.1 s: far inside the silence bound, nobody is voted out
    # The mover's heartbeat names both ops before either reaches the watcher: a claim.
    watcher.receive(_heartbeat(mover, t + 0.1), 0, t + 0.1)
    assert watcher.sync.signs_of_life()[mover.me] == t + 0.1
    # The first op arrives: progress, so the claim's time moves on to it...
    watcher.receive(first, 0, t + 0.2)
    # ...and a later heartbeat naming the same ops counts only up to that progress.
    watcher.receive(_heartbeat(mover, t + 0.3), 0, t + 0.3)
    assert watcher.sync.signs_of_life()[mover.me] == t + 0.2
    # The second op arrives: the claim is met, and heartbeats count in full again.
    watcher.receive(second, 0, t + 0.4)
    watcher.receive(_heartbeat(mover, t + 0.5), 0, t + 0.5)
    assert watcher.sync.signs_of_life()[mover.me] == t + 0.5
    assert watcher.sync.delivered(mover.me) == mover.sync.delivered(mover.me)
