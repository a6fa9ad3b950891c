"""Properties of the engine over hypothesis-chosen deals, variants and move sequences.

Every test folds a sequence of moves from an all-knowing start. The moves are a mix of
legal moves (from `legal_moves`, named in full by `complete`), legal moves with one part
changed (another card, pile or seat), and arbitrary moves; most of the last two kinds
are rejected, which is the point.
"""

from __future__ import annotations

from typing import NamedTuple

from hypothesis import event, given, settings
from hypothesis import strategies as st

from nerts_p2p.game.audit import audit_round
from nerts_p2p.game.bots import CASUAL, EXPERT
from nerts_p2p.game.cards import make_card
from nerts_p2p.game.deck import seat_seed
from nerts_p2p.game.engine import (
    apply,
    complete,
    omniscient_start,
    play,
    public_start,
    reveals_needed,
    shown_cards,
)
from nerts_p2p.game.errors import Rejection
from nerts_p2p.game.fit import has_card_play
from nerts_p2p.game.legal import legal_moves
from nerts_p2p.game.moves import (
    FROM_NERTS,
    FROM_WASTE,
    NEW_FOUNDATION,
    PLAY,
    TO_FOUNDATION,
    TO_WORK,
    Move,
    move_text,
    parse_move,
)
from nerts_p2p.game.position import state_hash
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.simulate import simulate_round
from nerts_p2p.game.state import GameState, cards_of_seat, public_projection, slot_card

from . import strategies
from .strategies import moves

FOLD = settings(max_examples=60, deadline=None)


class Fold(NamedTuple):
    rules: Rules
    seeds: list[bytes]
    #: states[i] is the state move i was applied to; states[-1] is the final state.
    states: list[GameState]
    ops: list[Move]
    accepted: list[bool]


@st.composite
def candidate(draw: st.DrawFn, state: GameState) -> Move:
    seats = len(state.seats)
    legal = [m for seat in range(seats) for m in legal_moves(state, seat)]
    kind = draw(st.sampled_from(["legal"] * 3 + ["changed", "any"])) if legal else "any"
    if kind == "any":
        return draw(moves()).without_reveals()
    move = draw(st.sampled_from(legal))
    if kind == "legal":
        return move
    seat_cards = st.builds(make_card, st.integers(0, seats - 1), st.integers(0, 53))
    change = draw(st.sampled_from(["card", "source", "dest", "seat"]))
    if change == "card":
        return move._replace(card=draw(seat_cards))
    if change == "source":
        return move._replace(source=draw(st.sampled_from([FROM_NERTS, FROM_WASTE, 0, 1, 2, 5])))
    if change == "dest":
        dest = draw(st.one_of(st.integers(0, 6), st.just(NEW_FOUNDATION), seat_cards))
        return move._replace(dest=dest)
    return move._replace(seat=draw(st.integers(0, seats - 1)))


def fold_moves(data: st.DataObject, rules: Rules, *, max_steps: int = 80) -> Fold:
    seeds = [
        data.draw(st.binary(min_size=1, max_size=6), label=f"seed {i}") for i in range(rules.seats)
    ]
    state = omniscient_start(rules, seeds)
    fold = Fold(rules, seeds, [state], [], [])
    for _ in range(data.draw(st.integers(0, max_steps), label="steps")):
        move = data.draw(candidate(state))
        if 0 <= move.seat < rules.seats:
            move = complete(state, move)  # the author names what it turns up
        result = apply(state, move)
        fold.ops.append(move)
        fold.accepted.append(not isinstance(result, Rejection))
        if not isinstance(result, Rejection):
            state = result
        fold.states.append(state)
    return fold


def canonical(move: Move) -> Move:
    """`move` as `legal_moves` lists it: without reveals, and without the fields `apply`
    ignores for its kind of move (a source for a turn, a declaration off a foundation)."""
    plain = parse_move(move_text(move.without_reveals()))
    if plain.dest_kind != TO_FOUNDATION:
        plain = plain._replace(declare=-1)
    return plain


def private_to_card(slot: int) -> int:
    return slot if slot >= 0 else slot_card(slot)


def public_start_of(state: GameState) -> GameState:
    return public_start(state.rules, [shown_cards(state, i) for i in range(len(state.seats))])


@FOLD
@given(strategies.rules(), st.data())
def test_every_card_of_every_deck_is_in_exactly_one_place(
    rules: Rules, data: st.DataObject
) -> None:
    fold = fold_moves(data, rules)
    deck = rules.deck_size
    for state in fold.states:
        public = public_projection(state)
        for seat in range(rules.seats):
            cards = sorted(private_to_card(c) for c in cards_of_seat(state, seat))
            assert cards == [make_card(seat, i) for i in range(deck)]
            seen = [c for c in cards_of_seat(public, seat) if c >= 0]
            unknown = [c for c in cards_of_seat(public, seat) if c < 0]
            assert len(set(seen)) == len(seen)
            assert len(seen) + len(unknown) == deck


@FOLD
@given(strategies.rules(), st.data())
def test_a_rejected_move_changes_nothing(rules: Rules, data: st.DataObject) -> None:
    fold = fold_moves(data, rules)
    for before, after, move, accepted in zip(
        fold.states[:-1], fold.states[1:], fold.ops, fold.accepted, strict=True
    ):
        if accepted:
            continue
        hash_before = state_hash(before)
        result = apply(before, move)
        assert isinstance(result, Rejection)
        assert result.message
        assert state_hash(before) == hash_before == state_hash(after)


