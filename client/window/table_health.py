"""Whether a network table is gone for us, in plain words for the screen.

A table is gone when its host turned us away (a wrong passphrase, a full table), never
answered, went quiet between rounds, or when everyone else left before the match was won.
The facts (who left, whether the match is won) are the core's (`nerts_p2p.table.status`);
how long to wait for a quiet host is the window's patience.
"""

from __future__ import annotations

from nerts_p2p.net.node import TableNode
from nerts_p2p.table.status import everyone_else_left, match_won
from protocol.admission import REFUSAL_WORDS, Refusal
from protocol.messages import quoted_name


def why_gone(
    node: TableNode,
    *,
    table_name: str,
    waited: float,
    now: float,
    host_timeout: float,
    silence: float,
) -> str | None:
    """Why the table is gone for us (None while it is not); `waited` is how long we have
    been at it, `now` the node's clock."""
    replica = node.replica
    refused = replica.admission_refused
    if refused is not None:
        if refused == REFUSAL_WORDS[Refusal.WRONG_PASSPHRASE]:
            return f"wrong passphrase for table {quoted_name(table_name)}"
        return f"table {quoted_name(table_name)} did not let us in: {refused}"
    if replica.sync.open_op is None:
        if waited > host_timeout:
            return (
                f"the table's host does not answer (nothing for {host_timeout:g} s): "
                "the table is gone"
            )
        return None
    rnd = replica.current_round
    over = match_won(replica)
    # A host waits in its lobby for players, however many came and went.
    waiting = rnd is None and replica.sync.host == replica.me
    if everyone_else_left(replica) and not over and not waiting:
        return "everyone else left the table"
    host = replica.sync.host
    between_rounds = rnd is None or rnd.final is not None
    if host is not None and host != replica.me and between_rounds and not over:
        quiet = node.silence(host, now)
        member = replica.sync.members.get(host)
        if quiet is not None and quiet > silence and member is not None:
            return (
                f"the table's host ({member.name}) has sent nothing for {quiet:.0f} s: "
                "the table is gone"
            )
    return None
