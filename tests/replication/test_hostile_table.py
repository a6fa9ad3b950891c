"""Cheating and odd-but-legal peers at a whole table of replicas."""

from __future__ import annotations

import hashlib
import re

import pytest

from nerts_p2p.game.moves import Move, parse_move
from nerts_p2p.game.position import state_hash
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import (
    PeerExpelled,
    ProtocolViolation,
    RoundStarted,
    deal_commitment,
    rules_to_wire,
)
from protocol.envelope import seal
from protocol.errors import LocalProtocolError
from protocol.messages import Kind, Op, batch_body, op_body, seal_op
from tests.replication.table_helpers import seed_showing
from tools.mesh import PeerMesh

from .table_helpers import ManualTable


def _play_until_round_starts(mesh: PeerMesh, peer: int) -> None:
    while mesh.replicas[peer].current_round is None:
        assert mesh.step(), "the mesh stopped before the round started"


def test_a_reveal_that_does_not_open_its_commitment_marks_a_cheater(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mesh = PeerMesh(players=3, rules=Rules(seats=3), seed=9)
    liar = mesh.replicas[1]
    _play_until_round_starts(mesh, 1)
    rnd = liar.current_round
    assert rnd is not None
    assert not rnd.revealed
    seed, salt = liar.my_secrets[1]
    # It played its committed deal; at the end it claims another seed.
    fake = hashlib.sha256(b"another deal" + seed).digest()
    monkeypatch.setitem(liar.my_secrets, 1, (fake, salt))
    mesh.run(until=600, rounds=1)

    seat = liar.seat
    assert seat is not None
    assert rnd.reveals[liar.me].payload == (fake, salt)
    assert deal_commitment(fake, salt) != rnd.commitments[liar.me]
    rules = rnd.rules
    for finals in mesh.finals:
        final = finals[1]
        assert final.cheaters == frozenset({seat})  # the honest seats are not named
        score = final.scores[seat]
        assert score.score <= 0
        # (It would have scored above zero: the penalty is what made it zero.)
        earned = score.foundation_cards - rules.nerts_penalty * score.nerts_left
        assert earned + (rules.caller_bonus if score.called else 0) > 0
    assert len({(f[1].scores, f[1].totals) for f in mesh.finals}) == 1


def test_an_equivocating_player_is_expelled_by_every_peer() -> None:
    mesh = PeerMesh(players=3, rules=Rules(seats=3), seed=4)
    cheat = mesh.replicas[2]
    _play_until_round_starts(mesh, 2)
    while len(cheat.sync.logs[cheat.me]) < 5:
        assert mesh.step()
    last = cheat.sync.logs[cheat.me][-1]
    deps = list(last.round_deps) if last.epoch else [list(d) for d in last.lobby_deps]
    other = op_body(
        last.kind, last.table, last.author, last.seq, last.prev, last.lamport, last.epoch, deps,
        "stuck" if last.payload != "stuck" else "recycle",
    )  # fmt: skip
    # The second version goes to peer 0 only; it must spread the news itself.
    mesh.replicas[0].receive(seal(cheat.sync.key, other), 2, mesh.now)
    mesh.run(until=mesh.now + 5.0, rounds=1)
    for i in (0, 1):
        expelled = [e for e in mesh.events[i] if isinstance(e, PeerExpelled)]
        assert [(e.author, e.seq) for e in expelled] == [(cheat.me, last.seq)]
        round_one = mesh.replicas[i].sync.epoch(1)
        assert round_one is not None
        assert not round_one.counts_author(cheat.me)
    assert len(set(mesh.state_hashes()[:2])) == 1


def test_a_host_who_sits_a_round_out_can_still_start_it() -> None:
    table = ManualTable(Rules(seats=2), [bytes([1]) * 32, bytes([2]) * 32, bytes([3]) * 32])
    host, first, second = table.players
    table.ready_all([first, second])
    host.start()
    table.collect()
    table.deliver_all()
    for i, replica in enumerate(table.players):
        started = [e for e in table.events[i] if isinstance(e, RoundStarted)]
        assert [e.round for e in started] == [1]
        assert replica.current_round is not None
    assert host.seat is None
    assert {first.seat, second.seat} == {0, 1}
    # And the round is played: a move goes through on every replica, the host's included.
    assert first.seat is not None
    played = first.play(parse_move(f"{first.seat} turn"))
    assert isinstance(played, Op)
    table.collect()
    table.deliver_all()
    for replica in table.players:
        rnd = replica.current_round
        assert rnd is not None
        assert [step.op.body for step in rnd.steps if step.applied] == [played.body]
    assert len({state_hash(r.current_round.state) for r in table.players if r.current_round}) == 1


def test_a_start_that_makes_no_sense_as_a_game_is_reported_not_a_crash() -> None:
    rules = Rules(seats=2)
    for seats, wire_rules, words in (
        ([0, 5], rules_to_wire(rules), "seats players at [0, 5]"),
        ([0, 0], rules_to_wire(rules), "seats players at [0], but the rules have seats 0..1"),
        ([0, 1], [["seats", 2], ["wizardry", True]], "unknown rule option(s): wizardry"),
        ([0, 1], [["match_rounds", -1], ["seats", 2]], "match_rounds must be 0 (no limit)"),
        ([0, 1], [["fill_from_work", 0], ["seats", 2]], "fill_from_work must be bool"),
        ([0, 1], [["seats", 2], ["seats", 2]], "name an option twice"),
    ):
        table = ManualTable(rules, [seed_showing(rules, [], label=f"h{i}") for i in range(2)])
        for player in table.players:
            player.ready()
        table.collect()
        table.deliver_all()
        host = table.players[0]
        payload = [host.ready_players(1), seats, wire_rules]
        # The host's own gate refuses to sign it; a modified host signs it anyway.
        with pytest.raises(LocalProtocolError, match=re.escape(words)):
            host.sync.author(Kind.START, 1, payload)
        sync = host.sync
        body = op_body(
            Kind.START, sync.table, sync.me, sync.delivered(sync.me) + 1,
            sync.logs[sync.me][-1].hash, sync.clock.tick(), 1,
            sync.deps_for(Kind.START, 1, payload), payload,
        )  # fmt: skip
        other = table.players[1]
        other.receive(seal(sync.key, body), 0, table.now)
        table.collect()
        assert other.current_round is None
        reports = [e.reason for e in table.events[1] if isinstance(e, ProtocolViolation)]
        assert any(words in r for r in reports), reports


def test_equivocation_found_after_the_op_is_stable_expels_from_its_seq_on_every_peer() -> None:
    """The rule for equivocation found late (PROTOCOL.md 10.1): the cut stays at the
    twin's seq even when one version was stable already. Two versions of one op can each
    be stable at a different honest peer, and no peer can tell from the log which version
    another one folded, so every rule that keeps "the stable op" splits the table for
    good. Every peer drops both versions alike, names the cheater, and agrees again."""
    mesh = PeerMesh(players=3, rules=Rules(seats=3), seed=4)
    cheat = mesh.replicas[2]
    _play_until_round_starts(mesh, 2)
    while not any(op.kind == Kind.MOVE for op in cheat.sync.logs[cheat.me]):
        assert mesh.step()
    early = next(op for op in cheat.sync.logs[cheat.me] if op.kind == Kind.MOVE)
    # Played on until that op of the cheater is stable at every peer.
    while not all(
        (log := r.sync.epoch(1)) is not None and early.lamport <= log.stable_bound()
        for r in mesh.replicas
    ):
        assert mesh.step()
    other = op_body(
        early.kind, early.table, early.author, early.seq, early.prev, early.lamport,
        early.epoch, list(early.round_deps), "stuck" if early.payload != "stuck" else "recycle",
    )  # fmt: skip
    mesh.replicas[0].receive(seal(cheat.sync.key, other), 2, mesh.now)
    mesh.run(until=mesh.now + 5.0, rounds=1)
    for i in (0, 1):
        expelled = [e for e in mesh.events[i] if isinstance(e, PeerExpelled)]
        assert [(e.author, e.seq) for e in expelled] == [(cheat.me, early.seq)]
        assert mesh.replicas[i].sync.evidence[cheat.me][0].seq == early.seq
        round_one = mesh.replicas[i].sync.epoch(1)
        assert round_one is not None
        assert round_one.excluded[cheat.me] == early.seq
    assert len(set(mesh.state_hashes()[:2])) == 1
    assert len(set(mesh.stable_hashes()[:2])) == 1


def test_a_move_and_the_proof_that_another_player_cheated_in_one_batch_both_count() -> None:
    """A relay may pack an honest move together with the second version of an op some
    player equivocated on. The receiver folds the move, then expels the cheater, whose ops
    leave the order under the move it just folded: it must end where every other peer ends
    (the cheater out, the honest move applied), not trip over the shortened order."""
    rules = Rules(seats=3)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"b{i}") for i in range(3)])
    table.start_round()
    host, honest, cheat = table.players
    first = cheat.play(Move(2, "turn"))
    assert isinstance(first, Op)
    table.collect()
    table.deliver_all()
    # The honest player has folded the cheater's move; its own next move sorts after it.
    move = honest.play(Move(1, "turn"))
    assert isinstance(move, Op)
    honest.outgoing()
    twin = seal_op(
        cheat.sync.key,
        op_body(first.kind, first.table, first.author, first.seq, first.prev, first.lamport,
                first.epoch, list(first.round_deps), "stuck"),
    )  # fmt: skip
    rnd = host.current_round
    assert rnd is not None
    assert rnd.steps[-1].op == first  # the move lands right after the cheater's op
    relayed = seal(honest.sync.key, batch_body(host.sync.table, honest.me, [move, twin]))
    host.receive(relayed, 1, table.now)
    table.collect()
    table.deliver_all()
    table.settle(0.5)
    hashes = set()
    for i, replica in enumerate(table.players[:2]):
        expelled = [e for e in table.events[i] if isinstance(e, PeerExpelled)]
        assert [(e.author, e.seq) for e in expelled] == [(cheat.me, first.seq)]
        rnd = replica.current_round
        assert rnd is not None
        applied = [s.op for s in rnd.steps if s.applied]
        assert move in applied
        assert first not in applied
        hashes.add(state_hash(rnd.state))
    assert len(hashes) == 1
