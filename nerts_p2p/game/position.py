"""A whole public state as one line of text (what FEN is to chess), and its hash.

    nerts1 <rules> <status> <foundations> <seat 0> <seat 1> ...

- rules: the options that differ from the defaults, ``draw=1;jokers=2`` (``-`` if none).
- status: ``play``, ``nerts@S`` (seat S called) or ``stalemate``, then ``/R/P``: all-stuck
  rotations so far and whether a card moved since the last one (1 or 0).
- foundations: ``-``, or piles separated by ``,``, each its cards bottom to top joined by
  ``.`` with owners (``AH@0.2H@1``); piles are listed in order of their base card.
- a seat: ``hidden:up/work/stock/waste/flag``. Card lists join cards with ``.`` and are
  ``-`` when empty; work piles are separated by ``,``; face-down slots are ``?`` (a run of
  N unknown slots is ``?N``) or a card once its identity is public; ``flag`` is ``s`` when
  the seat has declared itself stuck, else ``-``. Cards without ``@`` belong to the seat.

Private knowledge is never written: a view that knows face-down cards writes ``?``, so
`state_hash` is equal on every peer that folded the same ops.
"""

from __future__ import annotations

import hashlib

from nerts_p2p.game.cards import CARD_MASK, card_text, face_of, owner_of, parse_card
from nerts_p2p.game.errors import NertsError, NotationError
from nerts_p2p.game.fit import has_card_play
from nerts_p2p.game.rules import parse_rule_options, rule_options_text
from nerts_p2p.game.state import (
    ENDED_NERTS,
    ENDED_STALEMATE,
    UNKNOWN,
    Foundation,
    GameState,
    SeatState,
    index_wants,
    seen_mask,
)

MAGIC = "nerts1"


def _cards(entries: tuple[int, ...], owner: int) -> str:
    return ".".join(card_text(e, default_owner=owner) for e in entries) or "-"


def _slots(slots: tuple[int, ...], owner: int) -> str:
    parts: list[str] = []
    run = 0
    for slot in slots:
        if slot < 0:
            run += 1
            continue
        if run:
            parts.append(f"?{run}")
            run = 0
        parts.append(card_text(slot, default_owner=owner))
    if run:
        parts.append(f"?{run}")
    return ".".join(parts) or "-"


#: Texts of parts of states written lately, by the identity of the immutable part: a move
#: changes one seat (and perhaps the foundations), and every peer hashes its state for its
#: heartbeats and for each heartbeat that claims the same ops, so most parts were written
#: for an earlier state already. Each entry keeps its part alive, so an id is never reused
#: while it is here; cleared when full.
_written: dict[int, tuple[object, int, str]] = {}
_WRITTEN_MAX = 512


def _remembered(part: object, index: int) -> str | None:
    hit = _written.get(id(part))
    return hit[2] if hit is not None and hit[0] is part and hit[1] == index else None


def _remember(part: object, index: int, text: str) -> str:
    if len(_written) >= _WRITTEN_MAX:
        _written.clear()
    _written[id(part)] = (part, index, text)
    return text


def _seat_text(s: SeatState, i: int) -> str:
    text = _remembered(s, i)
    if text is None:
        text = _remember(
            s,
            i,
            f"{_slots(s.nerts_hidden, i)}:{_cards(s.nerts_up, i)}"
            f"/{','.join(_cards(p, i) for p in s.work)}"
            f"/{_slots(s.stock, i)}/{_cards(s.waste, i)}/{'s' if s.stuck else '-'}",
        )
    return text


def _pile_text(pile: Foundation) -> str:
    text = _remembered(pile, -1)
    if text is None:
        text = _remember(pile, -1, ".".join(card_text(e) for e in pile.cards))
    return text


def _foundations_text(foundations: dict[int, Foundation]) -> str:
    # By pile, not by the dict: a dict could be changed in place, a Foundation cannot.
    return ",".join(_pile_text(foundations[base]) for base in sorted(foundations)) or "-"


