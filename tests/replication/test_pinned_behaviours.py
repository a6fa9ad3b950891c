"""Behaviours of the replicated table that no other test pinned (found by `tools.mutate`).

Each test is named after what a peer, a player or another implementation would notice if
it broke: the request/answer path healing a gap on its own, the per-author cap on pending
ops, divergence detection, the tie order depending on the deals, an expelled peer staying
out of later rounds, when stability is announced (the final state included), and a late op
that rolls the round back across its end.
"""

from __future__ import annotations

from collections.abc import Hashable

import pytest

from nerts_p2p.game.engine import complete
from nerts_p2p.game.errors import NertsError
from nerts_p2p.game.moves import FROM_NERTS, NEW_FOUNDATION, Move, move_text
from nerts_p2p.game.position import state_hash
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.presence import SILENCE_BOUND
from nerts_p2p.table.replica import (
    Divergence,
    PeerExpelled,
    ProtocolViolation,
    RoundEnded,
    RoundFinal,
    StableState,
    TableReplica,
)
from protocol.envelope import seal, seal_parts
from protocol.errors import DropReason
from protocol.messages import SEED_AND_SALT, Batch, Kind, Op, decode, decode_op, op_body
from protocol.sealed import OVERHEAD as SEALED_OVERHEAD
from protocol.sync import BROADCAST, MAX_PENDING_PER_AUTHOR, DivergenceDetected, SyncPeer
from tests.replication.table_helpers import (
    ManualTable,
    call_nerts,
    one_card_nerts_table,
    partners_after_their_share,
    ready_and_its_twin,
    rounds_after,
    seed_showing,
    signed_move,
    three_at_play,
    turn_or_recycle,
)
from tools.gen_vectors import KEYS, TABLE, play_history

# --- anti-entropy: the request and its answer, without heartbeats --------------------------


def _answer(server: SyncPeer, asker: SyncPeer, asker_address: Hashable) -> list[bytes]:
    """Hand the asker's request to `server`; return the datagrams it answers with."""
    requests = asker.outgoing()
    assert [destination for destination, _ in requests] == ["server"]
    for _, datagram in requests:
        server.receive(datagram, asker_address, 1.0)
    answers = server.outgoing()
    assert {destination for destination, _ in answers} == {asker_address}
    return [datagram for _, datagram in answers]


def _ops_in(datagrams: list[bytes]) -> list[Op]:
    ops: list[Op] = []
    for datagram in datagrams:
        message = decode(datagram, table=TABLE)
        if isinstance(message, Batch):
            ops.extend(decode_op(body, signature, table=TABLE) for body, signature in message.ops)
        else:
            assert isinstance(message, Op)
            ops.append(message)
    return ops


def test_a_request_alone_heals_a_gap_with_exactly_the_ops_asked_for() -> None:
    history = play_history()
    server = history.peers["host"]
    asker = SyncPeer(KEYS["sam"], TABLE)
    joined = 5  # the OPEN and the four JOINs, the spectator Sam's among them
    for datagram in history.datagrams(joined):
        asker.receive(datagram, "server", 0.0)
    asker.outgoing()
    full = dict(server.vector())
    assert dict(asker.vector()) != full
    # One range in the middle of the host's chain: exactly those ops come back.
    asker.request("server", [(server.me, 2, 3)], 1.0)
    middle = _ops_in(_answer(server, asker, "sam"))
    assert sorted((op.author, op.seq) for op in middle) == [(server.me, 2), (server.me, 3)]
    # Everything it lacks, in one request: after the answer it holds what the server holds,
    # though no heartbeat ever went either way.
    missing = [
        (author, asker.delivered(author) + 1, seq)
        for author, seq in sorted(full.items())
        if seq > asker.delivered(author)
    ]
    asker.request("server", missing, 2.0)
    for datagram in _answer(server, asker, "sam"):
        asker.receive(datagram, "server", 2.0)
    assert dict(asker.vector()) == full
    assert asker.counters.total == 0


# --- the per-author cap on ops waiting for their causal past ------------------------------


def _future_ops(history_peer: SyncPeer, name: str, count: int) -> list[bytes]:
    """`count` signed MOVEs of `name` that skip its next op, so none can be delivered."""
    me = history_peer.me
    base = history_peer.delivered(me)
    last = history_peer.logs[me][-1]
    epoch = 1
    deps = list(history_peer.deps_for(Kind.MOVE, epoch, "turn"))
    out = []
    for k in range(count):
        seq = base + 2 + k
        body = op_body(
            Kind.MOVE, TABLE, me, seq, last.hash, last.lamport + 10 + k, epoch, deps, "turn"
        )
        out.append(seal(KEYS[name], body))
    return out


