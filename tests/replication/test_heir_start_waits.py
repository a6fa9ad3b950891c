"""A successor's START that a peer can place before it knows the host departed waits for
the departure instead of being refused (PROTOCOL.md 5, 13). Driven by hand on a
three-player table whose first round ends at once. (A known survivor of `tools.mutate`,
seed 31, `protocol/sync_membership.py` `successor_waits`.)"""

from __future__ import annotations

import hashlib

import pytest

from nerts_p2p.game.errors import NertsError
from nerts_p2p.game.moves import FROM_NERTS, NEW_FOUNDATION, Move
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.events import RoundVoided
from nerts_p2p.table.replica import TableReplica
from protocol.envelope import seal
from protocol.messages import Kind, Op, op_body
from protocol.signing import SigningKeyPair
from protocol.sync import SyncPeer
from protocol.sync_events import OpRejected
from tests.replication.table_helpers import ManualTable, call_nerts, exchange, seed_showing


def _all_ops(peer: SyncPeer) -> list[Op]:
    return sorted((op for log in peer.logs.values() for op in log), key=lambda op: op.lamport)


def _twin_of(first: Op, liar: TableReplica) -> bytes:
    """A second version of the liar's lobby op `first`, stamped one later: the proof that
    it equivocated."""
    deps = [list(pair) for pair in first.lobby_deps]
    twin = op_body(first.kind, first.table, first.author, first.seq, first.prev,
                   first.lamport + 1, first.epoch, deps, first.payload)  # fmt: skip
    return seal(liar.sync.key, twin)


def test_an_heirs_start_whose_deps_are_all_held_waits_for_the_last_vote_against_the_host() -> None:
    rules = Rules(seats=4, nerts_size=1, target=500)
    seeds = [
        seed_showing(rules, [], nerts_top="AS", label="heir/host"),
        *(seed_showing(rules, [], label=f"heir/{i}") for i in range(1, 4)),
    ]
    table = ManualTable(rules, seeds)
    host, heir, voter, newcomer = table.players
    # Round 1 without the newcomer; the host calls Nerts at once.
    for player in (host, heir, voter):
        player.ready()
    table.collect()
    table.deliver_all()
    host.start()
    table.collect()
    table.deliver_all()
    rnd = host.current_round
    assert rnd is not None
    ace = rnd.state.seats[0].nerts_up[-1]
    host.play(Move(0, "play", ace, FROM_NERTS, "f", NEW_FOUNDATION))
    host.play(Move(0, "nerts"))
    table.collect()
    table.deliver_all()
    table.settle(2.0)
    assert all(p.rounds[1].final is not None for p in (host, heir, voter))
    # The heir and the newcomer are ready for round 2 (the voter sits it out); the host
    # vanishes before starting it, and both others of round 1 vote it out.
    heir.ready()
    newcomer.ready()
    table.collect()
    table.deliver_all()
    now = table.now + 1.0
    alive = [heir, voter, newcomer]
    for member in (heir, voter):
        member.sync.author(Kind.DEPART, 1, [host.me, member.sync.delivered(host.me)])
        exchange(alive, now)
    assert heir.sync.starter(2) == heir.me
    # Anyone else who tries to start it is told whose it is to start (seed 15: the words
    # for the host's own table were given instead).
    with pytest.raises(NertsError, match="only the departed host's successor starts"):
        newcomer.start()
    start = heir.start()
    exchange(alive, now)
    assert voter.me not in start.payload[0]
    vote = next(o for o in voter.sync.logs[voter.me] if o.kind == Kind.DEPART)

    late = SyncPeer(SigningKeyPair(hashlib.sha256(b"late/heir").digest()), host.sync.table)
    for i, op in enumerate(o for o in _all_ops(heir.sync) if o.hash != vote.hash):
        late.receive(op.datagram(), ("heir", i), now)
    # Every dep of the START is held, but the host is not known to have departed yet:
    # the START waits (it is not refused, and round 2 has not begun)...
    assert 2 not in late.epochs
    assert not [e for e in late.events() if isinstance(e, OpRejected) and e.op.body == start.body]
    # ...and is delivered once the last vote arrives.
    late.receive(vote.datagram(), "voter", now)
    assert late.epochs[2].start.body == start.body
    assert late.starter(2) == heir.me
    assert late.vector() == heir.sync.vector()


def test_an_heirs_start_is_delivered_the_moment_an_expulsion_completes_the_agreement() -> None:
    # Five played round 1; the host vanishes. Three vote it out, and the fifth, who never
    # votes, is proven to have equivocated: without it the three are the agreement. A peer
    # that holds everything but the proof parks the heir's START; the proof arrives and,
    # in that same receive, the host is departed and the START delivered (no op of that
    # receive is delivered first: the departure alone lets it through).
    rules = Rules(seats=5, nerts_size=1, target=500)
    seeds = [
        seed_showing(rules, [], nerts_top="AS", label="agree/host"),
        *(seed_showing(rules, [], label=f"agree/{i}") for i in range(1, 5)),
    ]
    table = ManualTable(rules, seeds)
    host, heir, voter, third, liar = table.players
    table.start_round()
    call_nerts(table)
    assert all(p.rounds[1].final is not None for p in table.players)
    now = table.now + 1.0
    alive = [heir, voter, third, liar]
    heir.ready()
    voter.ready()
    exchange(alive, now)
    first = liar.ready()
    exchange(alive, now)
    proof = _twin_of(first, liar)
    for member in (heir, voter, third):
        member.receive(proof, id(liar), now)
        assert liar.me in member.sync.expelled
    for member in (heir, voter, third):
        member.sync.author(Kind.DEPART, 1, [host.me, member.sync.delivered(host.me)])
        exchange([heir, voter, third], now)
    assert heir.sync.starter(2) == heir.me
    start = heir.start()
    exchange([heir, voter, third], now)

    late = SyncPeer(SigningKeyPair(hashlib.sha256(b"late/agree").digest()), host.sync.table)
    for i, op in enumerate(_all_ops(heir.sync)):
        late.receive(op.datagram(), ("heir", i), now)
    assert liar.me not in late.expelled
    assert 2 not in late.epochs  # it waits for the host's departure
    late.receive(proof, "liar", now)
    assert late.expelled == {liar.me: first.seq}
    assert late.epochs[2].start.body == start.body


