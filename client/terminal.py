"""A practice game against bots in the terminal (until the window exists, `make play`).

`PracticeSession` is the whole game without I/O: feed it typed lines and the time, read
back what to show. `practice` is the thin shell around it: a real clock, `select` on stdin,
and printing. Without a terminal (a pipe, CI) it lets a bot play your seat and prints the
round as it goes, so `make play` always shows a round being played.
"""

from __future__ import annotations

import os
import random
import select
import sys
import time
from dataclasses import dataclass, field

from nerts_p2p.game.bots import BotLevel, BotPlayer
from nerts_p2p.game.cards import card_text
from nerts_p2p.game.deck import seat_seed
from nerts_p2p.game.engine import apply, omniscient_start
from nerts_p2p.game.errors import NertsError, Rejection
from nerts_p2p.game.legal import legal_moves
from nerts_p2p.game.moves import (
    FROM_NERTS,
    FROM_WASTE,
    NERTS,
    PLAY,
    RECYCLE,
    ROTATE,
    SIMPLE_ACTIONS,
    STUCK,
    TO_FOUNDATION,
    TO_NERTS,
    TO_UNDER,
    TO_WORK,
    TURN,
    Move,
    parse_move,
)
from nerts_p2p.game.rules import Rules
from nerts_p2p.game.scoring import MatchScore, score_round
from nerts_p2p.game.state import GameState

HELP = """\
Commands (you are seat 0; the bots play as you type):
  t             turn the stock (turns the waste over when the stock is empty)
  n f   n 2     your Nerts top to a foundation / to work pile 2
  d f   d 2     your waste top to a foundation / to work pile 2
  2 f           the exposed card of work pile 2 to a foundation
  2 3           cards from work pile 2 onto work pile 3 (as many as fit)
  n u2          slide the Nerts top under work pile 2 (needs an empty work pile)
  n >1          build on seat 1's Nerts pile (when the table plays nerts_builds)
  stuck         you have no card to play (refused while you have one)
  rotate        while stuck: your top stock card to the bottom
  nerts  ?  q   call Nerts / help / quit      or a full move such as: 0 5H n-w2
"""


def resolve_command(state: GameState, seat: int, text: str) -> Move | str:
    """A typed command as a move of `seat`, or a sentence saying why it is not one."""
    words = text.strip().lower().split()
    if not words:
        return "type a command; ? shows them all"
    simple = {"t": TURN, "turn": TURN, "stuck": STUCK, "rotate": ROTATE, "nerts": NERTS}
    if len(words) == 1 and words[0] in simple:
        action = simple[words[0]]
        if action == TURN and not state.seats[seat].stock:
            action = RECYCLE
        return Move(seat, action)
    full_notation = len(words) >= 3 or (len(words) == 2 and words[1] in SIMPLE_ACTIONS)
    if words[0].isdigit() and full_notation:
        try:
            move = parse_move(text)
        except NertsError as exc:
            return str(exc)
        return move if move.seat == seat else f"you play seat {seat}"
    if len(words) != 2:
        return "write a source and a destination, like 'n f' or '2 3' (? for help)"
    src_word, dst_word = words
    sources = {"n": FROM_NERTS, "d": FROM_WASTE}
    if src_word in sources:
        source = sources[src_word]
    elif src_word.isdigit():
        source = int(src_word)
    else:
        return f"{src_word!r} is not a pile: use n (Nerts), d (waste) or a work pile number"
    if dst_word == "f":
        kind, dest = TO_FOUNDATION, None
    elif dst_word.isdigit():
        kind, dest = TO_WORK, int(dst_word)
    elif dst_word[:1] == "u" and dst_word[1:].isdigit():
        kind, dest = TO_UNDER, int(dst_word[1:])
    elif dst_word[:1] == ">" and dst_word[1:].isdigit():
        kind, dest = TO_NERTS, int(dst_word[1:])
    else:
        return f"{dst_word!r} is not a destination: use f, a work pile number, uN or >SEAT"
    piles = len(state.seats[seat].work)
    named_piles = [source] + ([dest] if kind in (TO_WORK, TO_UNDER) and dest is not None else [])
    for number in named_piles:
        if number >= piles:
            return f"there is no work pile {number}: your work piles are 0 to {piles - 1}"
    matching = [
        m
        for m in legal_moves(state, seat)
        if m.action == PLAY
        and m.source == source
        and m.dest_kind == kind
        and (dest is None or m.dest == dest)
    ]
    if not matching:
        return "that move is not possible now"
    # Work-to-work: legal_moves lists stacks from the top down; the last is the largest.
    return matching[-1] if kind == TO_WORK and source >= 0 else matching[0]


