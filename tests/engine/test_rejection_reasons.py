"""Every refusal says why, in a player's words and with its reason, including for the piles,
seats and actions a move names that do not exist: `apply` promises a `Rejection` for any
move however wrong (a replicated fold runs every op through it), never an exception and
never `None`. Found by `tools.mutate` (exhaustive run of engine.py), where these refusals
had no test: a bound off by one reached past the last pile or seat, and a refusal replaced
by `None` went unnoticed."""

from __future__ import annotations

from nerts_p2p.game.cards import parse_card, parse_face
from nerts_p2p.game.engine import apply
from nerts_p2p.game.errors import Rejection, RejectReason
from nerts_p2p.game.moves import FROM_WASTE, PLAY, Move, parse_move
from nerts_p2p.game.state import GameState

from .helpers import position, rejected, seat

R = RejectReason


def refusal(state: GameState, move: Move) -> Rejection:
    """Why `move` (built by hand: the text form cannot even say it) has no effect."""
    result = apply(state, move)
    assert isinstance(result, Rejection), f"{move!r} was answered with {result!r}"
    return result


def test_a_move_with_an_action_the_game_does_not_have_is_refused_by_name() -> None:
    state = position(seat(), seat())
    refused = refusal(state, Move(0, "shuffle"))
    assert refused.reason == R.NO_SUCH_PILE
    assert refused.message == "unknown action 'shuffle'"


def test_a_card_sent_to_a_kind_of_pile_the_game_does_not_have_is_refused_by_name() -> None:
    state = position(seat(waste="5H"), seat())
    refused = refusal(state, Move(0, PLAY, parse_card("5H@0"), FROM_WASTE, "x", 0))
    assert refused.reason == R.NO_SUCH_PILE
    assert refused.message == "unknown destination 'x'"


def test_sliding_under_the_pile_past_the_last_is_refused_as_no_such_pile() -> None:
    # Four work piles, 0..3: pile 4 is one past the last (an off-by-one bound would index
    # past the layout and crash the fold).
    state = position(seat("?11:TS", work="9H.8C,-,5C,KD"), seat())
    refused = rejected(state, "0 TS n-u4 +2D")
    assert refused.reason == R.NO_SUCH_PILE
    assert refused.message == "there is no work pile 4"


def test_building_on_the_nerts_pile_of_a_seat_past_the_last_is_refused() -> None:
    state = position(seat(waste="6D"), seat("?11:7D"), rules="nerts_builds=true")
    refused = rejected(state, "0 6D d-n2")
    assert refused.reason == R.NO_SUCH_SEAT
    assert refused.message == "seat 2 is not another seat at this table"


def test_building_on_an_empty_nerts_pile_is_refused_with_the_seat_named() -> None:
    # Seat 1 emptied its Nerts pile: the target of a build is another seat's Nerts top
    # (RULES.md, the German variant), and there is none.
    state = position(seat(waste="6D"), seat("-:-"), rules="nerts_builds=true")
    refused = rejected(state, "0 6D d-n1")
    assert refused.reason == R.EMPTY_PILE
    assert refused.message == "seat 1's Nerts pile is empty"


def test_declaring_an_ordinary_ace_of_spades_as_itself_is_refused_like_any_declaration() -> None:
    # Only a joker is declared. The ace of spades is face 0, the one declaration a test for
    # "declared" written as `> 0` would miss; the text form cannot say it, a hand-made move
    # (another implementation's) can.
    state = position(seat(waste="AS"), seat())
    move = parse_move("0 AS d-f")._replace(declare=parse_face("AS"))
    refused = refusal(state, move)
    assert refused.reason == R.BAD_DECLARATION
    assert refused.message == "only a joker can be declared; ace of spades is itself"
    assert not isinstance(apply(state, parse_move("0 AS d-f")), Rejection)
