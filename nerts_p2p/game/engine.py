"""Applying moves: the rules of RULES.md as one pure function.

`apply(state, move)` returns the next state, or a `Rejection` saying in a player's words
why the move has no effect. It never raises for a move, however wrong, so a replicated
fold can run any op through it; `play` is the raising twin for callers that expect
legal input. Nothing here reads a clock or draws a random number.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

from nerts_p2p.game.cards import (
    CARD_MASK,
    FACE_SHIFT,
    RANK_OF,
    RED_OF,
    SUIT_OF,
    card_name,
    card_text,
    face_name,
    face_of,
    is_joker,
    owner_of,
    with_face,
)
from nerts_p2p.game.deck import Deal, deal_seat
from nerts_p2p.game.errors import IllegalMoveError, NertsError, Rejection, RejectReason
from nerts_p2p.game.fit import build_on_work, has_card_play, slide_under_pile
from nerts_p2p.game.moves import (
    FROM_NERTS,
    FROM_WASTE,
    NERTS,
    NEW_FOUNDATION,
    PLAY,
    RECYCLE,
    ROTATE,
    STUCK,
    TO_FOUNDATION,
    TO_NERTS,
    TO_UNDER,
    TO_WORK,
    TURN,
    Move,
)
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.state import (
    ENDED_NERTS,
    ENDED_STALEMATE,
    UNKNOWN,
    Foundation,
    GameState,
    SeatState,
    forget_private,
    slot_card,
)

R = RejectReason

#: `tuple.__new__`: builds a `GameState`, `SeatState` or `Foundation` from its fields in
#: order without the generated constructor's Python frame, for the moves every round makes
#: hundreds of.
_new_game_state = tuple.__new__
_stuck_of = operator.attrgetter("stuck")


# --- starting a round ---------------------------------------------------------------------


def _seat_from_deal(rules: Rules, deal: Deal) -> SeatState:
    """A seat as its deal lays it out, in a view that knows its face-down cards (the
    all-knowing start, or a player's own seat). The other seats of a public view are built
    from what they show, in `public_start`."""
    seen = 0
    for card in (deal.nerts[-1], *deal.work):
        seen |= 1 << (card & 63)
    # `private_slot` of each card, inlined: every simulated round deals.
    hidden = tuple([-c - 2 for c in deal.nerts[:-1]])
    stock = tuple([-c - 2 for c in deal.stock])
    return SeatState(
        nerts_hidden=hidden,
        nerts_up=(deal.nerts[-1],),
        work=tuple([(c,) for c in deal.work]),
        stock=stock,
        waste=(),
        seen=seen,
        stuck=False,
    )


def _new_state(rules: Rules, seats: tuple[SeatState, ...]) -> GameState:
    return GameState(rules, seats, {}, {}, None, None, 0, False)


def omniscient_start(rules: Rules, seeds: Sequence[bytes]) -> GameState:
    """The start of a round knowing every seat's deck (simulator and audit)."""
    if len(seeds) != rules.seats:
        raise NertsError(f"{rules.seats} seats need {rules.seats} seeds, got {len(seeds)}")
    return _new_state(
        rules,
        tuple(_seat_from_deal(rules, deal_seat(rules, i, seed)) for i, seed in enumerate(seeds)),
    )


def public_start(
    rules: Rules,
    shown: Sequence[Sequence[int]],
    *,
    own_seat: int | None = None,
    own_seed: bytes | None = None,
) -> GameState:
    """The start of a round from what each seat shows (its Nerts top, then its work cards).

    A player passes its own seat and seed to also know its own face-down cards."""
    if len(shown) != rules.seats:
        raise NertsError(f"{rules.seats} seats must each show their cards, got {len(shown)}")
    seats = []
    for i, cards in enumerate(shown):
        if len(cards) != 1 + rules.work_piles:
            raise NertsError(f"seat {i} must show 1 + {rules.work_piles} cards, got {len(cards)}")
        if len({c & 63 for c in cards}) != len(cards) or any(owner_of(c) != i for c in cards):
            raise NertsError(f"seat {i} shows cards that are not distinct cards of its own deck")
        if any((c & 63) >= rules.deck_size for c in cards):
            raise NertsError(
                f"seat {i} shows a card its deck does not have: this table plays with "
                f"{rules.jokers} joker(s) per deck"
            )
        if own_seat == i and own_seed is not None:
            seats.append(_seat_from_deal(rules, deal_seat(rules, i, own_seed)))
            if (seats[-1].nerts_up[0], *(p[0] for p in seats[-1].work)) != tuple(cards):
                raise NertsError(f"seat {i}'s seed does not deal the cards it shows")
            continue
        hidden = (UNKNOWN,) * (rules.nerts_size - 1)
        stock = (UNKNOWN,) * rules.stock_size
        seen = 0
        for c in cards:
            seen |= 1 << (c & 63)
        seats.append(
            SeatState(hidden, (cards[0],), tuple((c,) for c in cards[1:]), stock, (), seen, False)
        )
    return _new_state(rules, tuple(seats))


def shown_cards(state: GameState, seat: int) -> tuple[int, ...]:
    """What a seat shows at the start of a round (for its `ready` message)."""
    s = state.seats[seat]
    return (s.nerts_up[0], *(pile[0] for pile in s.work))


# --- words for errors ---------------------------------------------------------------------


def _reject(reason: RejectReason, message: str) -> Rejection:
    return Rejection(reason, message)


# --- revealing face-down cards ------------------------------------------------------------


def _reveal(
    state: GameState, seat: int, slot: int, claimed: int | None, seen: int
) -> tuple[int, int] | Rejection:
    """Turn one face-down slot up. Returns (card, new seen mask) or why the claim is wrong."""
    if slot >= 0:  # already public (a recycled stock)
        if claimed is not None and claimed != slot:
            return _reject(
                R.BAD_REVEAL,
                f"that card is the {card_name(slot)}, not the "
                f"{card_name(claimed)}: everyone saw it on the waste",
            )
        return slot, seen
    if slot != UNKNOWN:  # private knowledge: the view knows the card
        card = slot_card(slot)
        if claimed is not None and claimed != card:
            return _reject(
                R.REVEAL_MISMATCH,
                f"seat {seat} turned up the {card_name(claimed)}, "
                f"but its deck has the {card_name(card)} there",
            )
        return card, seen | (1 << (card & 63))
    if claimed is None:
        return _reject(R.MISSING_REVEAL, "a card turned face up must be named in the move")
    index = claimed & 63
    if owner_of(claimed) != seat or index >= state.rules.deck_size or claimed > CARD_MASK:
        return _reject(
            R.BAD_REVEAL,
            f"seat {seat} turned up {card_text(claimed)}, which is not a card of its deck",
        )
    if seen >> index & 1:
        return _reject(
            R.BAD_REVEAL,
            f"seat {seat} turned up the {card_name(claimed)} again: that card was already seen",
        )
    return claimed, seen | (1 << index)


# --- work piles and foundations -----------------------------------------------------------


def _to_foundation(
    state: GameState, entry: int, move: Move
) -> tuple[dict[int, Foundation], dict[int, tuple[int, ...]]] | Rejection:
    face = entry & 63 if entry < 1 << FACE_SHIFT else (entry >> FACE_SHIFT) - 1  # face_of
    if (entry & 63) >= 52:  # a joker
        declared = move.declare
        if declared < 0:
            return _reject(
                R.JOKER_UNDECLARED,
                "declare the joker's rank and suit before it goes to a foundation",
            )
        if face < 52 and (RANK_OF[declared] != RANK_OF[face] or RED_OF[declared] != RED_OF[face]):
            colour = "red" if RED_OF[face] else "black"
            return _reject(
                R.BAD_DECLARATION,
                f"this joker stands for a {colour} "
                f"{RANK_OF[face]} on your work pile; declare it as one",
            )
        entry, face = with_face(entry, declared), declared
    elif move.declare >= 0:
        return _reject(
            R.BAD_DECLARATION, f"only a joker can be declared; {card_name(entry)} is itself"
        )
    foundations = dict(state.foundations)
    wants = dict(state.wants)
    if move.dest == NEW_FOUNDATION:
        if RANK_OF[face] != 1:
            return _reject(
                R.NEEDS_ACE,
                f"a foundation starts with an ace: the {face_name(face)} cannot start one",
            )
        base = entry & CARD_MASK
        foundation = Foundation(base, SUIT_OF[face], (entry,))
    else:
        base = move.dest
        old = state.foundations.get(base)
        if old is None:
            return _reject(
                R.NO_SUCH_FOUNDATION, f"there is no foundation started by {card_text(base)}"
            )
        height = len(old.cards)  # `wants_face`, inlined
        wanted = old.suit * 13 + height if height < 13 else -1
        if face != wanted:
            if wanted < 0:
                why = "it is complete"
            elif SUIT_OF[face] != old.suit:
                why = "foundations build up in one suit"
            else:
                why = f"it needs the {face_name(wanted)} next"
            return _reject(
                R.DOES_NOT_FIT,
                f"the {face_name(face)} cannot go on the foundation "
                f"of {face_name(face_of(old.cards[-1]))}: {why}",
            )
        foundation = _new_game_state(Foundation, (base, old.suit, old.cards + (entry,)))
        takers = wants[wanted]
        if len(takers) == 1:
            del wants[wanted]
        else:
            wants[wanted] = tuple(b for b in takers if b != base)
    foundations[base] = foundation
    height = len(foundation.cards)
    nxt = foundation.suit * 13 + height if height < 13 else -1
    if nxt >= 0:
        waiting = wants.get(nxt)
        wants[nxt] = (base,) if waiting is None else tuple(sorted((*waiting, base)))
    return foundations, wants


# --- the move -----------------------------------------------------------------------------


def exposed_ace(seat: SeatState) -> int | None:
    for entry in (seat.nerts_top, seat.waste_top, *(p[-1] for p in seat.work if p)):
        if entry is not None and entry < 64 * 8 and RANK_OF[entry & 63] == 1:
            return entry
    return None


_IN_THE_AIR = (PLAY, TURN, RECYCLE, ROTATE)


def is_ace_to_centre(move: Move) -> bool:
    """An ace (a real one, not a joker) played to a foundation: under `aces_first` the only
    move allowed while the mover has an exposed ace."""
    return (
        move.action == PLAY
        and move.dest_kind == TO_FOUNDATION
        and not is_joker(move.card)
        and RANK_OF[move.card & 63] == 1
    )


def apply(state: GameState, move: Move, *, in_the_air: bool = False) -> GameState | Rejection:
    """The state after `move`, or why it has no effect.

    `in_the_air` lets a card move count after the round ended: the replication layer sets
    it for moves whose author had not seen the Nerts call (DESIGN.md section 3). The stock
    moves that lead to a card move (turn, recycle, rotate) count too, or a seat that had to
    turn its waste over would lose a card that another seat's identical play keeps; `stuck`
    and `nerts` mean nothing once play has ended."""
    seat_no = move.seat
    if state.ended_by is not None and not (in_the_air and move.action in _IN_THE_AIR):
        return _reject(R.ROUND_OVER, "the round is over")
    if not 0 <= seat_no < len(state.seats):
        return _reject(R.NO_SUCH_SEAT, f"there is no seat {seat_no} at this table")
    seat = state.seats[seat_no]
    rules = state.rules
    if rules.aces_first:
        ace = exposed_ace(seat)
        if ace is not None and not is_ace_to_centre(move):
            return _reject(
                R.ACES_FIRST,
                f"aces go to the centre first: play your {card_name(ace)} before anything else",
            )
    action = move.action
    if action == PLAY:
        return _apply_play(state, seat_no, seat, move)
    if action == TURN:
        return _apply_turn(state, seat_no, seat, move)
    if action == RECYCLE:
        if seat.stock:
            return _reject(R.STOCK_NOT_EMPTY, "turn the whole stock before turning the waste over")
        if not seat.waste:
            return _reject(R.EMPTY_PILE, "your stock and waste are both empty")
        stock = seat.waste
        if rules.recycle_rotates and len(stock) > 1:
            stock = stock[1:] + stock[:1]
        return _with_seat(state, seat_no, seat._replace(stock=stock, waste=(), stuck=False))
    if action == ROTATE:
        # Unsticking while waiting, for a stuck seat only (the Finnish/Lao text): rotating
        # at will would shift the groups of three and make any stock card reachable. The
        # seat stays stuck.
        if not seat.stuck:
            return _reject(
                R.NOT_STUCK,
                "only a stuck seat may move its top stock card to the bottom: declare "
                "yourself stuck first",
            )
        if len(seat.stock) < 2:
            return _reject(R.STOCK_EMPTY, "rotating needs at least two cards in the stock")
        return _with_seat(state, seat_no, seat._replace(stock=seat.stock[1:] + seat.stock[:1]))
    if action == STUCK:
        if seat.stuck:
            return _reject(R.ALREADY_STUCK, f"seat {seat_no} is already stuck")
        if has_card_play(state, seat_no):
            return _reject(R.NOT_STUCK, _not_stuck_message(state, seat_no))
        return _all_stuck_check(_with_seat(state, seat_no, seat._replace(stuck=True)))
    if action == NERTS:
        if seat.nerts_count:
            return _reject(
                R.NERTS_NOT_EMPTY,
                f"you can call Nerts only with an empty Nerts pile; "
                f"{seat.nerts_count} card(s) left",
            )
        return state._replace(ended_by=ENDED_NERTS, called_by=seat_no)
    return _reject(R.NO_SUCH_PILE, f"unknown action {action!r}")


def _not_stuck_message(state: GameState, seat_no: int) -> str:
    from nerts_p2p.game.legal import first_card_play  # legal builds on this module

    play = first_card_play(state, seat_no)
    assert play is not None  # asked only when has_card_play says there is one
    return (
        f"you are not stuck: you can still play the {card_name(play.card)} ({play}); a seat "
        "is stuck only when it has no card to play but by turning its stock"
    )


def _with_seat(state: GameState, seat_no: int, seat: SeatState) -> GameState:
    seats = list(state.seats)
    seats[seat_no] = seat
    # `tuple.__new__` on the fields, not `_replace` or the generated constructor (a Python
    # function of its own): this runs for every stock turn.
    return _new_game_state(
        GameState,
        (
            state.rules,
            tuple(seats),
            state.foundations,
            state.wants,
            state.ended_by,
            state.called_by,
            state.rotations,
            state.progress,
        ),
    )


def _apply_turn(
    state: GameState, seat_no: int, seat: SeatState, move: Move
) -> GameState | Rejection:
    stock = seat.stock
    if not stock:
        if seat.waste:
            return _reject(R.STOCK_EMPTY, "your stock is empty: turn the waste over first")
        return _reject(R.STOCK_EMPTY, "your stock and waste are both empty")
    draw = state.rules.draw
    n = draw if draw < len(stock) else len(stock)
    reveals = move.reveals
    if reveals and len(reveals) != n:
        return _reject(
            R.BAD_REVEAL, f"turning the stock shows {n} card(s), the move names {len(reveals)}"
        )
    seen = seat.seen
    shown = stock[:n]
    if not reveals:
        # The common cases of the simulator and of an owner's view: every card turned is
        # privately known here, or every one is public already (a recycled stock).
        if max(shown) < UNKNOWN:
            cards = tuple([-slot - 2 for slot in shown])
            for card in cards:
                seen |= 1 << (card & 63)
        elif min(shown) >= 0:
            cards = shown
        else:
            cards = ()
        if cards:
            return _with_seat(
                state,
                seat_no,
                _new_game_state(
                    SeatState,
                    (
                        seat.nerts_hidden,
                        seat.nerts_up,
                        seat.work,
                        stock[n:],
                        seat.waste + cards,
                        seen,
                        False,
                    ),
                ),
            )
    # The move names the cards, or this view does not know them all: slot by slot (a known
    # slot needs no name; an unknown one without a name is refused).
    turned = []
    for i in range(n):
        result = _reveal(state, seat_no, stock[i], reveals[i] if reveals else None, seen)
        if isinstance(result, Rejection):
            return result
        card, seen = result
        turned.append(card)
    return _with_seat(
        state,
        seat_no,
        SeatState(
            seat.nerts_hidden,
            seat.nerts_up,
            seat.work,
            stock[n:],
            seat.waste + tuple(turned),
            seen,
            False,
        ),
    )


def _apply_play(
    state: GameState, seat_no: int, seat: SeatState, move: Move
) -> GameState | Rejection:
    rules = state.rules
    # Every field at once (tuple unpacking is one step; attribute reads are one each).
    _, _, card, source, kind, dest, _, reveals = move
    nerts_hidden, nerts_up, work, stock, waste, seen, _ = seat
    # Take the card (or sub-stack) from its source.
    if source == FROM_NERTS:
        if not nerts_up:
            return _reject(R.EMPTY_PILE, "your Nerts pile is empty")
        entry = nerts_up[-1]
        if entry & CARD_MASK != card & CARD_MASK:
            return _reject(
                R.NOT_ON_TOP,
                f"the top of your Nerts pile is the {card_name(entry)}, not the {card_name(card)}",
            )
        nerts_up = nerts_up[:-1]
        if reveals and (nerts_up or not nerts_hidden):
            return _reject(R.BAD_REVEAL, "this move turns no card face up")
        if not nerts_up and nerts_hidden:
            result = _reveal(
                state, seat_no, nerts_hidden[-1], reveals[0] if reveals else None, seen
            )
            if isinstance(result, Rejection):
                return result
            nerts_up, seen = (result[0],), result[1]
            nerts_hidden = nerts_hidden[:-1]
        stack: tuple[int, ...] = (entry,)
    elif reveals:
        return _reject(R.BAD_REVEAL, "only a move from the Nerts pile turns a card face up")
    elif source == FROM_WASTE:
        if not waste:
            return _reject(R.EMPTY_PILE, "your waste is empty")
        entry = waste[-1]
        if entry != card:
            return _reject(
                R.NOT_ON_TOP,
                f"the top of your waste is the {card_name(entry)}, not the {card_name(card)}",
            )
        waste = waste[:-1]
        stack = (entry,)
    elif 0 <= source < len(work):
        pile = work[source]
        if not pile:
            return _reject(R.EMPTY_PILE, f"work pile {source} is empty")
        at = len(pile) - 1
        while at >= 0 and pile[at] & CARD_MASK != card & CARD_MASK:
            at -= 1
        if at < 0:
            return _reject(R.NOT_IN_PILE, f"the {card_name(card)} is not in work pile {source}")
        entry = pile[at]
        if at != len(pile) - 1 and kind != TO_WORK:
            return _reject(
                R.NOT_ON_TOP,
                f"only the exposed card of work pile {source} "
                f"({card_name(pile[-1])}) can leave it this way",
            )
        stack = pile[at:]
        # A joker fixed by a card played on it stays fixed when that card leaves.
        rest = pile[:at]
        work = work[:source] + (rest,) + work[source + 1 :]
    else:
        return _reject(R.NO_SUCH_PILE, f"there is no work pile {source}")

    foundations, wants = state.foundations, state.wants
    seats = list(state.seats)
    # Put it down.
    if kind == TO_WORK:
        if not 0 <= dest < len(work):
            return _reject(R.NO_SUCH_PILE, f"there is no work pile {dest}")
        if dest == source:
            return _reject(R.DOES_NOT_FIT, f"the {card_name(entry)} is already on work pile {dest}")
        if source >= 0 and not work[dest] and not rules.fill_from_work:
            return _reject(
                R.VARIANT_OFF,
                f"work pile {dest} is empty: at this table only the Nerts top or the waste "
                "top may fill it",
            )
        built = build_on_work(work[dest], stack)
        if isinstance(built, str):
            return _reject(R.DOES_NOT_FIT, built)
        work = work[:dest] + (built,) + work[dest + 1 :]
    elif kind == TO_FOUNDATION:
        placed = _to_foundation(state, entry, move)
        if isinstance(placed, Rejection):
            return placed
        foundations, wants = placed
    elif kind == TO_UNDER:
        if not rules.slide_under:
            return _reject(R.VARIANT_OFF, "this table does not play slide-under")
        if source >= 0:
            return _reject(
                R.NOT_ON_TOP, "only the Nerts top or the waste top can slide under a pile"
            )
        if not 0 <= dest < len(work):
            return _reject(R.NO_SUCH_PILE, f"there is no work pile {dest}")
        if not work[dest]:
            return _reject(R.EMPTY_PILE, f"work pile {dest} is empty: play onto it instead")
        if all(work):
            return _reject(R.DOES_NOT_FIT, "sliding under needs an empty work pile")
        slid = slide_under_pile(work[dest], entry)
        if isinstance(slid, str):
            return _reject(R.DOES_NOT_FIT, slid)
        work = work[:dest] + (slid,) + work[dest + 1 :]
    elif kind == TO_NERTS:
        if not rules.nerts_builds:
            return _reject(R.VARIANT_OFF, "this table does not build on Nerts piles")
        victim = dest
        if not 0 <= victim < len(seats) or victim == seat_no:
            return _reject(R.NO_SUCH_SEAT, f"seat {victim} is not another seat at this table")
        target = seats[victim].nerts_top
        if target is None:
            return _reject(R.EMPTY_PILE, f"seat {victim}'s Nerts pile is empty")
        tf, cf = face_of(target), face_of(entry)
        if tf >= 52 or cf >= 52 or is_joker(target) or is_joker(entry):
            return _reject(R.DOES_NOT_FIT, "jokers take no part in building on Nerts piles")
        if SUIT_OF[tf] != SUIT_OF[cf] or abs(RANK_OF[tf] - RANK_OF[cf]) != 1:
            return _reject(
                R.DOES_NOT_FIT,
                f"the {face_name(cf)} cannot go on the "
                f"{face_name(tf)}: same suit, one rank up or down",
            )
        v = seats[victim]
        seats[victim] = v._replace(nerts_up=v.nerts_up + (entry,))
    else:
        return _reject(R.NO_SUCH_PILE, f"unknown destination {kind!r}")

    seats[seat_no] = _new_game_state(
        SeatState, (nerts_hidden, nerts_up, work, stock, waste, seen, False)
    )
    ended_by, called_by = state.ended_by, state.called_by
    if rules.must_call and not nerts_up and ended_by is None:
        ended_by, called_by = ENDED_NERTS, seat_no
    after = _new_game_state(
        GameState,
        (rules, tuple(seats), foundations, wants, ended_by, called_by, state.rotations, True),
    )
    if not any(map(_stuck_of, seats)):  # the common case, checked without a Python loop
        return after
    for other, s in enumerate(seats):
        # A stuck seat stops being stuck once it has a card to play again: another seat
        # built the foundation its card needs, or put a card on its Nerts pile.
        if s.stuck and has_card_play(after, other):
            seats[other] = s._replace(stuck=False)
            after = after._replace(seats=tuple(seats))
    return after


def declare_gone(state: GameState, seat_no: int) -> GameState:
    """A seat all of whose players have left the round by agreement (PROTOCOL.md 13) is
    frozen as it lies and counts as stuck whatever it could still play, so the others can
    still end the round by all being stuck. (Added for the replicated table.)"""
    seat = state.seats[seat_no]
    if seat.stuck or state.ended_by is not None:
        return state
    return _all_stuck_check(_with_seat(state, seat_no, seat._replace(stuck=True)))


def _all_stuck_check(state: GameState) -> GameState:
    if not all(s.stuck for s in state.seats):
        return state
    if state.rules.stuck_ends_round or (state.rotations and not state.progress):
        return state._replace(ended_by=ENDED_STALEMATE)
    seats = []
    for s in state.seats:
        # The Finnish/Lao text: the remaining stock goes (face down) on top of the waste,
        # the whole pile is turned over, then its top card goes to the bottom. Turning it
        # over puts the waste first, in the order it was turned, and the remaining stock
        # after it, upside down.
        stock = s.waste + s.stock[::-1]
        if len(stock) > 1:
            stock = stock[1:] + stock[:1]
        seats.append(s._replace(stock=stock, waste=(), stuck=False))
    return state._replace(seats=tuple(seats), rotations=state.rotations + 1, progress=False)


def play(state: GameState, move: Move, *, in_the_air: bool = False) -> GameState:
    """`apply` for callers that expect a legal move: raises `IllegalMoveError` otherwise."""
    result = apply(state, move, in_the_air=in_the_air)
    if isinstance(result, Rejection):
        raise IllegalMoveError(result)
    return result


def reveals_needed(state: GameState, move: Move) -> tuple[int, ...]:
    """The slots `move` would turn face up (empty if none)."""
    if not 0 <= move.seat < len(state.seats):
        raise NertsError(f"there is no seat {move.seat} at this table")
    seat = state.seats[move.seat]
    if move.action == TURN:
        return seat.stock[: state.rules.draw]
    if (
        move.action == PLAY
        and move.source == FROM_NERTS
        and len(seat.nerts_up) == 1
        and seat.nerts_hidden
    ):
        return (seat.nerts_hidden[-1],)
    return ()


def complete(state: GameState, move: Move) -> Move:
    """`move` naming the cards it turns up, from what this view knows (an author's view)."""
    slots = reveals_needed(state, move)
    if not slots or move.reveals:
        return move
    cards = []
    for slot in slots:
        if slot == UNKNOWN:
            raise NertsError(f"this view cannot know the card that {move} turns up")
        cards.append(slot if slot >= 0 else slot_card(slot))
    return move._replace(reveals=tuple(cards))


def redact_seat(state: GameState, seat_no: int) -> GameState:
    """Forget what this view privately knows about one seat's face-down cards."""
    return _with_seat(state, seat_no, forget_private(state.seats[seat_no]))
