"""A joker fixed on a work pile as the last ordinary face (the king of clubs, face 51, just
below the jokers' own 52 and 53) is a black king, not a wild card: the legal moves list it
only for foundations that want a black king. (Found by `tools.mutate`, seed 1,
`nerts_p2p/game/legal.py`: a joker treated as wild from face 51 up.)"""

from __future__ import annotations

from nerts_p2p.game.cards import face_of, parse_card
from nerts_p2p.game.legal import legal_moves
from nerts_p2p.game.moves import TO_FOUNDATION
from tests.engine.helpers import position, seat
from tests.engine.test_completeness import assert_complete, run

# Seat 0's joker stands for the king of clubs on its first work pile, with nothing on it;
# seat 1 has run spades, hearts and clubs up to the queen, so a king of each is wanted.
KING_OF_CLUBS_JOKER = position(
    seat("?11:9D", work="X1=KC,-,-,-"),
    seat("?11:KD"),
    rules="jokers=1",
    foundations=",".join([run("S", "Q", 1), run("H", "Q", 1), run("C", "Q", 1)]),
)


def test_a_joker_fixed_as_the_king_of_clubs_goes_only_where_a_black_king_goes() -> None:
    assert face_of(parse_card("X1=KC", default_owner=0)) == 51
    to_foundation = sorted(
        str(m) for m in legal_moves(KING_OF_CLUBS_JOKER, 0) if m.dest_kind == TO_FOUNDATION
    )
    # Declared as either black king, on the clubs or the spades; never as the red king the
    # hearts want, nor as an ace to start a foundation: it keeps its rank and colour.
    assert to_foundation == ["0 X1=KC w0-fAC@1", "0 X1=KS w0-fAS@1"]
    assert_complete(KING_OF_CLUBS_JOKER)