def test_one_author_cannot_fill_more_than_its_own_share_of_pending_ops() -> None:
    history = play_history()
    peer = history.peers["sam"]
    alice, host = history.peers["alice"], history.peers["host"]
    flood = _future_ops(alice, "alice", MAX_PENDING_PER_AUTHOR + 3)
    for i, datagram in enumerate(flood):
        peer.receive(datagram, ("flood", i), 5.0)  # a source each: no rate limit applies
    # The author's share is full: the last three are dropped, and counted.
    assert peer.counters[DropReason.RATE_LIMITED] == 3
    # Another author is not shut out by the first one's flood (far from the global cap).
    honest = _future_ops(host, "host", 1)
    peer.receive(honest[0], ("honest", 0), 5.0)
    assert peer.counters[DropReason.RATE_LIMITED] == 3
    assert peer.delivered(alice.me) == alice.delivered(alice.me)


# --- divergence: equal vectors, unequal state hashes ---------------------------------------


def test_equal_vectors_with_unequal_state_hashes_are_reported_as_divergence() -> None:
    history = play_history()
    ours, theirs = history.peers["alice"], history.peers["bob"]
    assert ours.vector() == theirs.vector()
    for their_hash, diverged in ((b"A" * 16, False), (b"B" * 16, True)):
        ours.set_state_hash(b"A" * 16)
        theirs.set_state_hash(their_hash)
        # The first mismatch asks Bob for his latest ops (an equivocation would show there);
        # still there at his next heartbeat with that vector, it is a divergence.
        for beat in (0.0, 0.5):
            theirs.tick(10.0 + diverged + beat)
            for _, datagram in theirs.outgoing():
                ours.receive(datagram, "bob", 10.0 + diverged + beat)
        found = [e for e in ours.events() if isinstance(e, DivergenceDetected)]
        if not diverged:
            assert found == []
            continue
        assert len(found) == 1
        assert found[0].peer == theirs.me
        assert (found[0].ours[:8], found[0].theirs[:8]) == (b"A" * 8, b"B" * 8)
        assert found[0].vector == ours.vector()


def test_a_table_replica_reports_a_peer_whose_state_diverged() -> None:
    rules = Rules(seats=2)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"d{i}") for i in range(2)])
    table.start_round()
    table.settle(0.5)
    assert not any(isinstance(e, Divergence) for events in table.events for e in events)
    liar = table.players[1]
    liar.sync.set_state_hash(b"\x00" * 16)  # it folded the same ops into another state
    for _ in range(2):  # the first mismatch is a probe for an equivocation, the second a report
        table.now += 1.0
        liar.sync.tick(table.now)
        table.collect()
        table.deliver_all()
        liar.sync.set_state_hash(b"\x00" * 16)
    reports = [e for e in table.events[0] if isinstance(e, Divergence)]
    assert [e.peer for e in reports] == [liar.me]


# --- the tie order depends on the players' deals -------------------------------------------


def _tie_winner(seeds: list[bytes]) -> int:
    """Two seats turn their stock at the same Lamport time: which one the order puts first."""
    rules = Rules(seats=2)
    table = ManualTable(rules, seeds)
    table.start_round()
    clocks = [player.sync.clock for player in table.players]
    while clocks[0].value != clocks[1].value:  # the same Lamport time on both sides
        min(clocks, key=lambda c: c.value).tick()
    for seat in (0, 1):
        table.players[seat].play(Move(seat, "turn"))
    table.collect()
    table.deliver_all()
    orders = set()
    for player in table.players:
        rnd = player.current_round
        assert rnd is not None
        moves = [s.move for s in rnd.steps if s.move is not None]
        assert len(moves) == 2
        assert moves[0].seat != moves[1].seat
        played = [s.op for s in rnd.steps if s.move is not None]
        assert played[0].lamport == played[1].lamport, "an exact tie"
        orders.add(moves[0].seat)
    assert len(orders) == 1, "every peer orders the tie alike"
    return orders.pop()


def test_who_wins_an_exact_tie_depends_on_the_deals_not_only_on_the_keys() -> None:
    # The same two players (ManualTable's keys are fixed), six different pairs of deals.
    winners = {_tie_winner([bytes([2 * n + 1]) * 32, bytes([2 * n + 2]) * 32]) for n in range(6)}
    assert winners == {0, 1}


# --- expulsion in the lobby ----------------------------------------------------------------