def test_an_heirs_start_goes_through_at_the_next_op_once_our_own_vote_departs_the_host() -> None:
    # Five played round 1; the host vanishes, and so, for the others, does `cut_off`: three
    # vote both out, and the heir starts round 2 with a newcomer. `cut_off` is alive; it
    # holds the heir's chain and the others' votes against the host, but not their votes
    # against itself, so the START waits. Its own vote against the host departs the host
    # here; the next op it is sent (parked: an op of its author is missing) must let the
    # START through, not wait for an op that happens to be next in its author's chain.
    rules = Rules(seats=6, nerts_size=1, target=500)
    seeds = [
        seed_showing(rules, [], nerts_top="AS", label="own-vote/host"),
        *(seed_showing(rules, [], label=f"own-vote/{i}") for i in range(1, 6)),
    ]
    table = ManualTable(rules, seeds)
    host, heir, cut_off, second, third, newcomer = table.players
    table.ready_all([host, heir, cut_off, second, third])
    host.start()
    table.collect()
    table.deliver_all()
    table.settle(0.5)
    call_nerts(table)
    assert all(p.rounds[1].final is not None for p in table.players[:5])
    now = table.now + 1.0
    newcomer.ready()
    exchange([heir, cut_off, second, third, newcomer], now)
    # Each voter votes against both before it hears the others' votes (so none of its ops
    # names a vote against `cut_off` but its own), and the heir says READY before too.
    voters = [heir, second, third]
    against_host = []
    for member in voters:
        against_host.append(
            member.sync.author(Kind.DEPART, 1, [host.me, member.sync.delivered(host.me)])
        )
        member.sync.author(Kind.DEPART, 1, [cut_off.me, member.sync.delivered(cut_off.me)])
    heir.ready()
    exchange([*voters, newcomer], now)
    assert heir.sync.starter(2) == heir.me
    start = heir.start()
    assert set(start.payload[0]) == {heir.me, newcomer.me}
    exchange([*voters, newcomer], now)
    leave = second.sync.author(Kind.LEAVE, 0, None)

    chains = [*heir.sync.logs[heir.me], *newcomer.sync.logs[newcomer.me], *against_host]
    for op in chains:
        cut_off.receive(op.datagram(), "relay", now)
    assert 2 not in cut_off.sync.epochs  # the host has not departed here
    assert host.me not in cut_off.sync.epochs[1].departed
    cut_off.sync.author(Kind.DEPART, 1, [host.me, cut_off.sync.delivered(host.me)])
    assert host.me in cut_off.sync.epochs[1].departed
    cut_off.receive(leave.datagram(), "second", now)
    assert cut_off.sync.delivered(second.me) < leave.seq  # parked behind its vote against us
    assert cut_off.sync.epochs[2].start.body == start.body


def test_a_start_voided_in_the_receive_that_expels_someone_leaves_the_table_standing() -> None:
    # Five played round 1. The host starts round 2, but its START reaches only a watcher;
    # the three others, who never saw it, vote the host out, and the fifth never votes.
    # The proof that the fifth equivocated reaches the watcher: in that one receive the
    # fifth is expelled (every round to be folded again) and, the three votes now the
    # agreement, the host departs below its START, which is voided. The watcher drops the
    # round it had begun and goes on. (Seed 15: the round it no longer had was still to
    # be folded again, and the receive raised KeyError.)
    rules = Rules(seats=5, nerts_size=1, target=500)
    seeds = [
        seed_showing(rules, [], nerts_top="AS", label="voided/host"),
        *(seed_showing(rules, [], label=f"voided/{i}") for i in range(1, 5)),
    ]
    table = ManualTable(rules, seeds, spectators=1)
    host, heir, voter, third, liar = table.players[:5]
    watcher = table.players[5]
    table.start_round()
    call_nerts(table)
    assert all(p.rounds[1].final is not None for p in table.players)
    now = table.now + 1.0
    everyone = [host, heir, voter, third, liar, watcher]
    for player in (host, heir, voter):
        player.ready()
    first = liar.ready()
    exchange(everyone, now)
    start = host.start()
    host.outgoing()
    watcher.receive(start.datagram(), "host", now)
    assert 2 in watcher.rounds
    for member in (heir, voter, third):
        member.sync.author(Kind.DEPART, 1, [host.me, member.sync.delivered(host.me)])
        exchange([heir, voter, third, liar, watcher], now)
    assert host.me not in watcher.sync.epochs[1].departed  # the fifth has not voted
    watcher.events()
    watcher.receive(_twin_of(first, liar), "liar", now)
    assert liar.me in watcher.sync.expelled
    assert host.me in watcher.sync.epochs[1].departed
    assert 2 not in watcher.rounds
    assert [e.author for e in watcher.events() if isinstance(e, RoundVoided)] == [host.me]
    assert watcher.sync.starter(2) == heir.me
