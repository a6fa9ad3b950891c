"""A round's deps compared with its author's previous round op when that op is of an
earlier round (PROTOCOL.md 5, "deps never go down"): only the participants named in both
are compared, by author, not by position, and deps on an author expelled since, from its
expulsion seq on, are not judged. (Found by `tools.mutate`, seed 703, `protocol/sync_checks.py`.)

Four players at a table of four, Nerts piles of one card: round 1 is played by p0, p1 and
p2 and ends when p0 plays its ace and calls Nerts.
"""

from __future__ import annotations

from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import ProtocolViolation, RoundFinal, TableReplica
from protocol.envelope import seal
from protocol.messages import Kind, Op, op_body
from tests.replication.table_helpers import ManualTable, call_nerts, seed_showing, seeds_in_turn

RULES = Rules(seats=4, nerts_size=1, target=10_000)


def _after_round_one(label: str) -> ManualTable:
    seeds = [
        [seed_showing(RULES, [], nerts_top="AS", label=f"{label}/p{i}r{n}") for n in range(2)]
        for i in range(4)
    ]
    table = ManualTable(RULES, [own[0] for own in seeds])
    for i, (replica, own) in enumerate(zip(table.players, seeds, strict=True)):
        replica.randomness = seeds_in_turn(own, f"{label}/{i}")
    _ready(table, 0, 1, 2)
    table.players[0].start()
    table.collect()
    table.deliver_all()
    table.settle(0.3)  # every mix nonce is in: moves count
    call_nerts(table, settle=None)
    table.settle(2.0)
    for events in table.events[:3]:
        assert [e for e in events if isinstance(e, RoundFinal) and e.round == 1]
    return table


def _ready(table: ManualTable, *players: int) -> None:
    for i in players:
        table.players[i].ready()
    table.collect()
    table.deliver_all()


def _start_reaching_p1_alone(table: ManualTable) -> Op:
    """The host starts round 2; its START reaches p1 alone, and p1's first op of the round
    (its mix nonce) is held back; p1's heartbeat after it reaches the host, which confirms
    the START with it (PROTOCOL.md 13.3: the host takes no op of the round before). Returns
    the held-back op."""
    host, p1 = table.players[0], table.players[1]
    host.start()
    table.collect()
    for sender, _, datagram in table.queue:
        p1.receive(datagram, sender, table.now)
    table.queue.clear()
    p1.outgoing()
    mix = p1.sync.logs[p1.me][-1]
    assert (mix.kind, mix.epoch) == (Kind.MIX, 2)
    p1.tick(table.now + 1.0)
    for _, datagram in p1.outgoing():
        host.receive(datagram, 1, table.now)
    host.outgoing()
    return mix


def _naming(author: TableReplica, op: Op, of: bytes, seq: int) -> bytes:
    """`op` signed again by its author with its round deps naming `seq` ops of `of` (what
    another implementation, or a modified peer, could send)."""
    participants = author.sync.epochs[op.epoch].participants
    deps = [seq if p == of else n for p, n in zip(participants, op.round_deps, strict=True)]
    body = op_body(
        op.kind, op.table, op.author, op.seq, op.prev, op.lamport, op.epoch, deps, op.payload
    )
    return seal(author.sync.key, body)


def _delivers(receiver: TableReplica, datagram: bytes, sender: int, now: float) -> bool:
    author_seq = receiver.sync.delivered
    before = {a: author_seq(a) for a in receiver.sync.logs}
    rejected = receiver.sync.counters.total
    receiver.receive(datagram, sender, now)
    grew = [a for a in receiver.sync.logs if author_seq(a) > before.get(a, 0)]
    return bool(grew) and receiver.sync.counters.total == rejected


def test_a_round_whose_players_are_not_the_last_rounds_is_started_and_played() -> None:
    table = _after_round_one("others")
    p0, p1, p2, p3 = table.players
    # p2 made more ops than p3 has: compared by position (p3 where p2 was), the host's
    # START would name fewer ops than its last op of round 1 did.
    assert p0.sync.delivered(p2.me) > p0.sync.delivered(p3.me)
    _ready(table, 0, 1, 3)
    p0.start()
    table.collect()
    table.deliver_all()
    table.settle(0.3)
    for replica in (p0, p1, p3):
        rnd = replica.current_round
        assert rnd is not None
        assert rnd.number == 2
        assert list(rnd.log.participants) == [p0.me, p1.me, p3.me]
    assert not [e for events in table.events for e in events if isinstance(e, ProtocolViolation)]


def test_a_player_new_to_the_round_is_not_compared_with_the_last_round() -> None:
    table = _after_round_one("newcomer")
    p0, p1, _, p3 = table.players
    _ready(table, 0, 1, 3)
    mix = _start_reaching_p1_alone(table)
    # p1's last op of round 1 named no op of p3 (not a participant then): naming none now
    # takes nothing back.
    assert _delivers(p0, _naming(p1, mix, p3.me, 0), 1, table.now)
    assert p0.sync.delivered(p1.me) == mix.seq


def test_deps_on_an_author_expelled_since_are_not_judged_from_its_expulsion_on() -> None:
    table = _after_round_one("expelled")
    p0, p1, p2, _ = table.players
    last = p1.sync.logs[p1.me][-1]  # p1's last op of round 1
    assert last.epoch == 1
    named = dict(zip(p1.sync.epochs[1].participants, last.round_deps, strict=True))[p2.me]
    _ready(table, 0, 1, 2)
    mix = _start_reaching_p1_alone(table)
    # p2 signs a second version of the op p1 last named: the host expels it from there.
    op = p2.sync.logs[p2.me][named - 1]
    twin = op_body(
        op.kind, op.table, op.author, op.seq, op.prev, op.lamport, op.epoch,
        list(op.round_deps), bytes(16) if op.kind == Kind.MIX else op.payload,
    )  # fmt: skip
    p0.receive(seal(p2.sync.key, twin), 2, table.now)
    assert p0.sync.expelled == {p2.me: named}
    # p1's first op of round 2 names one op of p2 fewer than its last op of round 1: the
    # one p2 was expelled at, which is not judged.
    assert _delivers(p0, _naming(p1, mix, p2.me, named - 1), 1, table.now)
    assert p0.sync.delivered(p1.me) == mix.seq


def test_an_op_naming_fewer_ops_than_its_authors_last_op_of_the_round_before_is_refused() -> None:
    table = _after_round_one("fewer")
    p0, p1, p2, _ = table.players
    last = p1.sync.logs[p1.me][-1]  # p1's last op of round 1
    named = dict(zip(p1.sync.epochs[1].participants, last.round_deps, strict=True))[p2.me]
    assert named >= 2
    _ready(table, 0, 1, 2)
    mix = _start_reaching_p1_alone(table)
    held = p0.sync.delivered(p1.me)
    assert not _delivers(p0, _naming(p1, mix, p2.me, named - 1), 1, table.now)
    assert p0.sync.delivered(p1.me) == held
    assert p0.sync.counters.as_dict()["backdated"] == 1