def test_a_peer_expelled_in_the_lobby_stays_out_of_the_next_round() -> None:
    rules = Rules(seats=3)
    seeds = [seed_showing(rules, [], label=f"x{i}", stuck=True) for i in range(3)]
    table = ManualTable(rules, seeds)
    host, _, cheat = table.players
    # The cheat signs two different versions of one lobby op (a second READY, showing the
    # same cards under two different commitments).
    one, two = ready_and_its_twin(table, rules, seeds, 2)
    host.receive(one.datagram(), 2, 0.0)
    host.receive(seal(cheat.sync.key, two), 2, 0.0)
    table.collect()
    table.deliver_all()
    for events in table.events:
        assert [(e.author, e.seq) for e in events if isinstance(e, PeerExpelled)] == [
            (cheat.me, one.seq)
        ]
    host.start()  # its earlier READY stands: it is seated, but nothing of it counts
    table.collect()
    table.deliver_all()
    honest = table.players[:2]
    for seat, player in enumerate(honest):
        player.play(Move(seat, "stuck"))
        _settle_without(table, silent=2, seconds=0.0)
    _settle_without(table, silent=2, seconds=1.0)  # thrown out, the cheat says nothing more
    for i, player in enumerate(honest):
        rnd = player.current_round
        assert rnd is not None
        assert cheat.me in rnd.seat_of
        # The expelled peer does not hold stability back: every op of the round is stable.
        stable = [e for e in table.events[i] if isinstance(e, StableState)]
        assert stable
        assert stable[-1].stable_ops == len(rnd.steps)
        # MIX ops and the honest players' votes aside: a participant proven to cheat is
        # voted out of the round at once (PROTOCOL.md 10), and one vote departs it.
        assert len([s for s in rnd.steps if s.op.kind not in (Kind.MIX, Kind.DEPART)]) == 3
        assert rnd.log.departed.keys() == {cheat.me}
        assert stable[-1].state_hash == state_hash(rnd.state)


def _settle_without(table: ManualTable, *, silent: int, seconds: float) -> None:
    """Like `ManualTable.settle`, but one peer sends nothing at all (it hears everything)."""
    talking = [i for i in range(len(table.players)) if i != silent]
    end = table.now + seconds
    while True:
        queue = []
        for i in talking:
            queue += [(i, destination, d) for destination, d in table.players[i].outgoing()]
        table.players[silent].outgoing()
        while queue:
            for sender, destination, datagram in queue:
                targets = range(len(table.players)) if destination == BROADCAST else [destination]
                for target in targets:
                    assert isinstance(target, int)
                    if target != sender:
                        table.players[target].receive(datagram, sender, table.now)
            table.players[silent].outgoing()
            queue = [
                (i, destination, d)
                for i in talking
                for destination, d in table.players[i].outgoing()
            ]
        for i, replica in enumerate(table.players):
            table.events[i].extend(replica.events())
        if table.now >= end:
            return
        table.now += 0.05
        for i in talking:
            table.players[i].tick(table.now)


def test_an_equivocated_move_counts_on_no_peer_whichever_version_it_saw() -> None:
    rules = Rules(seats=3)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"q{i}") for i in range(3)])
    table.start_round()
    cheat = table.players[2]
    first = cheat.play(Move(2, "turn"))
    assert isinstance(first, Op)
    cheat.outgoing()
    second = op_body(first.kind, first.table, first.author, first.seq, first.prev,
                     first.lamport, first.epoch, list(first.round_deps), "stuck")  # fmt: skip
    # Peer 1 folds the second version; peer 0 folds the first, then gets the second too,
    # and relays both as evidence.
    table.players[0].receive(first.datagram(), 2, table.now)
    table.players[1].receive(seal(cheat.sync.key, second), 2, table.now)
    table.collect(only=[0, 1])
    table.players[0].receive(seal(cheat.sync.key, second), 2, table.now)
    table.collect(only=[0, 1])
    table.deliver_all()
    table.settle(0.5)
    hashes = set()
    for i in (0, 1):
        assert [(e.author, e.seq) for e in table.events[i] if isinstance(e, PeerExpelled)] == [
            (cheat.me, first.seq)
        ]
        rnd = table.players[i].current_round
        assert rnd is not None
        assert not any(s.applied for s in rnd.steps if s.op.author == cheat.me)
        # Neither version counts: nothing on its waste, and it says stuck only as a seat
        # voted out does (proven to cheat, it is voted out at once: PROTOCOL.md 10), not by
        # its "stuck" twin.
        assert rnd.state.seats[2].waste == ()
        assert rnd.log.departed.keys() == {cheat.me}
        assert any(2 in s.departed_stuck for s in rnd.steps if s.op.kind == Kind.DEPART)
        hashes.add(state_hash(rnd.state))
    assert len(hashes) == 1


