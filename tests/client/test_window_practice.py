"""The practice table: real replicas over the in-memory link, bots in (simulated) real time."""

from __future__ import annotations

import random

from client.window.practice import GO_DELAY, MAX_DEFERRAL, PracticeTable, practice_table
from client.window.replay_file import replay_from_json, replay_to_json
from client.window.session import LOBBY, PLAYING, SCORED, RaceLostNotice, RoundScoredNotice
from nerts_p2p.game.bots import CASUAL, EXPERT, BotPlayer
from nerts_p2p.game.cards import parse_face
from nerts_p2p.game.errors import Rejection
from nerts_p2p.game.legal import legal_moves
from nerts_p2p.game.moves import PLAY, TO_FOUNDATION, TURN, Move
from nerts_p2p.game.position import state_hash
from nerts_p2p.game.rules import Rules
from tests.replication.table_helpers import seed_showing

FRAME = 1 / 60


def run(table: PracticeTable, seconds: float) -> list[object]:
    notices: list[object] = []
    end = table.now + seconds
    while table.now < end:
        table.advance(table.now + FRAME)
        notices += table.notices()
    return notices


def until_playing(table: PracticeTable) -> None:
    """Until every replica has the round's START (the bots' too), and our replica every
    player's mix nonce (PROTOCOL.md 6: no move counts before them)."""
    for _ in range(600):
        table.advance(table.now + FRAME)
        rnd = table.me.current_round
        if (
            table.view().phase == PLAYING
            and all(r.current_round for r in table.replicas)
            and rnd is not None
            and set(rnd.log.nonces) == set(rnd.log.participants)
        ):
            return
    raise AssertionError("the round never started")


def test_a_move_is_pending_until_every_seat_has_seen_it() -> None:
    table = practice_table(3, CASUAL, seed=11)
    until_playing(table)
    view = table.view()
    assert view.my_seat is not None
    assert view.state is not None
    move = next(m for m in legal_moves(view.state, view.my_seat) if m.action == PLAY)
    assert table.submit(move) is None
    view = table.view()
    assert move.card in view.pending
    run(table, 1.0)
    view = table.view()
    assert move.card not in view.pending
    assert view.state is not None
    rnd = table.me.current_round
    assert rnd is not None
    assert any(
        step.applied and step.move is not None and step.move.card == move.card for step in rnd.steps
    )


def test_an_illegal_move_gets_the_engines_reason_and_changes_nothing() -> None:
    table = practice_table(2, CASUAL, seed=12)
    until_playing(table)
    view = table.view()
    assert view.state is not None
    assert view.my_seat is not None
    seat = view.state.seats[view.my_seat]
    top = seat.nerts_top
    assert top is not None
    before = state_hash(view.state)
    # The Nerts top onto the Nerts top's own rank in a work pile never fits; any wrong
    # target would do: the engine says why in words.
    move = Move(view.my_seat, PLAY, top, -1, TO_FOUNDATION, top)
    rejection = table.submit(move)
    assert rejection is not None
    assert rejection.message
    state = table.view().state
    assert state is not None
    assert state_hash(state) == before


def test_a_lost_foundation_race_goes_back_and_says_who_was_first() -> None:
    rules = Rules(seats=2)
    mine = seed_showing(rules, ["AS", "2S"], label="window-race-me")
    theirs = seed_showing(rules, ["2S"], label="window-race-bot")
    table = PracticeTable(rules, (EXPERT,), my_name="Ann", seed=5, first_deals=(mine, theirs))
    until_playing(table)
    me = table.view().my_seat
    assert me is not None
    bot_index = 1
    bot_replica = table.replicas[bot_index]
    bot_seat = bot_replica.seat
    assert bot_seat is not None
    assert bot_seat != me
    state = table.view().state
    assert state is not None
    ace = next(m for m in legal_moves(state, me) if m.card & 63 == parse_face("AS"))
    assert table.submit(ace) is None
    run(table, 0.4)  # the bot's replica sees the new foundation
    assert table.now - table.round_started_at[1] < GO_DELAY, "the bot must not have moved yet"
    bot_rnd = bot_replica.current_round
    assert bot_rnd is not None
    theirs_up = next(
        m
        for m in legal_moves(bot_rnd.state, bot_seat)
        if m.card & 63 == parse_face("2S") and m.dest_kind == TO_FOUNDATION
    )
    assert not isinstance(bot_replica.play(theirs_up), Rejection)
    # We turn our stock a few times first, so our 2S carries the later Lamport time: the
    # bot's 2S, played "at the same moment", sorts first.
    for _ in range(3):
        assert table.submit(Move(me, TURN)) is None
    state = table.view().state
    assert state is not None
    ours = next(
        m
        for m in legal_moves(state, me)
        if m.card & 63 == parse_face("2S") and m.dest_kind == TO_FOUNDATION
    )
    assert table.submit(ours) is None
    assert ours.card in table.view().pending
    notices = run(table, 1.0)
    lost = [n for n in notices if isinstance(n, RaceLostNotice)]
    assert len(lost) == 1
    assert lost[0].winner_seat == bot_seat
    bot_name = table.view().names[bot_seat]
    assert lost[0].text == f"{bot_name} was first: your 2 of spades goes back"
    state = table.view().state
    assert state is not None
    mine_now = state.seats[me]
    assert ours.card in (
        mine_now.nerts_up + mine_now.waste + tuple(c for p in mine_now.work for c in p)
    )
    assert ours.card not in table.view().pending


