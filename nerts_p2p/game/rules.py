"""Every variant of RULES.md as a field of one frozen value.

The `Rules` travel in a round's start message, so every peer plays the same variant;
`to_dict` / `from_dict` give that message a plain, checked form.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nerts_p2p.game.errors import RulesError

#: The Russian/German text: builds on Nerts piles, Aces first, emptying the pile ends the round.
GERMAN: dict[str, bool] = {"nerts_builds": True, "aces_first": True, "must_call": True}
#: The Norwegian two-deck text: nobody can move, the round ends (no rotation first); an
#: empty work pile takes only the Nerts top or the waste top.
NORWEGIAN: dict[str, bool] = {"stuck_ends_round": True, "fill_from_work": False}
MIN_SEATS = 2
MAX_SEATS = 8


@dataclass(frozen=True, slots=True)
class Rules:
    seats: int = 4
    #: Two players share each seat (one deck, one layout); RULES.md offers it from 6 players.
    partnerships: bool = False
    nerts_size: int = 13
    work_piles: int = 4
    #: Cards turned from the stock at a time: 3 or 1.
    draw: int = 3
    #: Turning the waste into a new stock moves its top card to the bottom.
    recycle_rotates: bool = True
    #: Emptying the Nerts pile ends the round at once (the German text).
    must_call: bool = False
    target: int = 100
    caller_bonus: int = 0
    #: Points lost per card left in a seat's Nerts pile.
    nerts_penalty: int = 2
    jokers: int = 0
    #: Any seat may build on another seat's Nerts top, same suit, one rank up or down.
    nerts_builds: bool = False
    #: An exposed Ace must go to the centre before any other move.
    aces_first: bool = False
    #: A Nerts or waste card may be slid under a work pile while a work pile is empty.
    slide_under: bool = True
    #: When every seat is stuck the round ends at once, without rotating the stocks first
    #: (the Norwegian text).
    stuck_ends_round: bool = False
    #: An empty work pile may take cards from another work pile. Off: only the Nerts top or
    #: the waste top may fill it (the Norwegian text).
    fill_from_work: bool = True
    #: The match also ends after this many rounds (0: no limit; the German text).
    match_rounds: int = 0
    #: The match also ends once the first total leads the last by at least this many points
    #: (0: no such end; the German text).
    match_spread: int = 0

    def __post_init__(self) -> None:
        def need(ok: bool, message: str) -> None:
            if not ok:
                raise RulesError(message)

        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            expected = bool if field.type in ("bool", bool) else int
            # bool is an int subclass; a rule that wants a number must not take True.
            if type(value) is not expected:
                raise RulesError(f"rule {field.name} must be {expected.__name__}, got {value!r}")
        need(MIN_SEATS <= self.seats <= MAX_SEATS, f"seats must be 2..8, got {self.seats}")
        need(1 <= self.nerts_size <= 26, f"nerts_size must be 1..26, got {self.nerts_size}")
        need(1 <= self.work_piles <= 6, f"work_piles must be 1..6, got {self.work_piles}")
        need(self.draw in (1, 3), f"draw must be 1 or 3, got {self.draw}")
        need(1 <= self.target <= 10_000, f"target must be 1..10000, got {self.target}")
        need(0 <= self.caller_bonus <= 100, f"caller_bonus must be 0..100, got {self.caller_bonus}")
        need(
            self.nerts_penalty in (1, 2), f"nerts_penalty must be 1 or 2, got {self.nerts_penalty}"
        )
        need(0 <= self.jokers <= 2, f"jokers must be 0, 1 or 2, got {self.jokers}")
        need(
            0 <= self.match_rounds <= 1000,
            f"match_rounds must be 0 (no limit) or 1..1000, got {self.match_rounds}",
        )
        need(
            0 <= self.match_spread <= 10_000,
            f"match_spread must be 0 (off) or 1..10000, got {self.match_spread}",
        )

    @property
    def deck_size(self) -> int:
        return 52 + self.jokers

    @property
    def players(self) -> int:
        return self.seats * 2 if self.partnerships else self.seats

    @property
    def stock_size(self) -> int:
        return self.deck_size - self.nerts_size - self.work_piles

    @classmethod
    def german(cls, seats: int = 4) -> Rules:
        """The Russian/German text (`GERMAN`)."""
        return cls(seats=seats, **GERMAN)

    @classmethod
    def norwegian(cls, seats: int = 2) -> Rules:
        """The Norwegian two-deck text (`NORWEGIAN`), for 2 players or 2 teams."""
        return cls(seats=seats, **NORWEGIAN)

    def to_dict(self) -> dict[str, int | bool]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rules:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise RulesError(f"unknown rule option(s): {', '.join(unknown)}")
        try:
            return cls(**dict(data))
        except TypeError as exc:  # pragma: no cover - guarded by the name check above
            raise RulesError(str(exc)) from exc

    def changed(self) -> dict[str, int | bool]:
        """Only the options that differ from the defaults (for compact text)."""
        default = Rules()
        return {k: v for k, v in self.to_dict().items() if getattr(default, k) != v}


def parse_rule_options(text: str) -> Rules:
    """Read ``seats=4;draw=1;jokers=2`` (``-`` for all defaults)."""
    if text in ("", "-"):
        return Rules()
    values: dict[str, int | bool] = {}
    for part in text.split(";"):
        name, eq, raw = part.partition("=")
        if not eq:
            raise RulesError(f"rule option {part!r} needs a value, like {part}=1")
        if raw in ("true", "false"):
            values[name] = raw == "true"
        elif raw.isascii() and raw.removeprefix("-").isdigit():
            values[name] = int(raw)
        else:
            raise RulesError(f"rule option {name}: {raw!r} is neither a number nor true/false")
    field_types = {f.name: f.type for f in dataclasses.fields(Rules)}
    for name, value in list(values.items()):
        if field_types.get(name) in ("bool", bool) and type(value) is int and value in (0, 1):
            values[name] = bool(value)
    return Rules.from_dict(values)


@functools.lru_cache(maxsize=64)  # every state's position text starts with it
def rule_options_text(rules: Rules) -> str:
    changed = rules.changed()
    if not changed:
        return "-"
    parts = []
    for name in sorted(changed):
        value = changed[name]
        parts.append(f"{name}={str(value).lower() if isinstance(value, bool) else value}")
    return ";".join(parts)
