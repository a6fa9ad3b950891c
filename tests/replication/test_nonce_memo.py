"""A move that lacked a player's mix nonce, folded while another player had already
departed, counts once that player's own departure is agreed at a point before it: what
a peer remembers of "did this move cover every nonce" must not outlive a departure that
changes the answer (PROTOCOL.md 6, 13). Driven by hand: four players and a spectator who
receives the ops in an order of the test's choosing. (A known survivor of `tools.mutate`,
seed 11, `nerts_p2p/table/round.py` `nonces_covered`.)"""

from __future__ import annotations

from nerts_p2p.game.moves import FROM_NERTS, NEW_FOUNDATION, Move, move_text
from nerts_p2p.game.position import state_hash
from nerts_p2p.game.rules import Rules
from nerts_p2p.table.replica import TableReplica
from protocol.messages import Kind, Op
from tests.replication.table_helpers import ManualTable, seed_showing, tick_together


def _vote(voter: TableReplica, target: TableReplica) -> Op:
    return voter.sync.author(Kind.DEPART, 1, [target.me, voter.sync.delivered(target.me)])


def test_a_move_missing_a_nonce_counts_once_that_players_departure_sorts_before_it() -> None:
    rules = Rules(seats=4, nerts_size=1, target=500)
    seeds = [
        seed_showing(rules, [], nerts_top="AS", label="memo/mover"),
        *(seed_showing(rules, [], label=f"memo/{i}") for i in range(1, 4)),
    ]
    table = ManualTable(rules, seeds, spectators=1)
    mover, voter, late_nonce, first_gone, watcher = table.players
    table.start_round(deliver=False)
    for sender, _, start in table.queue:  # the host's START, to every player and the watcher
        for other in table.players[1:]:
            other.receive(start, sender, table.now)
    table.queue.clear()
    # Every player's mix nonce is sent, but the mover never gets that of `late_nonce`
    # (nor anything that carries it): the mover knows every nonce but one.
    late_mix: list[bytes] = []

    def lost_to_mover(sender: TableReplica, receiver: TableReplica, datagram: bytes) -> bool:
        if not late_mix:
            log = late_nonce.sync.logs.get(late_nonce.me, [])
            late_mix.extend(op.signature for op in log if op.kind == Kind.MIX)
        return receiver is mover and any(sig in datagram for sig in late_mix)

    def route(players: list[TableReplica], seconds: float) -> None:
        table.now = tick_together(players, table.now, seconds, lost_to_mover)

    route([mover, voter, late_nonce, first_gone], 0.3)
    rnd = mover.current_round
    assert rnd is not None
    assert mover.sync.start_confirmed(1)
    assert late_nonce.me not in rnd.log.nonces
    assert len(rnd.log.nonces) == 3
    # The fourth player vanishes; the other three vote it out (the watcher hears none of it
    # yet). Then the one who sent its nonce late vanishes too, and the mover votes it out.
    for player in (mover, voter, late_nonce):
        _vote(player, first_gone)
    route([mover, voter, late_nonce], 0.1)
    route([mover, voter], 0.1)
    voter_against_late = _vote(voter, late_nonce)  # not sent to anyone yet
    # The mover alone keeps time a while (its heartbeats tick its clock), so its vote and
    # move sort after the voter's vote, which it has not seen.
    voter.outgoing()
    route([mover], 2.0)
    mover_against_late = _vote(mover, late_nonce)
    # The mover plays its ace: it does not hold `late_nonce`'s nonce, so in its view the
    # move does not count yet (the replica would not sign it; signed by hand, as another
    # implementation may).
    ace = rnd.state.seats[0].nerts_up[-1]
    payload = move_text(Move(0, "play", ace, FROM_NERTS, "f", NEW_FOUNDATION)).split(" ", 1)[1]
    move = mover.sync.author(Kind.MOVE, 1, payload)
    mover.outgoing()
    assert rnd.log.order_key(voter_against_late) < rnd.log.order_key(move)
    assert rnd.log.order_key(mover_against_late) < rnd.log.order_key(move)

    # The watcher gets everything but the voter's vote against `late_nonce`: the first
    # departure is agreed, every nonce is in, and the move lacks one that is still owed.
    held = [op for p in (mover, voter, late_nonce, first_gone) for op in p.sync.logs[p.me]]
    for op in sorted(held, key=lambda op: (op.author, op.seq)):
        if op.hash != voter_against_late.hash:
            watcher.receive(op.datagram(), "relay", table.now)
    watched = watcher.current_round
    assert watched is not None
    assert set(watched.log.departed_at) == {first_gone.me}
    assert len(watched.log.nonces) == 4
    step = next(s for s in watched.steps if s.op.hash == move.hash)
    assert not step.applied
    assert "mix nonce" in step.reason
    # The last vote arrives: `late_nonce` departed before the move, which owed it nothing.
    watcher.receive(voter_against_late.datagram(), "relay", table.now)
    assert set(watched.log.departed_at) == {first_gone.me, late_nonce.me}
    step = next(s for s in watched.steps if s.op.hash == move.hash)
    assert step.applied, step.reason
    # ...as it does for the two who stay, once they hold every op.
    everything = [op for log in watcher.sync.logs.values() for op in log]
    for replica in (mover, voter):
        for op in everything:
            replica.receive(op.datagram(), 4, table.now)
        assert replica.sync.vector() == watcher.sync.vector()
        current = replica.current_round
        assert current is not None
        assert state_hash(current.state) == state_hash(watched.state)
        assert next(s for s in current.steps if s.op.hash == move.hash).applied