def _cards(entries: tuple[int, ...], seat: int) -> str:
    return " ".join(card_text(e, default_owner=seat) for e in entries) or "--"


def render(state: GameState, seat: int, names: list[str]) -> str:
    lines = []
    tops = [
        card_text(f.cards[-1]) + ("*" if f.complete else "")
        for _, f in sorted(state.foundations.items())
    ]
    lines.append("Foundations: " + (" ".join(tops) or "(none yet)"))
    for i, s in enumerate(state.seats):
        if i == seat:
            continue
        work = " | ".join(_cards(p[-2:], i) for p in s.work)
        top = card_text(s.nerts_top, default_owner=i) if s.nerts_top is not None else "--"
        lines.append(
            f"  {names[i]:<18} Nerts {s.nerts_count:>2} [{top}]  work {work}  "
            f"waste {card_text(s.waste[-1], default_owner=i) if s.waste else '--'}"
            f"{'  (stuck)' if s.stuck else ''}"
        )
    me = state.seats[seat]
    top = card_text(me.nerts_top, default_owner=seat) if me.nerts_top is not None else "--"
    lines.append(f"You (seat {seat}): Nerts pile {me.nerts_count} cards, top [{top}]")
    for k, pile in enumerate(me.work):
        lines.append(f"  work {k}: {_cards(pile, seat)}")
    lines.append(
        f"  waste: {_cards(me.waste[-3:], seat)}   stock: {len(me.stock)} cards"
        f"{'   (you are stuck)' if me.stuck else ''}"
    )
    return "\n".join(lines)


@dataclass
class PracticeSession:
    """One practice round: you at seat 0, bots elsewhere, time passed in by the caller."""

    rules: Rules
    level: BotLevel
    seed: int
    round_number: int = 1
    state: GameState = field(init=False)
    bots: list[BotPlayer] = field(init=False)
    next_bot_time: list[float] = field(init=False)

    def __post_init__(self) -> None:
        self.start(0.0)

    def start(self, now: float) -> None:
        seeds = [seat_seed(self.seed, self.round_number, s) for s in range(self.rules.seats)]
        self.state = omniscient_start(self.rules, seeds)
        self.bots = [
            BotPlayer(self.level, s, random.Random(f"{self.seed}/{self.round_number}/{s}"))
            for s in range(1, self.rules.seats)
        ]
        self.next_bot_time = [now + 2.0 + bot.delay(None) for bot in self.bots]

    @property
    def names(self) -> list[str]:
        return ["you"] + [f"seat {b.seat} ({b.level.name})" for b in self.bots]

    def type_line(self, text: str) -> str:
        """Apply a typed command; returns what to tell the player ('' for a quiet success)."""
        if self.state.ended:
            return "the round is over"
        move = resolve_command(self.state, 0, text)
        if isinstance(move, str):
            return move
        result = apply(self.state, move)
        if isinstance(result, Rejection):
            return result.message
        self.state = result
        return ""

    def next_event_time(self) -> float:
        return min(self.next_bot_time) if self.next_bot_time else float("inf")

    def tick(self, now: float) -> list[str]:
        """Let every bot whose time has come make its move; returns notable events."""
        events = []
        for i, bot in enumerate(self.bots):
            while not self.state.ended and self.next_bot_time[i] <= now:
                move = bot.act(self.state)
                if move is not None:
                    result = apply(self.state, move)
                    if not isinstance(result, Rejection):
                        self.state = result
                        if move.action == PLAY and move.dest_kind == TO_FOUNDATION:
                            events.append(
                                f"{self.names[bot.seat]} played "
                                f"{card_text(move.card)} to a foundation"
                            )
                self.next_bot_time[i] += bot.delay(move)
        return events

    def result_text(self, match: MatchScore) -> str:
        scores = score_round(self.state)
        match.add_round(scores)
        how = (
            "Nerts! called by " + self.names[self.state.called_by]
            if self.state.called_by is not None
            else "everyone was stuck"
        )
        lines = [f"Round {self.round_number} over: {how}"]
        for s in scores:
            lines.append(
                f"  {self.names[s.seat]:<22} foundation cards {s.foundation_cards:>2}"
                f"  left in Nerts {s.nerts_left:>2}  score {s.score:+3d}"
                f"  total {match.totals[s.seat]:>4}"
            )
        return "\n".join(lines)