def test_a_round_whose_every_player_was_expelled_is_stable_to_the_end_for_a_spectator() -> None:
    rules = Rules(seats=2)
    table = ManualTable(
        rules, [seed_showing(rules, [], label=f"e{i}") for i in range(2)], spectators=1
    )
    table.start_round()
    watcher = table.players[2]
    for _ in range(3):  # seat 0's op sorts after seat 1's: seat 1 alone holds it back
        table.players[0].sync.clock.tick()
    for seat in (0, 1):
        player = table.players[seat]
        first = player.play(Move(seat, "turn"))
        assert isinstance(first, Op)
        player.outgoing()
        second = op_body(first.kind, first.table, first.author, first.seq, first.prev,
                         first.lamport, first.epoch, list(first.round_deps), "stuck")  # fmt: skip
        watcher.receive(first.datagram(), seat, table.now)
        watcher.receive(seal(player.sync.key, second), seat, table.now)
    watcher.outgoing()
    table.collect(only=[2])
    expelled = [e for e in table.events[2] if isinstance(e, PeerExpelled)]
    assert {e.author for e in expelled} == {table.players[0].me, table.players[1].me}
    rnd = watcher.current_round
    assert rnd is not None
    # Nobody left in the round can author an op that sorts earlier: all of it is stable,
    # seat 0's op included (stable only once seat 1, the last one left, was expelled too).
    stable = [e for e in table.events[2] if isinstance(e, StableState)]
    assert stable
    # Both moves were equivocated, so both left the order (PROTOCOL.md 10): what remains,
    # START and the two MIX ops, is all stable. (Seat 1's move had been announced stable
    # before its twin arrived: equivocation found late takes back even a stable op.)
    assert [s.op.kind for s in rnd.steps] == [Kind.START, Kind.MIX, Kind.MIX]
    assert stable[-1].stable_ops >= len(rnd.steps)


# --- stability and what is announced -------------------------------------------------------


def _stable_events(table: ManualTable, i: int) -> list[tuple[int, int, str]]:
    return [
        (e.round, e.stable_ops, e.state_hash) for e in table.events[i] if isinstance(e, StableState)
    ]


def test_stability_waits_for_every_player_and_the_final_state_is_announced_stable() -> None:
    rules = Rules(seats=2)
    # Deals with no card to play: "stuck" is refused while a seat can play.
    seeds = [seed_showing(rules, [], label=f"s{i}", stuck=True) for i in range(2)]
    table = ManualTable(rules, seeds)
    table.start_round()
    turn = table.players[0].play(Move(0, "turn"))
    assert isinstance(turn, Op)
    table.collect()
    table.deliver_all()

    def after_turn(player: TableReplica) -> int:
        """How many ops of the round's order, up to and including the turn."""
        rnd = player.current_round
        assert rnd is not None
        return 1 + next(k for k, step in enumerate(rnd.steps) if step.op.hash == turn.hash)

    # Seat 1 has not been heard from since the move: the move cannot be stable yet.
    for i, player in enumerate(table.players):
        assert all(ops < after_turn(player) for _, ops, _ in _stable_events(table, i))
    table.settle(0.5)  # heartbeats: both promise their next op comes later
    for i, player in enumerate(table.players):
        rnd = player.current_round
        assert rnd is not None
        number, ops, last_hash = _stable_events(table, i)[-1]
        assert number == 1
        assert ops >= after_turn(player)
        assert last_hash == state_hash(rnd.states[ops])
    # Stuck, stuck, all rotate; stuck, stuck: a stalemate. Then reveals, audit, final.
    for _ in range(2):
        for seat in (0, 1):
            table.players[seat].play(Move(seat, "stuck"))
            table.collect()
            table.deliver_all()
    table.settle(2.0)
    for i, player in enumerate(table.players):
        rnd = player.current_round
        assert rnd is not None
        assert rnd.state.ended_by == "stalemate"
        announced = _stable_events(table, i)
        counts = [ops for _, ops, _ in announced]
        assert counts == sorted(set(counts)), "announced once each, growing"
        for number, ops, announced_hash in announced:
            assert number == 1
            assert announced_hash == state_hash(rnd.states[ops])
        # The last announcement is the whole round, reveals included: the final state.
        assert announced[-1][1] == len(rnd.steps)
        assert announced[-1][2] == state_hash(rnd.state)
        assert [e for e in table.events[i] if isinstance(e, RoundFinal)]


