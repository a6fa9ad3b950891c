"""Foundation races: every peer agrees who was first, and the loser's moves are undone."""

from __future__ import annotations

from nerts_p2p.game.moves import FROM_NERTS, NEW_FOUNDATION, Move
from nerts_p2p.game.position import state_hash
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.state import GameState
from nerts_p2p.table.replica import RaceLost, TableReplica
from tests.replication.table_helpers import ManualTable, face, seed_showing
from tools.blind import races


def _where(state: GameState, seat: int, card_text: str) -> Move:
    """A move of `card_text` (a face, like 2H) from wherever it is exposed in `seat`'s layout."""
    f = face(card_text)
    s = state.seats[seat]
    if s.nerts_top is not None and s.nerts_top & 63 == f:
        return Move(seat, "play", s.nerts_top, FROM_NERTS)
    for k, pile in enumerate(s.work):
        if pile and pile[-1] & 63 == f:
            return Move(seat, "play", pile[-1], k)
    raise AssertionError(f"{card_text} is not exposed at seat {seat}")


def _to_foundation(state: GameState, seat: int, card_text: str, base: int) -> Move:
    return _where(state, seat, card_text)._replace(dest_kind="f", dest=base)


def _race_table(racers: int) -> tuple[ManualTable, int]:
    """Seat `racers` shows the ace of hearts; seats 0..racers-1 show the 2 of hearts on a work
    pile. The ace is played and seen by all; returns the table and the foundation's base."""
    seats = racers + 1
    rules = Rules(seats=seats)
    seeds = [seed_showing(rules, [], in_work=["2H"], label=f"racer{i}") for i in range(racers)]
    seeds.append(seed_showing(rules, ["AH"], label="ace"))
    table = ManualTable(rules, seeds)
    table.start_round()
    ace_seat = racers
    ace_player = table.players[ace_seat]
    rnd = ace_player.current_round
    assert rnd is not None
    ace = _where(rnd.state, ace_seat, "AH")._replace(dest_kind="f", dest=NEW_FOUNDATION)
    assert not hasattr(ace_player.play(ace), "reason")
    table.collect()
    table.deliver_all()
    return table, ace.card


def _play_concurrently(table: ManualTable, racers: int, base: int) -> None:
    for seat in range(racers):
        player = table.players[seat]
        rnd = player.current_round
        assert rnd is not None
        result = player.play(_to_foundation(rnd.state, seat, "2H", base))
        assert not hasattr(result, "reason"), result  # each racer saw its own card go on
        assert rnd.state.foundations[base].top_rank == 2
    table.collect()  # all sent, none delivered yet: the plays crossed on the wire
    table.deliver_all()
    table.settle(1.0)


def _owner_of_2h_on(player: TableReplica, base: int) -> int:
    rnd = player.current_round
    assert rnd is not None
    return rnd.state.foundations[base].cards[1] >> 6


def test_two_seats_racing_to_one_foundation_agree_on_the_winner() -> None:
    table, base = _race_table(2)
    _play_concurrently(table, 2, base)
    winners = {_owner_of_2h_on(p, base) for p in table.players}
    assert len(winners) == 1
    winner = winners.pop()
    loser = 1 - winner
    hashes = {state_hash(p.current_round.state) for p in table.players if p.current_round}
    assert len(hashes) == 1
    # The loser's 2H is back on its work pile, and it was told who was first.
    loser_state = table.players[loser].current_round
    assert loser_state is not None
    assert any(p and p[-1] & 63 == face("2H") for p in loser_state.state.seats[loser].work)
    lost = [e for e in table.events[loser] if isinstance(e, RaceLost)]
    assert len(lost) == 1
    assert lost[0].winner_seat == winner
    assert "2 of hearts" in lost[0].reason
    assert not [e for e in table.events[winner] if isinstance(e, RaceLost)]


def test_three_seats_racing_one_winner_two_losers_everywhere() -> None:
    table, base = _race_table(3)
    _play_concurrently(table, 3, base)
    winners = {_owner_of_2h_on(p, base) for p in table.players}
    assert len(winners) == 1
    winner = winners.pop()
    for seat in range(3):
        lost = [e for e in table.events[seat] if isinstance(e, RaceLost)]
        if seat == winner:
            assert not lost
        else:
            assert [e.winner_seat for e in lost] == [winner]


def test_the_losers_dependent_move_is_judged_again_and_undone() -> None:
    table, base = _race_table(2)
    # Both race; then each racer, believing its work pile is now empty, fills it from its
    # Nerts pile. For the loser the pile is not empty after all: that move is undone too.
    pile_of = {}
    for seat in range(2):
        player = table.players[seat]
        rnd = player.current_round
        assert rnd is not None
        move = _to_foundation(rnd.state, seat, "2H", base)
        pile_of[seat] = move.source
        player.play(move)
        follow = Move(seat, "play", rnd.state.seats[seat].nerts_up[-1], -1, "w", move.source)
        assert not hasattr(player.play(follow), "reason")
    table.collect()
    table.deliver_all()
    table.settle(1.0)
    winner = _owner_of_2h_on(table.players[0], base)
    loser = 1 - winner
    lost = [e for e in table.events[loser] if isinstance(e, RaceLost)]
    assert len(lost) == 2
    assert lost[1].move.dest == pile_of[loser]
    assert lost[1].reason.endswith("cannot go on 2 of hearts: work piles build down by one") or (
        "cannot go on 2 of hearts: work piles alternate red and black" in lost[1].reason
    )
    hashes = {state_hash(p.current_round.state) for p in table.players if p.current_round}
    assert len(hashes) == 1


def test_the_blind_benchmark_counts_each_race_once_with_its_winner_and_losers() -> None:
    # `nerts-p2p bench blind` reads races from the final fold (tools.blind.races): the same
    # races the players were told about, on every peer alike.
    table, base = _race_table(3)
    _play_concurrently(table, 3, base)
    winner = _owner_of_2h_on(table.players[0], base)
    found = []
    for player in table.players:
        rnd = player.current_round
        assert rnd is not None
        found.append(sorted((r.winner, r.loser) for r in races(rnd)))
    assert found[0] == sorted((winner, s) for s in range(3) if s != winner)
    assert all(f == found[0] for f in found)
