"""Stuck seats as the rule texts have them: a seat is stuck only when it has no card to play,
only a stuck seat may rotate its stock, and a stuck seat that gains a play is stuck no more."""

from __future__ import annotations

import pytest

from nerts_p2p.game.cards import FACE_SHIFT, make_card, parse_face, with_face
from nerts_p2p.game.deck import seat_seed
from nerts_p2p.game.engine import omniscient_start
from nerts_p2p.game.errors import NotationError
from nerts_p2p.game.errors import RejectReason as R
from nerts_p2p.game.fit import build_on_work, fits_work, slide_under_pile, slides_under
from nerts_p2p.game.legal import legal_moves
from nerts_p2p.game.moves import ROTATE, STUCK, Move, move_text
from nerts_p2p.game.position import parse_position, position_text
from nerts_p2p.game.rules import Rules

from .helpers import after, position, rejected, seat, seat_text

#: Nothing of seat 0's below fits anywhere (JS may move onto QH: not a card play).
FULL = "5D,9C,QH,QD.JS"
#: The same for seat 1.
FULL_1 = "5S,9D,QC,JD"


def texts(moves: list[Move]) -> set[str]:
    return {move_text(m) for m in moves}


def test_rotate_is_refused_to_a_seat_that_is_not_stuck_from_the_deal_on() -> None:
    rules = Rules(seats=2)
    state = omniscient_start(rules, [seat_seed(3, 1, s) for s in range(2)])
    for s in range(2):
        assert Move(s, ROTATE) not in legal_moves(state, s)
        assert rejected(state, f"{s} rotate").reason == R.NOT_STUCK
    waiting = position(seat("*:KS", work=FULL, stock="2S.3S.4S"), seat("?12:KH", work=FULL_1))
    assert rejected(waiting, "0 rotate").reason == R.NOT_STUCK
    stuck = after(waiting, "0 stuck")
    assert Move(0, ROTATE) in legal_moves(stuck, 0)
    assert seat_text(after(stuck, "0 rotate"), 0).split("/")[2:] == ["3S.4S.2S", "-", "s"]


@pytest.mark.parametrize(
    ("layout", "foundations", "rules", "play"),
    [
        # An ace on the waste starts a foundation.
        (seat("?12:KS", work=FULL, waste="2S.AH"), "-", "-", "0 AH d-f"),
        # The Nerts top fits a work pile.
        (seat("-:8H", work=FULL), "-", "-", "0 8H n-w1"),
        # An exposed work card fits a foundation someone built.
        (seat("?12:KS", work="5D,9C,QH,QD.2S"), "AS@1", "-", "0 2S w3-fAS@1"),
        # An empty work pile takes the waste top.
        (seat("?12:KS", work="5D,9C,QH,-", waste="7S"), "-", "-", "0 7S d-w3"),
        # A wild joker on the waste can always start a foundation, declared as an ace.
        (seat("?12:KS", work=FULL, waste="X1"), "-", "jokers=1", "0 X1=AS d-f"),
        # A Nerts build on another seat's pile (only at tables that play them).
        (seat("?12:KS", work=FULL, waste="JH"), "-", "nerts_builds=true", "0 JH d-n1"),
    ],
)
def test_stuck_is_refused_while_a_card_can_be_played(
    layout: str, foundations: str, rules: str, play: str
) -> None:
    state = position(layout, seat("?12:QH", work=FULL_1), foundations=foundations, rules=rules)
    refused = rejected(state, "0 stuck")
    assert refused.reason == R.NOT_STUCK
    assert "you are not stuck" in refused.message
    assert Move(0, STUCK) not in legal_moves(state, 0)
    assert play in texts(legal_moves(state, 0))
    # The play named is one that really goes through.
    assert after(state, play).seats[0].stuck is False


def test_moves_between_own_work_piles_alone_do_not_keep_a_seat_from_being_stuck() -> None:
    state = position(seat("?12:KS", work=FULL), seat("?12:KH", work=FULL_1))
    assert "0 JS w3-w2" in texts(legal_moves(state, 0))
    assert Move(0, STUCK) in legal_moves(state, 0)
    assert after(state, "0 stuck").seats[0].stuck