# --- a late op that sorts before the round's end -------------------------------------------


def test_a_late_op_sorting_before_the_nerts_call_rolls_the_round_back_across_its_end() -> None:
    table = one_card_nerts_table(settle=0)
    caller, other = table.players
    held: dict[int, list[bytes]] = {0: [], 1: []}

    def hold(i: int) -> None:
        held[i] += [datagram for _, datagram in table.players[i].outgoing()]

    def deliver(i: int) -> None:
        for datagram in held[i]:
            table.players[1 - i].receive(datagram, i, table.now)
        held[i] = []

    early = other.play(Move(1, "turn"))  # stamped early, delivered last
    hold(1)
    for _ in range(3):
        caller.sync.clock.tick()
    rnd = caller.current_round
    assert rnd is not None
    caller.play(Move(0, "play", rnd.state.seats[0].nerts_up[-1], FROM_NERTS, "f", NEW_FOUNDATION))
    hold(0)
    deliver(0)  # the other seat sees the ace, not yet the call
    for _ in range(5):
        other.sync.clock.tick()
    in_the_air = other.play(Move(1, "turn"))  # stamped after the call, not having seen it
    hold(1)
    call = caller.play(Move(0, "nerts"))
    assert isinstance(call, Op)
    assert isinstance(early, Op)
    assert isinstance(in_the_air, Op)
    assert early.lamport < call.lamport < in_the_air.lamport
    hold(0)
    deliver(0)
    deliver(1)  # the caller now folds the early turn before its ace and its call
    table.collect()
    table.deliver_all()
    table.settle(2.0)
    results = set()
    for i, player in enumerate(table.players):
        r = player.current_round
        assert r is not None
        steps = {s.op.hash: s for s in r.steps}
        assert steps[early.hash].applied
        assert steps[early.hash].in_the_air is False
        assert steps[in_the_air.hash].applied
        assert steps[in_the_air.hash].in_the_air is True
        assert r.state.ended_by == "nerts"
        assert r.state.called_by == 0
        assert len(r.state.seats[1].waste) == 6, "both turns counted"
        ended = [e for e in table.events[i] if isinstance(e, RoundEnded)]
        assert [(e.ended_by, e.called_by) for e in ended] == [("nerts", 0)]
        finals = [e for e in table.events[i] if isinstance(e, RoundFinal)]
        assert len(finals) == 1
        results.add((state_hash(r.state), finals[0].scores))
    assert len(results) == 1


def test_a_late_op_sorting_just_before_the_call_leaves_the_call_the_op_that_ended_the_round() -> (
    None
):
    # The other seat turns after seeing the ace, stamped below the call, and turns again
    # after the call without having seen it. At the caller the first turn lands exactly
    # where the call stood: the call is still what ended the round, so the second turn is
    # in the air and counts. (Seed 1201, `fold_from`: with `>=` made `>` the refold kept
    # the old end position, now the other seat's turn, and refused its next move as
    # played after seeing the end.)
    rules = Rules(seats=2, nerts_size=1)
    seeds = [
        seed_showing(rules, [], nerts_top="AS", label="caller/exact"),
        seed_showing(rules, [], label="other/exact"),
    ]
    table = ManualTable(rules, seeds)
    table.start_round()
    table.settle(0.3)
    caller, other = table.players
    rnd = caller.current_round
    assert rnd is not None
    caller.play(Move(0, "play", rnd.state.seats[0].nerts_up[-1], FROM_NERTS, "f", NEW_FOUNDATION))
    for _, datagram in caller.outgoing():
        other.receive(datagram, 0, table.now)  # the other seat sees the ace
    before_call = other.play(Move(1, "turn"))
    held = [datagram for _, datagram in other.outgoing()]
    for _ in range(5):
        caller.sync.clock.tick()
    call = caller.play(Move(0, "nerts"))
    for _ in range(10):
        other.sync.clock.tick()
    in_the_air = other.play(Move(1, "turn"))
    held += [datagram for _, datagram in other.outgoing()]
    assert isinstance(before_call, Op)
    assert isinstance(call, Op)
    assert isinstance(in_the_air, Op)
    assert before_call.lamport < call.lamport < in_the_air.lamport
    for datagram in held:
        caller.receive(datagram, 1, table.now)
    for r in rounds_after(table, 2.0):
        assert r.end_position is not None
        assert r.steps[r.end_position].op.hash == call.hash
        steps = {s.op.hash: s for s in r.steps}
        assert steps[before_call.hash].applied
        assert steps[in_the_air.hash].applied, steps[in_the_air.hash].reason
        assert steps[in_the_air.hash].in_the_air is True
        assert len(r.state.seats[1].waste) == 6, "both turns counted"


