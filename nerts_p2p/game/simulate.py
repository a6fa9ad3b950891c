"""Bots playing each other in process, in simulated time.

Each player decides from the state as it is at that moment; its move lands `reach`
seconds later, so two players reaching for the same foundation race as at a real table
and the slower one's move is rejected. Nothing waits on a real clock: a round runs as
fast as the engine and the bots allow ("unlimited speed").
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from nerts_p2p.game.bots import BotLevel, BotPlayer
from nerts_p2p.game.deck import seat_seed
from nerts_p2p.game.engine import apply, omniscient_start
from nerts_p2p.game.errors import NertsError, Rejection
from nerts_p2p.game.legal import first_card_play
from nerts_p2p.game.moves import STUCK, Move
from nerts_p2p.game.position import state_hash
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.scoring import MatchScore, SeatScore, score_round
from nerts_p2p.game.state import ENDED_STALEMATE, GameState

#: After this many simulated seconds every bot only declares itself stuck, so that a
#: round always ends (a safety net: ordinary rounds end long before).
WRAP_UP_AFTER = 3600.0

#: Caps on one simulated round. Ordinary rounds stay far below them (a few thousand events,
#: a handful of all-stuck rotations); past a cap a rule is broken (a round that can never
#: end), and the simulator says so instead of looping forever.
MAX_EVENTS_PER_ROUND = 200_000
MAX_ROTATIONS_PER_ROUND = 1_000


@dataclass(frozen=True)
class RoundResult:
    round: int
    state: GameState
    moves: int
    rejected: int
    scores: tuple[SeatScore, ...]
    log: tuple[tuple[float, Move, bool], ...]  # (landing time, move, applied)

    @property
    def ended_by(self) -> str:
        return self.state.ended_by or ENDED_STALEMATE


def _player_rng(match_seed: int, round_number: int, player: int) -> random.Random:
    return random.Random(f"nerts-p2p/bot/{match_seed}/{round_number}/{player}")


def simulate_round(
    rules: Rules,
    seeds: Sequence[bytes],
    levels: Sequence[BotLevel],
    *,
    match_seed: int = 0,
    round_number: int = 1,
    keep_log: bool = False,
) -> RoundResult:
    """One round. `levels` has one entry per player: per seat, or two per seat (seat-major)
    when the rules play partnerships."""
    per_seat = 2 if rules.partnerships else 1
    if len(levels) != rules.seats * per_seat:
        raise NertsError(
            f"{rules.seats * per_seat} players need {rules.seats * per_seat} "
            f"bot levels, got {len(levels)}"
        )
    state = omniscient_start(rules, seeds)
    players = [
        BotPlayer(level, i // per_seat, _player_rng(match_seed, round_number, i))
        for i, level in enumerate(levels)
    ]
    # Events: (time, sequence, player, move-or-None). A None move is a decision to make.
    events: list[tuple[float, int, int, Move | None]] = []
    counter = 0
    for i, player in enumerate(players):
        events.append((player.rng.random() * 0.5, counter, i, None))
        counter += 1
    heapq.heapify(events)
    applied = rejected = 0
    log: list[tuple[float, Move, bool]] = []
    push, pop = heapq.heappush, heapq.heappop  # the loop runs twice per move
    # Read once per round, not once per event (the loop runs some 500 times a round).
    reaches = [player.level.reach for player in players]
    acts = [player.act for player in players]
    max_events, max_rotations = MAX_EVENTS_PER_ROUND, MAX_ROTATIONS_PER_ROUND
    wrap_up_after, apply_move = WRAP_UP_AFTER, apply
    steps = 0
    while state.ended_by is None and events:
        steps += 1
        if steps > max_events or state.rotations > max_rotations:
            raise NertsError(
                f"simulated round {round_number} did not end after {steps - 1} moves and "
                f"decisions and {state.rotations} all-stuck rotations: a rule lets a round "
                "go on forever"
            )
        now, _, index, move = pop(events)
        player = players[index]
        if move is None:
            chosen = acts[index](state) if now < wrap_up_after else _wrap_up(state, player)
            if chosen is None:
                delay = player.delay(None)
                if now < wrap_up_after or not state.seats[player.seat].stuck:
                    push(events, (now + delay, counter, index, None))
                    counter += 1
                continue
            push(events, (now + reaches[index], counter, index, chosen))
            counter += 1
            continue
        result = apply_move(state, move)
        if isinstance(result, Rejection):
            rejected += 1
            if keep_log:
                log.append((now, move, False))
        else:
            state = result
            applied += 1
            if keep_log:
                log.append((now, move, True))
        push(events, (now + player.delay(move), counter, index, None))
        counter += 1
    if state.ended_by is None:  # pragma: no cover - every player waits only while stuck
        raise NertsError("the simulated round stopped without ending")
    return RoundResult(round_number, state, applied, rejected, score_round(state), tuple(log))


def _wrap_up(state: GameState, player: BotPlayer) -> Move | None:
    """Past `WRAP_UP_AFTER`: play what keeps the seat from being stuck, then declare it."""
    seat = state.seats[player.seat]
    if seat.stuck:
        return None
    return first_card_play(state, player.seat) or Move(player.seat, STUCK)


def simulate_match(
    rules: Rules,
    levels: Sequence[BotLevel],
    *,
    seed: int,
    max_rounds: int | None = None,
) -> Iterator[tuple[RoundResult, MatchScore]]:
    """Rounds until a seat wins the match (or `max_rounds`), each with the running totals."""
    match = MatchScore(rules)
    limit = max_rounds if max_rounds is not None else 1000
    for round_number in range(1, limit + 1):
        seeds = [seat_seed(seed, round_number, s) for s in range(rules.seats)]
        result = simulate_round(rules, seeds, levels, match_seed=seed, round_number=round_number)
        match.add_round(result.scores)
        yield result, match
        if match.finished:
            return


def round_record(result: RoundResult, match: MatchScore) -> dict[str, object]:
    """The JSON object `nerts-p2p simulate` prints for a round."""
    state = result.state
    return {
        "round": result.round,
        "ended_by": result.ended_by,
        "called_by": state.called_by,
        "moves": result.moves,
        "rejected": result.rejected,
        "state_hash": state_hash(state),
        "seats": [
            {
                "seat": s.seat,
                "foundation_cards": s.foundation_cards,
                "nerts_left": s.nerts_left,
                "score": s.score,
                "total": match.totals[s.seat],
            }
            for s in result.scores
        ],
    }


def match_record(match: MatchScore) -> dict[str, object]:
    leader = max(match.totals)
    return {
        "match_winner": match.winner,
        "finished": match.finished,
        "rounds": match.rounds,
        "leader": match.totals.index(leader) if match.totals.count(leader) == 1 else None,
        "totals": list(match.totals),
    }