def test_a_stuck_seat_whose_card_a_foundation_now_takes_is_stuck_no_longer() -> None:
    # Seat 0 waits with 2H on its waste; seat 1 starts the hearts with its ace.
    state = position(
        seat("?12:KS", work=FULL, waste="2H", stuck=True),
        seat("?12:KH", work="5S,9D,QC,2C.AH"),
    )
    played = after(state, "1 AH w3-f")
    assert not played.seats[0].stuck
    assert seat_text(played, 0)[-2:] == "/-"
    # So the table is not all stuck when seat 1 runs out of plays: no rotation.
    assert after(played, "1 stuck").rotations == 0
    assert after(played, "0 2H d-fAH@1").seats[0].stuck is False


def test_a_play_that_gives_a_stuck_seat_nothing_leaves_it_stuck() -> None:
    state = position(
        seat("?12:KS", work=FULL, waste="2H", stuck=True),
        seat("?12:KH", work="5S,9D,QC,2D.AC"),
    )
    played = after(state, "1 AC w3-f")
    assert played.seats[0].stuck
    all_stuck = after(played, "1 stuck")
    assert all_stuck.rotations == 1


def test_a_nerts_build_on_a_stuck_seats_pile_gives_it_a_card_to_play() -> None:
    # Seat 1 builds 8H on seat 0's 9H; the 8H fits seat 0's 9C, so seat 0 may play again.
    state = position(
        seat("?12:9H", work=FULL, stuck=True),
        seat("?12:KC", work="5S,9D,QC,8H"),
        rules="nerts_builds=true",
    )
    built = after(state, "1 8H w3-n0")
    assert not built.seats[0].stuck
    assert "0 8H@1 n-w1" in texts(legal_moves(built, 0))


def test_a_position_cannot_mark_a_seat_stuck_that_has_a_card_to_play() -> None:
    text = position_text(position(seat("?12:KS", work=FULL), seat("?12:KH", work=FULL_1)))
    marked = text.replace("/?34/-/-", "/?34/-/s", 1)
    assert parse_position(marked).seats[0].stuck
    with pytest.raises(NotationError, match=r"marked stuck \(s\) but still has a card to play"):
        parse_position(marked.replace("?12:KS/", "?12:8H/", 1))


def _entries() -> list[int]:
    """Every face of seat 0, both wild jokers, and a joker fixed as each face."""
    plain = [make_card(0, i) for i in range(54)]
    return plain + [with_face(make_card(0, 52), face) for face in range(52)]


def test_the_cheap_fit_checks_agree_with_the_worded_ones_on_every_pair() -> None:
    entries = _entries()
    below = with_face(make_card(1, 53), parse_face("9H"))
    for top in entries:
        for card in entries:
            for pile in ((top,), (make_card(1, parse_face("TS")), top), (below, top)):
                if len({e & 1023 for e in pile} | {card & 1023}) <= len(pile):
                    continue
                worded = not isinstance(build_on_work(pile, (card,)), str)
                assert fits_work(pile, card) is worded, (pile, card)
            worded = not isinstance(slide_under_pile((top,), card), str)
            assert slides_under((top,), card) is worded, (top, card)
    assert FACE_SHIFT == 10  # the inlined face arithmetic in fit.py relies on it


def test_a_seat_whose_players_all_left_counts_as_stuck_and_can_end_the_round() -> None:
    """PROTOCOL.md 13: a seat whose players departed is frozen and counts as stuck whatever
    it could still play, so the others can still end the round by all being stuck; once the
    round has ended, a departure changes nothing."""
    from nerts_p2p.game.engine import declare_gone

    rules = Rules(seats=2)
    state = omniscient_start(rules, [seat_seed(5, 1, s) for s in range(2)])
    gone = declare_gone(state, 1)
    assert [s.stuck for s in gone.seats] == [False, True]
    assert gone.seats[1]._replace(stuck=False) == state.seats[1]  # frozen as it lay
    assert declare_gone(gone, 1) == gone
    # Every other seat stuck too: the all-stuck rule applies (by default, a rotation).
    waiting = position(seat("*:KS", work=FULL, stock="2S.3S.4S"), seat("?12:KH", work=FULL_1))
    stuck = after(waiting, "0 stuck")
    both = declare_gone(stuck, 1)
    assert both.rotations == stuck.rotations + 1
    assert both.ended_by is None
