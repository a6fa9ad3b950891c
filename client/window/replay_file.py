"""Saved matches: the replay file format, its writer and its loader.

A replay holds only public information: the rules, the names, and per round the cards each
seat showed at the deal and every move in the replicated fold order, with the cards it
turned up (moves carry their reveals), the seconds since the round began, and whether it
counted as "in the air" after the Nerts call. Folding the moves through the engine from
the public start rebuilds every position of the round on any machine; the recorded result
is shown at the end of each round. The loader checks everything and says what is wrong in
plain words (`ReplayError`), so a corrupt file never crashes the window.

    {"format": "nerts-p2p-replay", "version": 1, "rules": {...}, "names": [...],
     "rounds": [{"round": 1, "shown": [["5H", "KS", ...], ...],
                 "moves": [[0.82, "1 AS w2-f", false], ...],
                 "result": {"scores": [[foundation_cards, nerts_left, called, score], ...],
                            "totals": [...], "cheaters": [...], "ended_by": "nerts",
                            "called_by": 2}}]}
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nerts_p2p.game.cards import card_text, parse_card
from nerts_p2p.game.engine import apply, public_start
from nerts_p2p.game.errors import NertsError, Rejection
from nerts_p2p.game.moves import Move, move_text, parse_move
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.scoring import SeatScore
from nerts_p2p.game.state import GameState

FORMAT = "nerts-p2p-replay"
VERSION = 1
MAX_BYTES = 16 * 1024 * 1024


class ReplayError(Exception):
    """A replay file that cannot be played back; the message says why."""


@dataclass(frozen=True)
class ReplayMove:
    at: float  # seconds since the round began
    move: Move
    in_the_air: bool


@dataclass(frozen=True)
class ReplayResult:
    scores: tuple[SeatScore, ...]
    totals: tuple[int, ...]
    cheaters: frozenset[int]
    ended_by: str
    called_by: int | None


@dataclass(frozen=True)
class ReplayRound:
    number: int
    shown: tuple[tuple[int, ...], ...]  # per seat: Nerts top, then work cards
    moves: tuple[ReplayMove, ...]
    result: ReplayResult | None
    #: The round's own seating where it differs from the match's (a network table whose
    #: players came and went between rounds): its rules (seats) and names per seat.
    seated: Rules | None = None
    names: tuple[str, ...] | None = None

    def start_state(self, rules: Rules) -> GameState:
        return public_start(self.seated or rules, self.shown)

    def states(self, rules: Rules) -> list[GameState]:
        """states[i]: the position after the first i moves (a rejected move changes nothing,
        as in the live fold)."""
        state = self.start_state(rules)
        out = [state]
        for step in self.moves:
            result = apply(state, step.move, in_the_air=step.in_the_air)
            if not isinstance(result, Rejection):
                state = result
            out.append(state)
        return out


@dataclass(frozen=True)
class Replay:
    rules: Rules
    names: tuple[str, ...]
    rounds: tuple[ReplayRound, ...]


# --- writing --------------------------------------------------------------------------------


def replay_to_json(replay: Replay) -> str:
    rounds = []
    for rnd in replay.rounds:
        entry: dict[str, Any] = {
            "round": rnd.number,
            "shown": [
                [card_text(c, default_owner=s) for c in cards] for s, cards in enumerate(rnd.shown)
            ],
            "moves": [[round(m.at, 3), move_text(m.move), m.in_the_air] for m in rnd.moves],
        }
        if rnd.result is not None:
            r = rnd.result
            entry["result"] = {
                "scores": [[s.foundation_cards, s.nerts_left, s.called, s.score] for s in r.scores],
                "totals": list(r.totals),
                "cheaters": sorted(r.cheaters),
                "ended_by": r.ended_by,
                "called_by": r.called_by,
            }
        rounds.append(entry)
    document = {
        "format": FORMAT,
        "version": VERSION,
        "rules": replay.rules.to_dict(),
        "names": list(replay.names),
        "rounds": rounds,
    }
    return json.dumps(document, indent=None, separators=(",", ":"))


def save_replay(replay: Replay, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(replay_to_json(replay), encoding="utf-8")
    tmp.replace(path)


# --- reading --------------------------------------------------------------------------------


def _need(ok: bool, message: str) -> None:
    if not ok:
        raise ReplayError(message)


def _int(value: object, what: str) -> int:
    _need(type(value) is int, f"{what} must be a whole number")
    assert isinstance(value, int)
    return value


def _result(data: object, seats: int, where: str) -> ReplayResult:
    _need(isinstance(data, dict), f"{where}: the result must be an object")
    assert isinstance(data, dict)
    raw_scores = data.get("scores")
    _need(
        isinstance(raw_scores, list) and len(raw_scores) == seats,
        f"{where}: the result needs one score per seat ({seats})",
    )
    assert isinstance(raw_scores, list)
    scores = []
    for seat, row in enumerate(raw_scores):
        _need(
            isinstance(row, list) and len(row) == 4 and isinstance(row[2], bool),
            f"{where}: seat {seat}'s score must be [foundation cards, Nerts left, called, score]",
        )
        scores.append(
            SeatScore(
                seat,
                _int(row[0], f"{where}: foundation cards"),
                _int(row[1], f"{where}: Nerts cards left"),
                row[2],
                _int(row[3], f"{where}: score"),
            )
        )
    totals = data.get("totals")
    _need(
        isinstance(totals, list) and len(totals) == seats,
        f"{where}: the result needs one total per seat",
    )
    assert isinstance(totals, list)
    cheaters = data.get("cheaters", [])
    _need(
        isinstance(cheaters, list) and all(type(c) is int and 0 <= c < seats for c in cheaters),
        f"{where}: cheaters must be a list of seat numbers",
    )
    called_by = data.get("called_by")
    _need(
        called_by is None or (type(called_by) is int and 0 <= called_by < seats),
        f"{where}: called_by must be a seat number or null",
    )
    ended_by = data.get("ended_by", "")
    _need(isinstance(ended_by, str), f"{where}: ended_by must be text")
    return ReplayResult(
        tuple(scores),
        tuple(_int(t, f"{where}: a total") for t in totals),
        frozenset(cheaters),
        str(ended_by),
        called_by,
    )


def _round(data: object, rules: Rules, index: int) -> ReplayRound:
    where = f"round entry {index + 1}"
    _need(isinstance(data, dict), f"{where} must be an object")
    assert isinstance(data, dict)
    number = _int(data.get("round"), f"{where}: round")
    shown_raw = data.get("shown")
    _need(
        isinstance(shown_raw, list) and len(shown_raw) == rules.seats,
        f"{where}: 'shown' needs the dealt face-up cards of each of the {rules.seats} seats",
    )
    assert isinstance(shown_raw, list)
    shown = []
    for seat, cards in enumerate(shown_raw):
        _need(
            isinstance(cards, list) and all(isinstance(c, str) for c in cards),
            f"{where}: seat {seat}'s shown cards must be a list of cards like '5H'",
        )
        try:
            shown.append(tuple(parse_card(c, default_owner=seat) for c in cards))
        except NertsError as exc:
            raise ReplayError(f"{where}: {exc}") from exc
    moves_raw = data.get("moves")
    _need(isinstance(moves_raw, list), f"{where}: 'moves' must be a list")
    assert isinstance(moves_raw, list)
    moves = []
    last = 0.0
    for n, row in enumerate(moves_raw):
        ok = (
            isinstance(row, list)
            and len(row) == 3
            and isinstance(row[0], int | float)
            and not isinstance(row[0], bool)
            and isinstance(row[1], str)
            and isinstance(row[2], bool)
        )
        _need(ok, f"{where}, move {n + 1}: expected [seconds, move, in the air]")
        try:
            move = parse_move(row[1])
        except NertsError as exc:
            raise ReplayError(f"{where}, move {n + 1}: {exc}") from exc
        _need(move.seat < rules.seats, f"{where}, move {n + 1}: there is no seat {move.seat}")
        at = max(last, float(row[0]))  # times never run backwards on screen
        last = at
        moves.append(ReplayMove(at, move, row[2]))
    result = _result(data["result"], rules.seats, where) if "result" in data else None
    rnd = ReplayRound(number, tuple(shown), tuple(moves), result)
    try:
        rnd.start_state(rules)
    except NertsError as exc:
        raise ReplayError(f"{where}: the deal cannot be set out: {exc}") from exc
    return rnd


def replay_from_json(text: str) -> Replay:
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ReplayError(f"this is not a replay file (not JSON: {exc})") from exc
    _need(isinstance(data, dict) and data.get("format") == FORMAT, "this is not a nerts-p2p replay")
    assert isinstance(data, dict)
    _need(
        data.get("version") == VERSION,
        f"replay version {data.get('version')!r} is not one this program reads ({VERSION})",
    )
    rules_raw = data.get("rules")
    _need(isinstance(rules_raw, dict), "the replay's rules must be an object")
    assert isinstance(rules_raw, dict)
    try:
        rules = Rules.from_dict(rules_raw)
    except (NertsError, TypeError) as exc:
        raise ReplayError(f"the replay's rules are not valid: {exc}") from exc
    names = data.get("names")
    _need(
        isinstance(names, list)
        and len(names) == rules.seats
        and all(isinstance(n, str) for n in names),
        f"the replay needs a name for each of its {rules.seats} seats",
    )
    assert isinstance(names, list)
    rounds_raw = data.get("rounds")
    _need(isinstance(rounds_raw, list) and bool(rounds_raw), "the replay has no rounds")
    assert isinstance(rounds_raw, list)
    rounds = tuple(_round(r, rules, i) for i, r in enumerate(rounds_raw))
    return Replay(rules, tuple(str(n)[:40] for n in names), rounds)


def load_replay(path: Path) -> Replay:
    try:
        size = path.stat().st_size
        _need(size <= MAX_BYTES, f"{path.name} is too large to be a replay ({size} bytes)")
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReplayError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ReplayError(f"{path.name} is not a replay file (not text)") from exc
    return replay_from_json(text)