# --- starting a round ----------------------------------------------------------------------


def test_only_the_host_starts_a_round_and_never_with_one_player() -> None:
    rules = Rules(seats=3)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"o{i}") for i in range(3)])
    host, guest, _ = table.players
    host.ready()
    table.collect()
    table.deliver_all()
    with pytest.raises(NertsError, match="a round needs at least 2 ready players"):
        host.start()
    guest.ready()
    table.collect()
    table.deliver_all()
    with pytest.raises(NertsError, match=r"^only the table's host"):
        guest.start()
    host.start()
    table.collect()
    table.deliver_all()
    assert {p.seat for p in table.players[:2]} == {0, 1}


def _caller_other_and_cheat(label: str) -> ManualTable:
    """Three seats of one-card Nerts piles, the round started: seat 0 (the caller) can play
    its ace and call Nerts at once; seat 2 is the one that cheats."""
    rules = Rules(seats=3, nerts_size=1)
    seeds = [
        seed_showing(rules, [], nerts_top="AS", label=f"{label}-caller"),
        seed_showing(rules, [], label=f"{label}-other"),
        seed_showing(rules, [], label=f"{label}-cheat"),
    ]
    table = ManualTable(rules, seeds)
    table.start_round()
    return table


def test_an_expelled_dealer_who_never_reveals_is_named_a_cheater_when_the_round_ends() -> None:
    table = _caller_other_and_cheat("x")
    caller, _, cheat = table.players
    first = cheat.play(Move(2, "turn"))
    assert isinstance(first, Op)
    cheat.outgoing()
    second = op_body(first.kind, first.table, first.author, first.seq, first.prev,
                     first.lamport, first.epoch, list(first.round_deps), "stuck")  # fmt: skip
    caller.receive(first.datagram(), 2, table.now)
    caller.receive(seal(cheat.sync.key, second), 2, table.now)
    rnd = caller.current_round
    assert rnd is not None
    caller.play(Move(0, "play", rnd.state.seats[0].nerts_up[-1], FROM_NERTS, "f", NEW_FOUNDATION))
    caller.play(Move(0, "nerts"))
    _settle_without(table, silent=2, seconds=2.0)
    finals = [[e for e in table.events[i] if isinstance(e, RoundFinal)] for i in (0, 1)]
    assert [len(f) for f in finals] == [1, 1]
    for (final,) in finals:
        assert final.cheaters == frozenset({2})
        assert final.scores[2].score <= 0
        assert final.scores[0].score == 1  # its ace; the caller's bonus is 0 by default
    assert finals[0] == finals[1]
    # The expelled player's own table (it hears everything) waits for the others' reveals
    # too, and shows the very same result.
    assert [e for e in table.events[2] if isinstance(e, RoundFinal)] == finals[0]
    # Knowing it was expelled, it authored nothing more for the round: no REVEAL (found by
    # tools.mutate, seed 604, round_finish `progress`'s `or` made `and`).
    own = cheat.current_round
    assert own is not None
    assert own.log.excluded.get(cheat.me) is not None
    assert cheat.sync.logs[cheat.me][-1].kind == Kind.MOVE


