"""The game's checks at the receive gate: an op that could never start or play a round is
refused before it is delivered, the same on every peer, so no single player can wedge a table.

`SyncPeer` is game-agnostic; it calls `TableGate` (installed as its `game_check`) after its own
checks of an op, with the op's causal past delivered. Every check reads only the op and that
past (the table's OPEN), so every peer reaches the same verdict. It refuses:

- OPEN: rules that are not valid `Rules` on the wire (`rules_from_wire`: unknown names,
  duplicates or unsorted names, wrong types, values out of range), or an OPEN whose `seats`
  differs from its rules' `seats`;
- READY: `shown` cards that cannot start a round under the table's rules: not exactly
  1 + work_piles of them, a card repeated, or a face the deck does not hold (a joker at a
  table without them);
- START: rules that are not exactly the table's with `seats` set to the number of seats the
  START fills, and seating that leaves a seat empty or puts too many players on one.
"""

from __future__ import annotations

from collections.abc import Sequence

from nerts_p2p.game.errors import NertsError
from nerts_p2p.game.rules import Rules
from protocol.messages import Kinds, Op
from protocol.sync import SyncPeer

from .wire import rules_from_wire


def shown_problem(rules: Rules, shown: Sequence[int]) -> str | None:
    """Why these face indexes cannot be a seat's face-up cards at the deal, or None."""
    if len(shown) != 1 + rules.work_piles:
        return (
            f"READY shows {len(shown)} cards; a deal shows 1 + {rules.work_piles} "
            "(the Nerts top and one per work pile)"
        )
    if len(set(shown)) != len(shown):
        return "READY shows the same card twice"
    if any(face >= rules.deck_size for face in shown):
        return f"READY shows a card that is not in a deck of {rules.deck_size}"
    return None


def seating_problem(rules: Rules, seats: Sequence[int]) -> str | None:
    """Every seat of the rules is taken, by one player (two with partnerships), or why not."""
    per_seat = 2 if rules.partnerships else 1
    counts = {seat: seats.count(seat) for seat in set(seats)}
    if set(counts) != set(range(rules.seats)):
        return (
            f"the START seats players at {sorted(counts)}, but the rules have "
            f"seats 0..{rules.seats - 1}"
        )
    if any(count > per_seat for count in counts.values()):
        return f"the START puts more than {per_seat} player(s) on a seat"
    return None


class TableGate:
    """`SyncPeer.game_check` for a Nerts table."""

    def __init__(self, sync: SyncPeer) -> None:
        self.sync = sync
        #: The table's OPEN and its rules: read once (every READY is checked against them,
        #: and reading rules from the wire costs more than the check).
        self._rules_of: tuple[Op, Rules | None] | None = None

    def install(self) -> TableGate:
        self.sync.game_check = self
        return self

    def table_rules(self) -> Rules | None:
        op = self.sync.open_op
        if op is None:
            return None
        cached = self._rules_of
        if cached is not None and cached[0] is op:
            return cached[1]
        try:
            rules: Rules | None = rules_from_wire(op.payload[2])
        except NertsError:
            rules = None  # cannot happen: a bad OPEN is refused here
        self._rules_of = (op, rules)
        return rules

    def __call__(self, op: Op) -> str | None:
        try:
            if op.kind == Kinds.OPEN:
                rules = rules_from_wire(op.payload[2])
                if op.payload[3] != rules.seats:
                    return f"OPEN offers {op.payload[3]} seats but its rules say {rules.seats}"
                return None
            if op.kind == Kinds.READY:
                table = self.table_rules()
                return shown_problem(table, op.payload[2]) if table is not None else None
            if op.kind == Kinds.START:
                return self._start_problem(op)
        except NertsError as exc:
            return f"{op.kind.name}: {exc}"
        return None

    def _start_problem(self, op: Op) -> str | None:
        table = self.table_rules()
        _, seats, wire_rules = op.payload
        rules = rules_from_wire(wire_rules)
        if table is not None and rules != Rules.from_dict(
            {**table.to_dict(), "seats": rules.seats}
        ):
            return "START's rules must be the table's, with seats set to the seats it fills"
        return seating_problem(rules, seats)


__all__ = ["TableGate", "seating_problem", "shown_problem"]