@settings(max_examples=40, deadline=None)
@given(strategies.rules(), st.data())
def test_legal_moves_are_exactly_the_moves_apply_accepts(rules: Rules, data: st.DataObject) -> None:
    fold = fold_moves(data, rules, max_steps=50)
    for state, move, accepted in zip(fold.states, fold.ops, fold.accepted, strict=False):
        for seat in range(rules.seats):
            for legal in legal_moves(state, seat):
                result = apply(state, complete(state, legal))
                assert not isinstance(result, Rejection), (legal, result)
        if accepted:
            assert canonical(move) in legal_moves(state, move.seat), move


@settings(max_examples=40, deadline=None)
@given(strategies.rules(), st.data())
def test_no_seat_is_ever_stuck_while_it_has_a_card_to_play(
    rules: Rules, data: st.DataObject
) -> None:
    fold = fold_moves(data, rules, max_steps=60)
    for state in fold.states:
        for seat in range(rules.seats):
            plays = [
                m
                for m in legal_moves(state._replace(ended_by=None), seat)
                if m.action == PLAY and not (m.source >= 0 and m.dest_kind == TO_WORK)
            ]
            assert has_card_play(state, seat) is bool(plays), plays
            assert not (state.seats[seat].stuck and plays), plays


@FOLD
@given(strategies.rules(), st.data())
def test_the_public_fold_reaches_the_same_states_as_the_all_knowing_one(
    rules: Rules, data: st.DataObject
) -> None:
    fold = fold_moves(data, rules)
    public = public_start_of(fold.states[0])
    assert state_hash(public) == state_hash(fold.states[0])
    for move, accepted, omniscient in zip(fold.ops, fold.accepted, fold.states[1:], strict=True):
        result = apply(public, move)
        assert isinstance(result, Rejection) is not accepted, move
        if not isinstance(result, Rejection):
            public = result
        assert state_hash(public) == state_hash(omniscient)


@FOLD
@given(strategies.rules(), st.data())
def test_the_audit_passes_an_honest_round_and_names_a_seat_that_lied(
    rules: Rules, data: st.DataObject
) -> None:
    fold = fold_moves(data, rules)
    start = public_start_of(fold.states[0])
    ops = [(m, False) for m in fold.ops]
    honest = audit_round(rules, fold.seeds, start, ops, public_projection(fold.states[-1]))
    assert honest.honest
    assert honest.cheaters == frozenset()

    # Moves that turned up a card while another card of the seat was still face down.
    chances = []
    for index, (state, move, accepted) in enumerate(
        zip(fold.states, fold.ops, fold.accepted, strict=False)
    ):
        if not accepted or not 0 <= move.seat < rules.seats:
            continue
        slots = reveals_needed(state, move)
        seat = state.seats[move.seat]
        others = [c for c in seat.nerts_hidden + seat.stock if c <= -2 and c not in slots]
        private = [i for i, slot in enumerate(slots) if slot <= -2]
        if others and private:
            chances.append((index, [slot_card(c) for c in others], private))
    event("a reveal to falsify" if chances else "no reveal to falsify")
    if not chances:
        return
    index, others, private = data.draw(st.sampled_from(chances), label="cheat")
    at = data.draw(st.sampled_from(private), label="reveal")
    lie = data.draw(st.sampled_from(others), label="instead")
    move = fold.ops[index]
    reveals = list(move.reveals)
    reveals[at] = lie
    cheat = move._replace(reveals=tuple(reveals))
    # The lie passes every check a peer can make during play...
    public = start
    for op in [*fold.ops[:index], cheat]:
        result = apply(public, op)
        assert not isinstance(result, Rejection) or op is not cheat
        public = public if isinstance(result, Rejection) else result
    # ...and the audit, knowing the seeds, finds it.
    report = audit_round(rules, fold.seeds, start, [*ops[:index], (cheat, False)], public)
    assert report.cheaters == {move.seat}
    assert not report.diverged
    (mismatch,) = report.mismatches
    assert mismatch.op_index == index
    assert f"seat {move.seat}" in mismatch.message


@settings(max_examples=20, deadline=None)
@given(strategies.rules(), st.integers(0, 2**32))
def test_a_whole_simulated_round_folds_alike_in_public_and_passes_the_audit(
    rules: Rules, seed: int
) -> None:
    seeds = [seat_seed(seed, 1, s) for s in range(rules.seats)]
    result = simulate_round(
        rules, seeds, ([EXPERT, CASUAL] * 4)[: rules.seats], match_seed=seed, keep_log=True
    )
    omniscient = omniscient_start(rules, seeds)
    public = start = public_start_of(omniscient)
    ops = []
    for _, move, applied in result.log:
        move = complete(omniscient, move)
        ops.append((move, False))
        for view in (omniscient, public):
            assert isinstance(apply(view, move), Rejection) is not applied, move
        if applied:
            omniscient = play(omniscient, move)
            public = play(public, move)
        assert state_hash(public) == state_hash(omniscient)
    assert public.ended
    assert state_hash(public) == state_hash(result.state)
    assert audit_round(rules, seeds, start, ops, public).honest