def position_text(state: GameState) -> str:
    if state.ended_by == ENDED_NERTS:
        phase = f"nerts@{state.called_by}"
    elif state.ended_by == ENDED_STALEMATE:
        phase = "stalemate"
    else:
        phase = "play"
    status = f"{phase}/{state.rotations}/{int(state.progress)}"
    foundations = _foundations_text(state.foundations)
    seats = [_seat_text(s, i) for i, s in enumerate(state.seats)]
    return " ".join([MAGIC, rule_options_text(state.rules), status, foundations, *seats])


def state_digest(state: GameState) -> bytes:
    """16 bytes that are equal on every machine for equal public states."""
    return hashlib.sha256(position_text(state).encode()).digest()[:16]


def state_hash(state: GameState) -> str:
    return state_digest(state).hex()


def _is_number(text: str) -> bool:
    # str.isdigit() also accepts digits such as "²" that int() cannot read.
    return text.isascii() and text.isdigit()


def _parse_cards(text: str, owner: int | None, what: str) -> tuple[int, ...]:
    if text == "-":
        return ()
    if not text:
        raise NotationError(f"{what} is blank: write - for an empty pile")
    return tuple(parse_card(t, default_owner=owner) for t in text.split("."))


def _parse_slots(text: str, owner: int, what: str) -> tuple[int, ...]:
    if text == "-":
        return ()
    slots: list[int] = []
    for token in text.split("."):
        if token.startswith("?"):
            count = token[1:] or "1"
            if not _is_number(count) or not 0 < int(count) <= 64:
                raise NotationError(f"{what}: {token!r} is not a run of unknown cards like ?12")
            slots.extend([UNKNOWN] * int(count))
        else:
            slots.append(parse_card(token, default_owner=owner))
    return tuple(slots)


def parse_position(text: str) -> GameState:
    """Read a line written by `position_text`; raises `NotationError` saying what is wrong."""
    fields = text.split()
    if len(fields) < 6 or fields[0] != MAGIC:
        raise NotationError(
            f"a position starts with {MAGIC!r}, then rules, status, foundations and at least "
            "two seats, separated by spaces"
        )
    try:
        rules = parse_rule_options(fields[1])
    except NertsError as exc:
        raise NotationError(f"position rules: {exc}") from exc
    seat_fields = fields[4:]
    if len(seat_fields) != rules.seats:
        raise NotationError(
            f"the rules say {rules.seats} seats but the position has {len(seat_fields)}"
        )
    status = fields[2].split("/")
    if len(status) != 3 or not _is_number(status[1]) or status[2] not in ("0", "1"):
        raise NotationError(f"status {fields[2]!r} must look like play/0/0")
    ended_by: str | None = None
    called_by: int | None = None
    if status[0] == "stalemate":
        ended_by = ENDED_STALEMATE
    elif status[0].startswith("nerts@") and _is_number(status[0][6:]):
        ended_by, called_by = ENDED_NERTS, int(status[0][6:])
        if called_by >= rules.seats:
            raise NotationError(f"seat {called_by} cannot have called: there is no such seat")
    elif status[0] != "play":
        raise NotationError(f"status {status[0]!r} must be play, nerts@S or stalemate")
    foundations: dict[int, Foundation] = {}
    if fields[3] != "-":
        for pile_text in fields[3].split(","):
            # Foundation cards always name their owner: None makes a card without @ an error.
            cards = _parse_cards(pile_text, None, "a foundation") if pile_text else ()
            faces = [face_of(c) for c in cards]
            if not cards or any(f >= 52 for f in faces):
                raise NotationError(f"foundation {pile_text!r}: every card needs an identity")
            suit = faces[0] // 13
            if faces != [suit * 13 + r for r in range(len(faces))]:
                raise NotationError(
                    f"foundation {pile_text!r} must run from the ace up in one suit"
                )
            base = cards[0] & CARD_MASK
            foundations[base] = Foundation(base, suit, cards)
    seats: list[SeatState] = []
    for i, seat_text in enumerate(seat_fields):
        parts = seat_text.split("/")
        if len(parts) != 5 or ":" not in parts[0] or parts[4] not in ("s", "-"):
            raise NotationError(f"seat {i}: {seat_text!r} must be hidden:up/work/stock/waste/flag")
        hidden_text, _, up_text = parts[0].partition(":")
        work = tuple(_parse_cards(p, i, f"seat {i} work pile") for p in parts[1].split(","))
        if len(work) != rules.work_piles:
            raise NotationError(
                f"seat {i} has {len(work)} work piles; the rules say {rules.work_piles}"
            )
        hidden = _parse_slots(hidden_text, i, f"seat {i} Nerts pile")
        up = _parse_cards(up_text, i, f"seat {i} Nerts pile")
        if hidden and not up:
            raise NotationError(f"seat {i}: a Nerts pile with face-down cards shows its top")
        seats.append(
            SeatState(
                hidden,
                up,
                work,
                _parse_slots(parts[2], i, f"seat {i} stock"),
                _parse_cards(parts[3], i, f"seat {i} waste"),
                0,
                parts[4] == "s",
            )
        )
    seats_t = tuple(seats)
    seats_t = tuple(
        s._replace(seen=seen_mask(seats_t, foundations, i)) for i, s in enumerate(seats_t)
    )
    state = GameState(
        rules,
        seats_t,
        foundations,
        index_wants(foundations),
        ended_by,
        called_by,
        int(status[1]),
        status[2] == "1",
    )
    _check_conservation(state)
    for i, s in enumerate(seats_t):
        # The engine lifts a stuck flag as soon as the seat has a card to play, so no game
        # reaches such a position.
        if s.stuck and has_card_play(state, i):
            raise NotationError(f"seat {i} is marked stuck (s) but still has a card to play")
    return state