def test_a_round_plays_to_its_score_and_the_next_round_is_dealt() -> None:
    table = practice_table(3, EXPERT, seed=21)
    notices: list[object] = []
    # The person at the window plays too, a move every half second (else the round may
    # never end: two bots stuck wait for the third seat, which is ours, to say so).
    person = BotPlayer(EXPERT, -1, random.Random(21))
    for frame in range(240 * 60):
        table.advance(table.now + FRAME)
        notices += table.notices()
        view = table.view()
        if view.phase == SCORED:
            break
        if frame % 30 == 0 and view.phase == PLAYING and view.state and view.my_seat is not None:
            person.seat = view.my_seat
            move = person.act(view.state)
            if move is not None:
                table.submit(move)
    view = table.view()
    assert view.phase == SCORED
    scored = [n for n in notices if isinstance(n, RoundScoredNotice)]
    assert len(scored) == 1
    assert view.results == (scored[0].result,)
    result = scored[0].result
    assert len(result.scores) == 3
    assert not result.cheaters
    assert sum(result.totals) == sum(s.score for s in result.scores)
    # The saved match replays to the very state the replicas folded.
    replay = table.replay()
    assert replay is not None
    loaded = replay_from_json(replay_to_json(replay))
    rnd = table.me.current_round
    assert rnd is not None
    assert state_hash(loaded.rounds[0].states(loaded.rules)[-1]) == state_hash(rnd.state)
    # A move once the round is over: the engine's own reason, not one the window made up.
    assert view.my_seat is not None
    refused = table.submit(Move(view.my_seat, TURN))
    assert refused is not None
    assert refused.message == "the round is over"
    table.next_round()
    assert table.view().phase == LOBBY
    for _ in range(600):
        table.advance(table.now + FRAME)
        if table.view().phase == PLAYING:
            break
    assert table.view().round == 2
    assert table.view().phase == PLAYING


def test_watching_bots_has_no_seat_and_plays_no_move() -> None:
    table = practice_table(4, CASUAL, seed=31, watch=True)
    until_playing(table)
    view = table.view()
    assert view.my_seat is None
    assert view.watching
    assert view.state is not None
    assert len(view.state.seats) == 4
    refused = table.submit(Move(0, TURN))
    assert refused is not None
    assert "watching" in refused.message
    run(table, 6.0)
    state = table.view().state
    assert state is not None
    assert state.foundations or any(s.waste for s in state.seats), "the bots play"


def test_a_frame_budget_spreads_deliveries_but_never_holds_one_past_its_bound() -> None:
    # A budget of zero is always spent: only datagrams at the deferral bound go in.
    table = practice_table(4, CASUAL, seed=41, frame_budget=0.0)
    until_playing(table)
    for _ in range(60 * 5):
        table.advance(table.now + FRAME)
        first = table.link.first_arrival()
        assert first is None or first > table.now - MAX_DEFERRAL
    view = table.view()
    assert view.state is not None
    assert view.state.foundations or any(s.waste for s in view.state.seats), "play goes on"


def test_players_of_one_name_are_told_apart_by_their_seats() -> None:
    # Names are people's choice: a player may call themselves what a bot is called.
    table = practice_table(3, CASUAL, seed=13, name="casual bot 1")
    until_playing(table)
    names = table.view().names
    twins = [n for n in names if n.startswith("casual bot 1")]
    assert sorted(twins) == sorted(
        f"casual bot 1 (seat {seat})" for seat, n in enumerate(names) if n in twins
    )
    assert len(twins) == 2
    assert "casual bot 2" in names  # a name nobody else has is shown as it is
