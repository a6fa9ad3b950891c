"""A MOVE whose words are no move (any 1 to 48 characters pass the wire's schema) is
folded as a rejected step on every replica, with its reason, and changes nothing. (Found by
`tools.mutate`, seed 604, `nerts_p2p/table/round.py` `fold_one`.)"""

from __future__ import annotations

from nerts_p2p.game.rules import Rules
from protocol.messages import Kind
from tests.replication.table_helpers import ManualTable, seed_showing


def test_an_unreadable_move_is_a_rejected_step_that_changes_nothing() -> None:
    rules = Rules(seats=2)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"unreadable/{i}") for i in range(2)])
    table.start_round()
    author, other = table.players
    rnd = other.current_round
    assert rnd is not None
    before = rnd.state
    # Signed with the author's sync layer (its replica plays only parsed moves), as
    # another implementation could send it; the other player's replica folds it.
    author.sync.author(Kind.MOVE, 1, "no such move")
    table.collect()
    table.deliver_all()
    current = other.current_round
    assert current is not None
    (step,) = [s for s in current.steps if s.op.payload == "no such move"]
    assert not step.applied
    assert step.reason.startswith("unreadable move: ")
    assert current.state == before
