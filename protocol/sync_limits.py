"""The sync machine's bounds: how much it parks, asks, pushes and answers, and how often.

Separate so that every part of the machine (and the fuzzer's queue checks) reads one set of
numbers; PROTOCOL.md names the same bounds.
"""

from __future__ import annotations

from typing import Final

BROADCAST: Final = "*"  # an outgoing datagram for every peer the shell knows of
MAX_PENDING_PER_AUTHOR: Final = 512
MAX_PENDING: Final = 4096
MAX_PUSH: Final = 32  # ops pushed to one peer per heartbeat it sends
MAX_REPLY: Final = 64  # ops sent in answer to one request
MAX_AWAITING: Final = 256  # ops parked until their author's key arrives, all authors together
MAX_AWAITING_PER_AUTHOR: Final = 64  # of those, from any one author (PROTOCOL.md 4)
MAX_REQUESTED: Final = 4096  # authors with a request in flight (pruned when it grows past)
MAX_ASKING: Final = 64  # peers whose answers (and heartbeat vectors) we keep track of
RELAY_EVERY: Final = 4  # heartbeat intervals between relays of others' heartbeats
PROBE_FOR: Final = 5.0  # seconds a state-hash mismatch's probe for an equivocation stands
#: How far past everything it names (its previous op, its deps, its round's START) an op may
#: be stamped (PROTOCOL.md 5, rule 2). Honest clocks gain one per heartbeat (75 ms), so
#: 2^23 is a week at the table without authoring; a member's lie can push the table's time
#: up by at most this much per op it signs, so 2^24 ops before the 2^48 ceiling.
MAX_LAMPORT_STEP: Final = 2**24