def _watch(rules: Rules, level: BotLevel, seed: int) -> int:
    from nerts_p2p.game.simulate import simulate_round

    seeds = [seat_seed(seed, 1, s) for s in range(rules.seats)]
    result = simulate_round(rules, seeds, [level] * rules.players, match_seed=seed, keep_log=True)
    print(
        f"No terminal to type in: a {level.name} bot plays your seat (seat 0) against "
        f"{rules.seats - 1} {level.name} bot(s). Practice is local: nothing goes on the network."
    )
    for at, move, ok in result.log:
        if ok and move.action == PLAY and move.dest_kind == TO_FOUNDATION:
            print(f"  {at:6.1f}s  seat {move.seat} plays {card_text(move.card)} to a foundation")
    match = MatchScore(rules)
    match.add_round(result.scores)
    state = result.state
    how = (
        f"Nerts! called by seat {state.called_by}"
        if state.called_by is not None
        else "everyone was stuck"
    )
    print(f"Round over after {result.moves} moves ({result.rejected} lost races): {how}")
    for s in result.scores:
        print(
            f"  seat {s.seat}: {s.foundation_cards} on foundations, {s.nerts_left} left in "
            f"Nerts pile, score {s.score:+d}"
        )
    return 0


def practice(rules: Rules, level: BotLevel, *, seed: int | None, interactive: bool | None) -> int:
    if seed is None:
        seed = int.from_bytes(os.urandom(4), "big")
    if interactive is None:
        interactive = sys.stdin.isatty() and sys.stdout.isatty()
    if rules.partnerships:
        raise NertsError("practice games seat one player per seat; drop --partnerships")
    if not interactive:
        return _watch(rules, level, seed)
    session = PracticeSession(rules, level, seed)
    match = MatchScore(rules)
    clock = time.monotonic
    origin = clock()
    message = "Ready... the bots start in two seconds. Type ? for help."
    while True:
        now = clock() - origin
        events = session.tick(now)
        print("\033[2J\033[H" + render(session.state, 0, session.names))
        for line in events[-3:] + ([message] if message else []):
            print(line)
        if session.state.ended:
            print(session.result_text(match))
            if match.finished:
                print(f"Match won by {session.names[match.winner or 0]}.")
                return 0
            if input("Another round? [Y/n] ").strip().lower().startswith("n"):
                return 0
            session.round_number += 1
            session.start(clock() - origin)
            message = ""
            continue
        print("> ", end="", flush=True)
        wait = max(0.05, session.next_event_time() - (clock() - origin))
        ready, _, _ = select.select([sys.stdin], [], [], wait)
        if not ready:
            message = ""
            continue
        line = sys.stdin.readline()
        if not line or line.strip() in ("q", "quit", "exit"):
            return 0
        if line.strip() in ("?", "help"):
            message = HELP
            continue
        message = session.type_line(line)