def test_a_dealer_expelled_from_before_its_reveal_is_audited_as_if_it_never_revealed() -> None:
    # The cheat's REVEAL reaches the others, and then a second op of the same seq: the proof
    # expels it from its REVEAL on, so that REVEAL counts nowhere and its seat is judged as
    # one that never revealed, whether or not a peer held the REVEAL before the proof.
    table = _caller_other_and_cheat("r")
    caller, _, cheat = table.players

    def is_cheats_reveal(datagram: bytes) -> bool:
        message = decode(datagram, table=caller.sync.table)
        pairs = message.ops if isinstance(message, Batch) else []
        ops = (
            [message]
            if isinstance(message, Op)
            else [decode_op(*p, table=caller.sync.table) for p in pairs]
        )
        return any(op.kind == Kind.REVEAL and op.author == cheat.me for op in ops)

    call_nerts(table, settle=None)
    table.settle(1.0, withhold=is_cheats_reveal)
    reveal = cheat.sync.logs[cheat.me][-1]
    assert reveal.kind == Kind.REVEAL
    assert [e for e in table.events[0] if isinstance(e, RoundFinal)] == []
    another_salt = [reveal.payload[0], bytes(16)]
    twin = op_body(reveal.kind, reveal.table, reveal.author, reveal.seq, reveal.prev,
                   reveal.lamport, reveal.epoch, list(reveal.round_deps), another_salt)  # fmt: skip
    # Both in one BATCH, as a relayer sends what it holds: the REVEAL is taken first and is
    # stable at once (the cheat's heartbeats are past it), the proof follows in the same
    # receive, before the round can end.
    _, twin_body, twin_signature = seal_parts(cheat.sync.key, twin)
    ops = [[reveal.body, reveal.signature], [twin_body, twin_signature]]
    for player, relayer in ((0, 1), (1, 0)):
        key = table.players[relayer].sync.key
        batch = seal(key, [int(Kind.BATCH), caller.sync.table, key.key_id, ops])
        table.players[player].receive(batch, relayer, table.now)
        assert table.players[player].sync.expelled == {cheat.me: reveal.seq}
    table.settle(1.0)
    finals = [[e for e in table.events[i] if isinstance(e, RoundFinal)] for i in (0, 1)]
    assert [len(f) for f in finals] == [1, 1]
    assert finals[0] == finals[1]
    (final,) = finals[0]
    assert final.cheaters == frozenset({2})
    assert final.scores[2].score <= 0


def test_a_dealer_whose_reveal_does_not_open_its_commitment_is_a_cheater_though_it_departs() -> (
    None
):
    # The cheat reveals a seed and salt its commitment does not open, then falls silent and
    # is voted out holding that REVEAL: a departed seat is not audited, but its REVEAL was
    # made and counts, and it lies.
    table = _caller_other_and_cheat("d")
    caller, _, cheat = table.players
    rnd = caller.current_round
    assert rnd is not None
    caller.play(Move(0, "play", rnd.state.seats[0].nerts_up[-1], FROM_NERTS, "f", NEW_FOUNDATION))
    caller.play(Move(0, "nerts"))  # left in its outbox: the silent settle below sends it
    _settle_without(table, silent=2, seconds=1.0)
    cheat.tick(table.now)  # it hears everything and reveals, but sends nothing
    cheat.outgoing()
    reveal = cheat.sync.logs[cheat.me][-1]
    assert reveal.kind == Kind.REVEAL
    lie = [reveal.payload[0], bytes(16)]
    forged = op_body(reveal.kind, reveal.table, reveal.author, reveal.seq, reveal.prev,
                     reveal.lamport, reveal.epoch, list(reveal.round_deps), lie)  # fmt: skip
    for player in table.players[:2]:
        player.receive(seal(cheat.sync.key, forged), 2, table.now)
    _settle_without(table, silent=2, seconds=SILENCE_BOUND + 5.0)
    finals = [[e for e in table.events[i] if isinstance(e, RoundFinal)] for i in (0, 1)]
    assert [len(f) for f in finals] == [1, 1]
    assert finals[0] == finals[1]
    (final,) = finals[0]
    assert caller.current_round is not None
    assert caller.current_round.departed_seats() == {2}
    assert final.cheaters == frozenset({2})


def test_a_seed_share_that_does_not_open_is_reported_and_changes_nothing() -> None:
    table, dealer, partner, before = partners_after_their_share("g")
    garbled = bytes(SEED_AND_SALT + SEALED_OVERHEAD)  # the right size, sealed by nobody
    dealer.sync.author(Kind.SEED_SHARE, 1, [partner.me, garbled])
    table.collect()
    table.deliver_all()
    reports = [e for e in table.events[1] if isinstance(e, ProtocolViolation)]
    assert [e.author for e in reports] == [dealer.me]
    rnd = partner.current_round
    assert rnd is not None
    assert state_hash(rnd.state) == before