def _check_conservation(state: GameState) -> None:
    """Every seat's deck must be accounted for exactly once."""
    rules = state.rules
    # The per-seat counts below only look at the seats' own decks: a card of a seat the
    # table does not have would otherwise slip through.
    everywhere = [
        e
        for s in state.seats
        for pile in (s.nerts_hidden, s.nerts_up, s.stock, s.waste, *s.work)
        for e in pile
        if e >= 0
    ]
    everywhere.extend(e for f in state.foundations.values() for e in f.cards)
    for entry in everywhere:
        if owner_of(entry) >= rules.seats:
            raise NotationError(
                f"{card_text(entry)} belongs to seat {owner_of(entry)}, but the "
                f"table has seats 0..{rules.seats - 1}"
            )
    for seat in range(rules.seats):
        known: list[int] = []
        unknown = 0
        for i, s in enumerate(state.seats):
            piles = (s.nerts_up, s.waste, *s.work) + (
                (s.nerts_hidden, s.stock) if i == seat else ()
            )
            for pile in piles:
                for entry in pile:
                    if entry < 0:
                        unknown += 1
                    elif owner_of(entry) == seat:
                        known.append(entry & 63)
            if i != seat:
                for slot in s.nerts_hidden + s.stock:
                    if slot >= 0 and owner_of(slot) == seat:
                        raise NotationError(f"seat {i}'s face-down piles hold seat {seat}'s card")
                    if slot >= 0 and owner_of(slot) != i:
                        raise NotationError(f"seat {i}'s face-down piles hold another's card")
        for foundation in state.foundations.values():
            known.extend(e & 63 for e in foundation.cards if owner_of(e) == seat)
        if len(set(known)) != len(known):
            raise NotationError(f"seat {seat}'s cards appear more than once")
        if any(index >= rules.deck_size for index in known):
            raise NotationError(
                f"seat {seat} has a joker, but the rules play with {rules.jokers} joker(s)"
            )
        if len(known) + unknown != rules.deck_size:
            raise NotationError(
                f"seat {seat}'s cards add up to {len(known) + unknown}, not {rules.deck_size}"
            )
