"""Scenario builders for the engine tests: positions from a few readable pieces.

A scenario is written in the position notation of `nerts_p2p.game.position`, one seat at a time::

    state = position(seat("?11:7C", work="9H,-,-,-"), seat("?12:AS"))

`*` in a seat's hidden Nerts field or in its stock field (not both) stands for "every card of
this deck not written anywhere else", as unknown face-down slots, so a test names only the
cards that matter.
"""

from __future__ import annotations

from collections.abc import Sequence

from nerts_p2p.game.bots import BotLevel
from nerts_p2p.game.cards import owner_of, parse_card
from nerts_p2p.game.engine import apply, omniscient_start, play
from nerts_p2p.game.errors import Rejection
from nerts_p2p.game.moves import parse_move
from nerts_p2p.game.position import parse_position, position_text
from nerts_p2p.game.rules import Rules, parse_rule_options, rule_options_text
from nerts_p2p.game.simulate import simulate_round
from nerts_p2p.game.state import UNKNOWN, GameState, private_slot

FILL = "*"


def seat(
    nerts: str = "?12:KS",
    *,
    work: str = "-,-,-,-",
    stock: str = FILL,
    waste: str = "-",
    stuck: bool = False,
) -> str:
    """One seat's field: ``hidden:up`` Nerts pile, work piles, stock, waste and stuck flag."""
    return f"{nerts}/{work}/{stock}/{waste}/{'s' if stuck else '-'}"


def _tokens(field: str) -> list[str]:
    return [t for part in field.split(",") for t in part.split(".") if t not in ("", "-")]


def _count(seats: list[str], foundations: str) -> tuple[list[int], list[int]]:
    """Per seat: how many of its cards the text names, and its unknown slots (besides `*`)."""
    named = [0] * len(seats)
    unknown = [0] * len(seats)
    for token in _tokens(foundations):
        named[owner_of(parse_card(token))] += 1
    for i, text in enumerate(seats):
        hidden, _, rest = text.partition(":")
        fields = [hidden, *rest.split("/")[:4]]
        for token in _tokens(",".join(fields)):
            if token == FILL:
                continue
            if token.startswith("?"):
                unknown[i] += int(token[1:] or "1")
            else:
                named[owner_of(parse_card(token, default_owner=i))] += 1
    return named, unknown


def position(
    *seats: str, foundations: str = "-", rules: str = "-", status: str = "play/0/0"
) -> GameState:
    """A position with one field per seat (see `seat`). The rules get ``seats=`` from the
    number of seats given; `*` is filled with the seat's remaining cards as unknown slots."""
    base = parse_rule_options(rules)
    table = Rules.from_dict({**base.to_dict(), "seats": len(seats)})
    named, unknown = _count(list(seats), foundations)
    filled = []
    for i, text in enumerate(seats):
        rest = table.deck_size - named[i] - unknown[i]
        assert rest >= 0, f"seat {i} names {named[i] + unknown[i]} cards, more than its deck"
        run = f"?{rest}" if rest else "-"
        hidden, sep, tail = text.partition(":")
        parts = tail.split("/")
        assert [hidden, parts[2]].count(FILL) <= 1, f"seat {i}: fill the Nerts pile or the stock"
        hidden = run if hidden == FILL else hidden
        parts[2] = run if parts[2] == FILL else parts[2]
        filled.append(hidden + sep + "/".join(parts))
    text = " ".join(["nerts1", rule_options_text(table), status, foundations, *filled])
    return parse_position(text)


def knowing(state: GameState, seat_no: int, *, nerts: str = "", stock: str = "") -> GameState:
    """`state` as a view that privately knows some face-down cards of one seat: `nerts` names
    the top cards of its hidden Nerts pile (bottom to top), `stock` its top cards (top first)."""
    s = state.seats[seat_no]

    def learn(slots: tuple[int, ...], text: str, *, from_top: bool) -> tuple[int, ...]:
        cards = [parse_card(t, default_owner=seat_no) for t in _tokens(text)]
        at = len(slots) - len(cards) if from_top else 0
        known = list(slots)
        for offset, card in enumerate(cards):
            assert known[at + offset] == UNKNOWN, "only unknown slots can be learnt"
            known[at + offset] = private_slot(card)
        return tuple(known)

    seats = list(state.seats)
    seats[seat_no] = s._replace(
        nerts_hidden=learn(s.nerts_hidden, nerts, from_top=True),
        stock=learn(s.stock, stock, from_top=False),
    )
    return state._replace(seats=tuple(seats))


def after(state: GameState, *moves: str, in_the_air: bool = False) -> GameState:
    """The state after playing `moves` in order (each must be legal)."""
    for text in moves:
        state = play(state, parse_move(text), in_the_air=in_the_air)
    return state


def rejected(state: GameState, move: str, *, in_the_air: bool = False) -> Rejection:
    """Why `move` has no effect (the test fails if it is accepted)."""
    before = position_text(state)
    result = apply(state, parse_move(move), in_the_air=in_the_air)
    assert isinstance(result, Rejection), f"{move!r} was accepted"
    assert position_text(state) == before
    return result


def seat_text(state: GameState, seat_no: int) -> str:
    """One seat's field of the position text (``hidden:up/work/stock/waste/flag``)."""
    return position_text(state).split()[4 + seat_no]


def work_text(state: GameState, seat_no: int) -> str:
    return seat_text(state, seat_no).split("/")[1]


def foundations_text(state: GameState) -> str:
    return position_text(state).split()[3]


def round_states(
    rules: Rules, seeds: Sequence[bytes], levels: Sequence[BotLevel], *, match_seed: int = 0
) -> list[GameState]:
    """Every state of a simulated round, from the all-knowing start to its end: the log
    replayed move by move (a move the simulator rejected must be rejected again)."""
    result = simulate_round(rules, seeds, levels, match_seed=match_seed, keep_log=True)
    states = [omniscient_start(rules, seeds)]
    for _, move, applied in result.log:
        nxt = apply(states[-1], move)
        assert isinstance(nxt, Rejection) is not applied, move
        if not isinstance(nxt, Rejection):
            states.append(nxt)
    assert position_text(states[-1]) == position_text(result.state)
    return states