def test_a_move_made_before_a_cheaters_nonce_counts_once_the_cheater_is_expelled() -> None:
    """A move counts only if its author had every participant's mix nonce (PROTOCOL.md 6),
    except an expelled participant's, which cannot be trusted either way. A move refused
    for want of a nonce must count once that nonce's owner is expelled, even when the
    refusal was worked out (and remembered) while every nonce was in."""
    rules = Rules(seats=3)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"n{i}") for i in range(3)])
    host, early, cheat = table.players
    for player in table.players:
        player.ready()
    table.collect()
    table.deliver_all()
    host.start()
    table.collect()
    # Everything is delivered except the cheater's MIX to the early player.
    while table.queue:
        queue, table.queue = table.queue, []
        for sender, destination, datagram in queue:
            message = decode(datagram, table=host.sync.table)
            for i in range(3) if destination == BROADCAST else [destination]:
                assert isinstance(i, int)
                held = isinstance(message, Op) and message.kind == Kind.MIX and sender == 2
                if i != sender and not (held and i == 1):
                    table.players[i].receive(datagram, sender, table.now)
        table.collect()
    rnd = early.current_round
    assert rnd is not None
    assert cheat.me not in rnd.log.nonces
    # A modified client signs a move anyway, without the cheater's nonce.
    turn = complete(rnd.state, Move(1, "turn"))
    early_move = early.sync.author(Kind.MOVE, 1, move_text(turn).split(" ", 1)[1])
    table.collect()
    table.deliver_all()
    host_round = host.current_round
    assert host_round is not None
    step = next(s for s in host_round.steps if s.op == early_move)
    assert not step.applied
    assert "mix nonce" in step.reason
    # The cheater equivocates; the host expels it and folds the round again.
    first = cheat.play(Move(2, "turn"))
    assert isinstance(first, Op)
    cheat.outgoing()
    twin = op_body(first.kind, first.table, first.author, first.seq, first.prev,
                   first.lamport, first.epoch, list(first.round_deps), "stuck")  # fmt: skip
    host.receive(first.datagram(), 2, table.now)
    host.receive(seal(cheat.sync.key, twin), 2, table.now)
    table.collect()
    assert [e.author for e in table.events[0] if isinstance(e, PeerExpelled)] == [cheat.me]
    host_round = host.current_round
    assert host_round is not None
    assert next(s for s in host_round.steps if s.op == early_move).applied


# --- stability once nobody who plays the round is left -------------------------------------


def test_a_round_whose_every_player_is_expelled_after_the_call_still_ends_for_a_watcher() -> None:
    # Both players equivocate right after the Nerts call: neither can reveal its deal any
    # more (its later ops do not count), and nobody is left whose horizon could hold the
    # round's end back. A spectator must still see the round end, every seat a cheater,
    # or its table waits for ever. (Found by `tools.mutate`, seed 19: `stable_bound` with
    # nobody live gave a bound of 1, not "everything".)
    table = one_card_nerts_table("all-expelled", spectators=1)
    call_nerts(table, settle=None)
    table.deliver_all()  # the call is everywhere; nobody has revealed yet
    watcher = table.players[2]
    for cheat in table.players[:2]:
        base = max(r.sync.clock.value for r in table.players) + 1
        last = cheat.sync.logs[cheat.me][-1]
        for lamport in (base, base + 7):
            watcher.receive(signed_move(cheat, 0, last.hash, lamport), "prover", table.now)
    table.collect()
    assert {e.author for e in table.events[2] if isinstance(e, PeerExpelled)} == {
        p.me for p in table.players[:2]
    }
    table.settle(3.0)
    finals = [e for e in table.events[2] if isinstance(e, RoundFinal)]
    assert [f.round for f in finals] == [1], "the round never ended for the spectator"
    assert finals[0].cheaters == frozenset({0, 1})


# --- a LEAVE, folded like every intent ----------------------------------------------------


def test_what_a_players_leave_makes_stable_is_announced_by_the_leave_itself() -> None:
    # The second player holds the third's move and heartbeats from both others past it:
    # only its own horizon holds the move back from being stable there. Its LEAVE is
    # stamped after the move, so signing it makes the move stable, and `leave` announces
    # that at once, as every intent of ours does: the shell reads the events right after
    # its LEAVE and quits, with no tick to come. (Found by `tools.mutate`, seed 21: with
    # `leave`'s own fold deleted, the stable state waited for the next tick.)
    table = three_at_play("leave-stable")
    leaver, mover = table.players[1], table.players[2]
    move = turn_or_recycle(mover, 2)
    table.collect()
    table.deliver_all()
    table.now += 0.2
    for replica in (table.players[0], mover):
        replica.tick(table.now)  # heartbeats past the move; the leaver does not tick
    table.collect(only=[0, 2])
    table.deliver_all()
    rnd = leaver.current_round
    assert rnd is not None
    position = next(i for i, op in enumerate(rnd.log.ops) if op.hash == move.hash)
    assert rnd.log.stable_count() == position, "only the leaver's own horizon holds it"
    leaver.events()
    goodbye = leaver.leave()
    assert goodbye.lamport > move.lamport
    stable = [e for e in leaver.events() if isinstance(e, StableState)]
    assert stable, "the LEAVE made the move stable, and nothing said so"
    assert stable[-1].stable_ops > position
