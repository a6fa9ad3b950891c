"""How a `SyncPeer` packs the heartbeats it relays, and keeps track of the requests it has in
flight (PROTOCOL.md 7.1, 9). Each is a figure another implementation can check on the wire:
how many relayed heartbeats share one EVIDENCE, who is asked again and when. (Found by
`tools.mutate`, seed 47: each could change with every other test green.)"""

from __future__ import annotations

from collections.abc import Hashable

import pytest

from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import TableReplica
from protocol.codec import pack
from protocol.envelope import PROTOCOL_VERSION, seal
from protocol.messages import Evidence, Request, decode, heartbeat_body
from protocol.sync import MAX_ASKING, MAX_REQUESTED
from tests.protocol.test_anti_entropy_rules import _ahead, _asked, _heartbeat, _sent, _table, _turn
from tests.protocol.test_hostile import observer
from tests.replication.table_helpers import ManualTable, seed_showing
from tools.gen_vectors import TABLE

# --- relayed heartbeats: as many to an EVIDENCE as fit ---------------------------------------


def _heartbeat_of_body_length(member: TableReplica, length: int) -> bytes:
    """A heartbeat `member` signs, whose body is exactly `length` bytes: its vector names a
    few of the ops it holds, and claims some of its own the table has not seen yet (a
    promise about a later op, which nothing breaks); how many, and the sizes of the
    numbers, set the length."""
    sync = member.sync
    assert sync.clock.value < 120  # each stamp is the member's newest heartbeat
    held = [pair for pair in sync.vector() if pair[0] != sync.me]
    for named in range(len(held) + 1):
        for claim in (1, 200, 300, 70_000):  # 1, 2, 3, 5 bytes
            for stamp in (120, 200, 10_000, 2**16 + 1, 2**32 + 1):  # 1, 2, 3, 5, 9 bytes
                for state_hash in (b"", bytes(16)):
                    vector = sorted([*held[:named], (sync.me, claim)])
                    body = heartbeat_body(sync.table, sync.me, stamp, vector, state_hash)
                    if len(pack(body)) == length:
                        return seal(sync.key, body)
    raise AssertionError(f"no heartbeat body of {length} bytes")


def _relayed_per_evidence(body_length: int) -> list[int]:
    """Ten members' fresh heartbeats of `body_length` bytes reach the host, which then
    relays them: how many each EVIDENCE it sends holds."""
    rules = Rules(seats=3)
    seeds = [seed_showing(rules, [], label=f"relay/{i}") for i in range(3)]
    table = ManualTable(rules, seeds, spectators=8)  # eleven members, a lobby
    relay, *others = table.players
    now = 1.0
    for member in others:
        relay.receive(_heartbeat_of_body_length(member, body_length), 9, now)
    assert relay.sync.counters.total == 0  # each one taken
    relay.outgoing()
    sizes = []
    for _ in range(4):  # a relay goes out once every four heartbeats
        now += relay.sync.heartbeat_interval * 1.01
        relay.tick(now)
        for _, datagram in relay.outgoing():
            assert len(datagram) <= 1200
            message = decode(datagram, table=relay.sync.table)
            if isinstance(message, Evidence):
                sizes.append(len(message.heartbeats))
    return sizes


@pytest.mark.parametrize(("body_length", "per_evidence"), [(130, [5, 5]), (131, [4, 4, 2])])
def test_an_evidence_holds_relayed_heartbeats_while_their_bodies_and_70_bytes_each_fit_in_1000(
    body_length: int, per_evidence: list[int]
) -> None:
    # Each heartbeat costs its body, its 64-byte signature and 6 bytes of framing: 200
    # bytes a piece fit five to an EVIDENCE; 201 bytes leave room for four only. The next
    # EVIDENCE starts empty again (ten heartbeats: two full ones). (Never more than eight,
    # whatever their size: MAX_RELAYED.)
    assert _relayed_per_evidence(body_length) == per_evidence


# --- requests in flight ----------------------------------------------------------------------


def _stranger_heartbeat(n: int) -> bytes:
    """A heartbeat from a made-up peer (no key known: its signature is never checked)."""
    sender = n.to_bytes(8, "big")
    return pack([PROTOCOL_VERSION, pack(heartbeat_body(TABLE, sender, 5, [], b"")), bytes(64)])


def test_a_full_memory_of_requests_keeps_those_in_flight_and_drops_those_whose_time_came() -> None:
    # The memory of requests in flight holds 4096 authors. When it is full, the authors
    # whose retry time has come (asked exactly 200 ms ago included) make room; an author
    # asked about since is still in flight and is not asked about again.
    peer = observer()
    first = 1.0

    def asks(n: int, now: float) -> bool:
        peer.receive(_stranger_heartbeat(n), f"source {n}", now)
        return any(isinstance(decode(d, table=TABLE), Request) for _, d in peer.outgoing())

    assert all(asks(n, first) for n in range(MAX_REQUESTED - 1))
    in_flight = MAX_REQUESTED - 1
    assert asks(in_flight, first + 0.1)
    due = first + peer.request_retry  # the first ones' retry time, to the bit
    assert asks(MAX_REQUESTED, due)  # the memory is full: the first ones go
    assert not asks(in_flight, due + 0.05)  # asked 150 ms ago: still in flight


def test_a_source_asked_again_while_64_answers_are_awaited_is_tracked_by_its_latest_request() -> (
    None
):
    # The asker keeps track of the answers of 64 sources at most (PROTOCOL.md 9). A source it
    # already tracks is still tracked by its latest request: once that answer is in, every
    # author it named is asked about again at once, not 200 ms later.
    table = _table(players=4)
    source, asker, mover, other = table.players
    _ahead(source, mover, 80, table.now)
    now = table.now + 1.0
    asker.receive(_heartbeat(source, now), 0, now)  # asks the source about the mover
    assert _asked(_sent(asker), mover.me)  # (that request is lost)
    for n in range(MAX_ASKING - 1):  # 63 more sources, each asked about a made-up author
        filler: Hashable = ("filler", n)
        asker.sync.request(filler, [(n.to_bytes(8, "big"), 1, 1)], now)
    asker.outgoing()
    for datagram in _turn(other, 80):
        source.receive(datagram, 3, now)
    source.outgoing()
    later = now + 0.25  # past the retry time: the source is asked about both authors
    asker.receive(_heartbeat(source, later), 0, later)
    ((_, request),) = asker.outgoing()
    source.receive(request, 1, later)
    answer = source.outgoing()
    assert answer
    for _, datagram in answer:
        asker.receive(datagram, 0, later)
    sent = _sent(asker)
    # The answer's 64 ops are in: the rest of both gaps is asked for at once.
    assert _asked(sent, mover.me)
    assert _asked(sent, other.me)
