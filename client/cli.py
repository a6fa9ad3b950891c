"""The `nerts-p2p` command. It lives in `client`, the top of the game's layers, because it
starts everything a user can reach: the engine's simulator, the practice game, benchmarks."""

from __future__ import annotations

import argparse
import errno
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from client import by_hand
from nerts_p2p.game.bots import LEVELS, BotLevel, level_named
from nerts_p2p.game.errors import NertsError
from nerts_p2p.game.rules import GERMAN, NORWEGIAN, Rules


def whole_number(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number in low..high, refused in plain words otherwise (a
    usage error, exit code 2)."""

    def parse(text: str) -> int:
        value = any_whole_number(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be {low}..{high}, got {value}")
        return value

    return parse


def any_whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None


if TYPE_CHECKING:
    from _typeshed import SupportsWrite

    from client.netplay import PeerOptions


def _add_rule_options(parser: argparse.ArgumentParser, count: str = "--players") -> None:
    """`count`: the command's option that says how many play (its players, not its seats,
    with --partnerships)."""
    # Ranges are checked by `Rules` itself, so its words and the CLI's never disagree; the
    # types here only turn non-numbers into usage errors.
    group = parser.add_argument_group("rule options (RULES.md variants)")
    group.add_argument("--nerts-size", type=any_whole_number, default=13)
    group.add_argument("--work-piles", type=any_whole_number, default=4)
    group.add_argument("--draw", type=int, choices=(1, 3), default=3)
    group.add_argument(
        "--no-recycle-rotates", action="store_true", help="turning the waste over keeps its order"
    )
    group.add_argument(
        "--must-call", action="store_true", help="emptying the Nerts pile ends the round at once"
    )
    group.add_argument("--target", type=any_whole_number, default=100)
    group.add_argument("--caller-bonus", type=any_whole_number, default=0)
    group.add_argument("--nerts-penalty", type=int, choices=(1, 2), default=2)
    group.add_argument("--jokers", type=int, choices=(0, 1, 2), default=0)
    group.add_argument(
        "--nerts-builds",
        action="store_true",
        help="build on other seats' Nerts piles (the German variant)",
    )
    group.add_argument(
        "--aces-first", action="store_true", help="an exposed Ace must go to the centre first"
    )
    group.add_argument("--no-slide-under", action="store_true")
    group.add_argument(
        "--stuck-ends-round",
        action="store_true",
        help="when nobody can move the round ends at once, without rotating the stocks",
    )
    group.add_argument(
        "--no-fill-from-work",
        action="store_true",
        help="an empty work pile takes only the Nerts top or the waste top",
    )
    group.add_argument(
        "--match-rounds",
        type=any_whole_number,
        default=0,
        help="the match also ends after this many rounds (0: no limit)",
    )
    group.add_argument(
        "--match-spread",
        type=any_whole_number,
        default=0,
        help="the match also ends once the first total leads the last by this much (0: off)",
    )
    group.add_argument(
        "--german",
        action="store_true",
        help="the German rules: --nerts-builds --aces-first --must-call",
    )
    group.add_argument(
        "--norwegian",
        action="store_true",
        help="the Norwegian rules: --stuck-ends-round --no-fill-from-work",
    )
    group.add_argument(
        "--partnerships",
        action="store_true",
        help=f"two players share each seat ({count} counts players)",
    )


def _rules_from(args: argparse.Namespace, players: int) -> Rules:
    if args.partnerships and players % 2:
        raise NertsError(f"partnerships need an even number of players, got {players}")
    preset = {**(GERMAN if args.german else {}), **(NORWEGIAN if args.norwegian else {})}
    return Rules(
        seats=players // 2 if args.partnerships else players,
        partnerships=args.partnerships,
        nerts_size=args.nerts_size,
        work_piles=args.work_piles,
        draw=args.draw,
        recycle_rotates=not args.no_recycle_rotates,
        must_call=args.must_call or preset.get("must_call", False),
        target=args.target,
        caller_bonus=args.caller_bonus,
        nerts_penalty=args.nerts_penalty,
        jokers=args.jokers,
        nerts_builds=args.nerts_builds or preset.get("nerts_builds", False),
        aces_first=args.aces_first or preset.get("aces_first", False),
        slide_under=not args.no_slide_under,
        stuck_ends_round=args.stuck_ends_round or preset.get("stuck_ends_round", False),
        fill_from_work=not args.no_fill_from_work and preset.get("fill_from_work", True),
        match_rounds=args.match_rounds,
        match_spread=args.match_spread,
    )


def _levels(text: str, players: int) -> list[BotLevel]:
    names = [part for part in text.split(",") if part]
    if len(names) == 1:
        names *= players
    if len(names) != players:
        raise NertsError(f"--bots names {len(names)} levels for {players} players")
    return [level_named(name) for name in names]


def _cmd_simulate(args: argparse.Namespace) -> int:
    from nerts_p2p.game.simulate import match_record, round_record, simulate_match

    rules = _rules_from(args, args.players)
    levels = _levels(args.bots, rules.players)
    match = None
    for result, match in simulate_match(rules, levels, seed=args.seed, max_rounds=args.rounds):
        record = round_record(result, match)
        if args.json:
            print(json.dumps(record, separators=(",", ":")))
        else:
            scores = "  ".join(
                f"seat {s.seat}: {s.score:+d} ({match.totals[s.seat]})" for s in result.scores
            )
            called = result.state.called_by
            print(
                f"round {result.round}: {result.ended_by}"
                f"{'' if called is None else f' by seat {called}'}, {result.moves} moves  {scores}"
            )
    if match is None:  # pragma: no cover - argparse allows only --rounds of 1 or more
        raise NertsError("no round was played")
    final = match_record(match)
    if args.json:
        print(json.dumps(final, separators=(",", ":")))
    else:
        winner = final["match_winner"]
        print(
            "match winner: "
            + (f"seat {winner}" if winner is not None else "none yet")
            + f"  totals {final['totals']}"
        )
    return 0


def _cmd_position(args: argparse.Namespace) -> int:
    from nerts_p2p.game.engine import apply
    from nerts_p2p.game.errors import Rejection
    from nerts_p2p.game.legal import legal_moves
    from nerts_p2p.game.moves import parse_move
    from nerts_p2p.game.position import parse_position, position_text, state_hash

    state = parse_position(args.position)
    if args.move is None:
        for seat in range(state.rules.seats):
            moves = legal_moves(state, seat)
            print(f"seat {seat}: " + (", ".join(str(m) for m in moves) or "no moves"))
        print(f"hash {state_hash(state)}")
        return 0
    result = apply(state, parse_move(args.move), in_the_air=args.in_the_air)
    if isinstance(result, Rejection):
        print(f"rejected ({result.reason}): {result.message}")
        return 1
    print(position_text(result))
    return 0


#: `bench --repeats` unless given: a run of `bench net` takes about 13 s (a round of four
#: player processes, its floor, an announcement, a catch-up), the others a fraction of it.
BENCH_REPEATS: Final = {"net": 5}
BENCH_REPEATS_ELSE: Final = 7


def _cmd_bench(args: argparse.Namespace) -> int:
    from tools.progress import ProgressLine

    if args.repeats is None:
        args.repeats = BENCH_REPEATS.get(args.what, BENCH_REPEATS_ELSE)
    progress = ProgressLine()  # on stderr, while it is a terminal
    if args.what == "engine":
        from tools.bench_engine import engine_benchmarks

        results = engine_benchmarks(repeats=args.repeats, progress=progress)
    elif args.what == "sync":
        from tools.bench_sync import sync_benchmarks

        results = sync_benchmarks(repeats=args.repeats, progress=progress)
    elif args.what == "net":
        from tools.bench_net import net_benchmarks

        results = net_benchmarks(repeats=args.repeats, progress=progress)
    elif args.what == "bots":
        from tools.bench_engine import bot_ladder

        ladder = bot_ladder(rounds=args.rounds, progress=progress)
        if args.json:
            print(json.dumps(ladder, indent=2))
            return 0
        for name, r in ladder.items():
            print(
                f"{name:20s} wins {r['win_rate']:6.1%}  ties {r['tie_rate']:5.1%}  "
                f"mean margin {r['mean_margin']:+6.1f} points  ({int(r['rounds'])} rounds)"
            )
        return 0
    elif args.what == "blind":
        from tools.blind import blind_benchmarks

        blind = blind_benchmarks(rounds=args.pairs, progress=progress)
        if args.json:
            print(json.dumps(blind, indent=2))
            return 0
        for name, value in blind.items():
            print(f"{name:28s} {value}")
        return 0
    elif args.what == "client":
        from client.window.bench import client_benchmarks

        results = client_benchmarks(repeats=args.repeats, progress=progress)
    else:  # pragma: no cover - argparse limits the choices
        raise NertsError(f"unknown benchmark {args.what}")
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for name, r in results.items():
        print(
            f"{name:34s} median {r['median']:>12,.1f}   min {r['min']:>12,.1f}"
            f"   max {r['max']:>12,.1f}   ({int(r['runs'])} runs)"
        )
    return 0


#: `play`'s table without --players: you and two bots.
PLAYERS: Final = 3


#: `play` options of the practice over the node (`--bots N`) only, with their defaults.
_OVER_THE_NODE: Final = {
    "rounds": ("--rounds", None),
    "headless": ("--headless", False),
    "json": ("--json", False),
    "bot_pace": ("--bot-pace", 1.0),
    "silence": ("--silence", 15.0),
    "data_dir": ("--data-dir", None),
}


def _check_play_options(args: argparse.Namespace) -> None:
    """An option `play` would ignore is a usage error: the practice game without --bots
    and the table over the node with it take different ones."""
    if args.bots is None:
        given = [flag for dest, (flag, default) in _OVER_THE_NODE.items()
                 if getattr(args, dest) != default]  # fmt: skip
        if given:
            raise NertsError(
                f"{', '.join(given)}: only with --bots N (you and N bots over the network "
                "node on 127.0.0.1); the practice game without it plays one round here"
            )
    else:
        given = [flag for flag, value in (("--seed", args.seed), ("--watch/--interactive",
                 args.interactive)) if value is not None]  # fmt: skip
        if given:
            raise NertsError(
                f"{', '.join(given)}: only for the practice game without --bots (with --bots "
                "the deals are fresh and you watch your bot play your seat)"
            )


def _cmd_play(args: argparse.Namespace) -> int:
    from client.terminal import practice

    _check_play_options(args)
    if args.bots is not None:
        if args.practice:
            raise NertsError(
                "--practice plays on this machine without the network node, --bots over it "
                "on 127.0.0.1: give one of them"
            )
        if args.players is not None and args.players != args.bots + 1:
            raise NertsError(
                f"--players {args.players} and --bots {args.bots} disagree: with --bots the "
                f"table has you and the bots ({args.bots + 1} players)"
            )
    if args.bots is not None:
        if args.bots < 1:
            raise NertsError("--bots must be at least 1 (someone has to play against you)")
        # You and the bots: that many players (two per seat with --partnerships).
        return _practice_over_the_node(args, _rules_from(args, args.bots + 1))
    rules = _rules_from(args, args.players if args.players is not None else PLAYERS)
    return practice(rules, level_named(args.level), seed=args.seed, interactive=args.interactive)


def _practice_over_the_node(args: argparse.Namespace, rules: Rules) -> int:
    """`play --bots N`: a table on 127.0.0.1 only, not announced, you and N bot peers."""
    from client.netplay import PeerOptions, host_table, run_command

    _check_timing(args)
    if not args.headless:
        by_hand.refuse_headless_options(args, "play")
        return by_hand.practice_in_window(
            by_hand.with_match_rounds(rules, args.rounds),
            level_named(args.level),
            bot_pace=args.bot_pace,
            max_frames=args.frames,
        )
    options = PeerOptions(
        name="practice",
        interface="127.0.0.1",
        headless=True,
        json=args.json,
        bots=args.bots,
        bot_level=level_named(args.level),
        bot_pace=args.bot_pace,
        rounds=args.rounds,
        silence=args.silence,
        announce=False,
        replays=_data_dir(args) / "replays",
    )
    assert options.replays is not None
    try:
        options.replays.mkdir(parents=True, exist_ok=True)  # found out now, not at the end
    except OSError as exc:
        print(
            f"nerts-p2p: cannot keep replays in {options.replays}: {exc.strerror}", file=sys.stderr
        )
        return 1
    return run_command(lambda: host_table(options, rules))


# --- network play (client/netplay.py) ---------------------------------------------------------


def _check_positive(value: float, option: str, what: str = "number of seconds") -> None:
    """A finite number above 0: nan and inf are refused too (inf would wait for ever)."""
    if not (math.isfinite(value) and value > 0):
        raise NertsError(f"{option} must be a positive {what}, got {value}")


def _check_timing(args: argparse.Namespace) -> None:
    """--bot-pace, --silence, --rounds and --timeout, where the command has them."""
    _check_positive(args.bot_pace, "--bot-pace", "number")
    # Below a second a busy machine's pause would look like a player gone: give up on
    # nobody that soon (0 would give up on everyone at once).
    _check_positive(args.silence, "--silence")
    if args.silence < 1:
        raise NertsError(f"--silence must be at least 1 second, got {args.silence}")
    rounds = getattr(args, "rounds", None)
    if rounds is not None and rounds < 1:
        raise NertsError(f"--rounds must be at least 1, got {rounds}")
    timeout = getattr(args, "timeout", None)  # join and spectate: how long to look
    if timeout is not None:
        _check_positive(timeout, "--timeout")


def _peer_options(args: argparse.Namespace, name: str) -> PeerOptions:
    from client.netplay import PeerOptions

    _check_timing(args)
    if getattr(args, "bots", 0) < 0:
        raise NertsError(f"--bots must be 0 or more, got {args.bots}")
    rounds = getattr(args, "rounds", None)
    _check_interface(args.interface)
    if not 0 <= args.port <= 65535:
        raise NertsError(f"--port must be 0 to 65535, got {args.port}")
    if args.passphrase is not None and not args.passphrase:
        raise NertsError("--passphrase must not be empty")
    return PeerOptions(
        name=name,
        interface=args.interface,
        headless=args.headless,
        json=args.json,
        bots=getattr(args, "bots", 0),
        bot_level=level_named(args.level),
        bot_pace=args.bot_pace,
        rounds=rounds,
        silence=args.silence,
        port=args.port,
        data_dir=_data_dir(args),
        passphrase=args.passphrase,
    )


def _data_dir(args: argparse.Namespace) -> Path:
    from nerts_p2p.net.store import default_data_dir

    if args.data_dir is None:
        return default_data_dir()
    if not args.data_dir.strip():
        raise NertsError("--data-dir must name a directory, got an empty string")
    return Path(args.data_dir)


def _check_interface(text: str) -> None:
    import ipaddress

    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        raise NertsError(
            f"--interface must be an IPv4 address such as 127.0.0.1, got {text!r}"
        ) from None


def _checked_name(name: str, option: str) -> str:
    from protocol.messages import name_problem

    problem = name_problem(name)
    if problem is not None:
        raise NertsError(f"{option}: {problem}")
    return name


def _cmd_host(args: argparse.Namespace) -> int:
    from client.netplay import host_table, run_command

    if not args.headless:
        by_hand.refuse_headless_options(args, "host")
    options = _peer_options(args, _checked_name(args.name, "--name"))
    rules = _rules_from(args, args.seats)
    if 1 + options.bots > rules.players:
        raise NertsError(
            f"{options.bots} bots and you need {1 + options.bots} seats, the table has {args.seats}"
        )
    if not args.headless:
        return by_hand.host_in_window(
            options,
            by_hand.with_match_rounds(rules, options.rounds),
            spectators=not args.no_spectators,
            max_frames=args.frames,
        )
    return run_command(lambda: host_table(options, rules, spectators=not args.no_spectators))


def _own_name(args: argparse.Namespace, otherwise: str) -> str:
    """--as, checked; else `otherwise`."""
    return otherwise if args.as_name is None else _checked_name(args.as_name, "--as")


def _check_table_name(name: str) -> None:
    """A name no table can have is a usage error, not a search that finds nothing."""
    from protocol.messages import name_size_problem

    if not name.strip():
        raise NertsError("the table's name must not be empty (`nerts-p2p list` shows them)")
    problem = name_size_problem(name)
    if problem is not None:
        raise NertsError(f"no table has this name ({problem}); `nerts-p2p list` shows them")


def _cmd_join(args: argparse.Namespace) -> int:
    from client.netplay import join_table, run_command
    from protocol.messages import PLAYER

    _check_table_name(args.table)
    from protocol.messages import fit_name

    if not args.headless:
        by_hand.refuse_headless_options(args, "join")
    # A table's name may take all 32 bytes: the guest's is shortened to fit.
    options = _peer_options(args, _own_name(args, fit_name(args.table, "-guest")))
    if not args.headless:
        return _join_in_window(args, options, PLAYER)
    return run_command(lambda: join_table(options, args.table, role=PLAYER, timeout=args.timeout))


def _join_in_window(
    args: argparse.Namespace,
    options: PeerOptions,
    role: int,
    as_text: Callable[[str], int] | None = None,
) -> int:
    """`join` or `spectate` by hand: the window at the named table (`client.by_hand`),
    where we go by the window's own name (its settings) unless --as says another."""
    return by_hand.join_in_window(
        options,
        args.table,
        role=role,
        player_name=None if args.as_name is None else options.name,
        timeout=args.timeout,
        no_window=as_text,
        max_frames=args.frames,
    )


def _cmd_spectate(args: argparse.Namespace) -> int:
    from client.netplay import join_table, run_command
    from protocol.messages import SPECTATOR

    _check_table_name(args.table)
    options = _peer_options(args, _own_name(args, "spectator"))

    def as_text(why: str = "") -> int:
        if why:
            print(f"nerts-p2p: {why}: following the table as text", file=sys.stderr)
        return run_command(
            lambda: join_table(options, args.table, role=SPECTATOR, timeout=args.timeout)
        )

    if args.headless or args.json:
        return as_text()
    return _join_in_window(args, options, SPECTATOR, as_text)


def _cmd_replay(args: argparse.Namespace) -> int:
    from client.replay_text import print_replay

    return print_replay(Path(args.file), as_json=args.json)


def _cmd_list(args: argparse.Namespace) -> int:
    from client.netplay import list_tables, run_command

    _check_interface(args.interface)
    _check_positive(args.timeout, "--timeout")
    return run_command(lambda: list_tables(args.interface, args.timeout, as_json=args.json))


def _add_peer_options(parser: argparse.ArgumentParser, *, seated: bool = True) -> None:
    """The options of every command that makes this machine a peer of a table. `seated`:
    the peer may sit (host, join); a spectator's command (not `seated`) keeps --headless
    for scripts, with a spectator's meaning, and takes no bot options."""
    parser.add_argument(
        "--interface",
        default="0.0.0.0",
        help="the IPv4 address to play and announce on (default: all interfaces)",
    )
    parser.add_argument(
        "--port", type=int, default=0, help="the UDP port to play on (default: any free one)"
    )
    parser.add_argument(
        "--data-dir",
        default=None,
        help="where this peer keeps its key, its crash store and replays "
        "(default: the user's data directory)",
    )
    parser.add_argument(
        "--headless",
        action="store_true",
        help="a bot plays this peer's seat (without it you play the seat in the window)"
        if seated
        else "follow the table as text (without it, and without --json, you watch in the "
        "window where one can open)",
    )
    parser.add_argument(
        "--passphrase",
        default=None,
        help="a private table's passphrase (host: makes the table private; it never "
        "travels, a joiner proves it knows it)",
    )
    parser.add_argument(
        "--json", action="store_true", help="one JSON object per round, then the match"
    )
    if seated:
        parser.add_argument("--level", default="casual", help="bot level: novice, casual or expert")
        parser.add_argument(
            "--bot-pace",
            type=float,
            default=1.0,
            help="multiply the bots' thinking times (1: human pace; 0.05: as fast as they go)",
        )
    else:
        parser.set_defaults(level="casual", bot_pace=1.0)
    parser.add_argument(
        "--silence",
        type=float,
        default=15.0,
        help="seconds without a word from a player before giving up on the table",
    )
    _add_frames_option(parser)


def _add_frames_option(parser: argparse.ArgumentParser) -> None:
    """The window's frames before it closes by itself (for tests; not in the help)."""
    parser.add_argument(
        "--frames", type=whole_number(1, 10**9), default=None, help=argparse.SUPPRESS
    )


def _cmd_window(args: argparse.Namespace) -> int:
    """The pygame window; where no window can open, one line says so and the terminal
    practice game is played instead."""
    from client.window.app import NoDisplayError, play_window

    level_named(args.level)  # a bad level is a usage error before any window opens
    if not 2 <= args.players <= 8:
        raise NertsError(f"--players must be 2..8, got {args.players}")
    _check_interface(args.interface)
    try:
        play_window(
            practice_seats=args.players if args.practice or args.watch else None,
            watch=args.watch,
            level=args.level,
            seed=args.seed,
            max_frames=args.frames,
            interface=args.interface,
        )
    except NoDisplayError as exc:
        print(f"nerts-p2p: {exc}: playing the practice game in the terminal instead")
        from client.terminal import practice

        return practice(
            Rules(seats=args.players), level_named(args.level), seed=args.seed, interactive=None
        )
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse's parser, except that a help that cannot be written to stdout (a full disk,
    a closed pipe) is not silently dropped: `main` says so, or ends quietly. (A usage
    error's words go to stderr, where nothing else could be said: its exit code 2 stays.)"""

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        if message and file is sys.stdout:
            file.write(message)
        else:
            super()._print_message(message, file)


def build_parser() -> argparse.ArgumentParser:
    # The subcommands' parsers are of the same class (`add_subparsers` takes the parent's).
    parser = _Parser(prog="nerts-p2p", description="Serverless Nerts for a LAN.")
    sub = parser.add_subparsers(dest="command", required=True)

    sim = sub.add_parser("simulate", help="bots play each other; one JSON object per round")
    sim.add_argument(
        "--players",
        type=whole_number(2, 16),
        default=4,
        help="players at the table, 2..8 (with --partnerships 4..16, two per seat)",
    )
    sim.add_argument(
        "--rounds",
        type=whole_number(1, 1000),
        default=None,
        help="stop after this many rounds, 1..1000 (default: play the match to its end)",
    )
    sim.add_argument("--seed", type=any_whole_number, default=0)
    sim.add_argument(
        "--bots",
        default="casual",
        help=f"one level for all, or one per player: {', '.join(LEVELS)}",
    )
    sim.add_argument("--json", action="store_true")
    _add_rule_options(sim)
    sim.set_defaults(run=_cmd_simulate)

    pos = sub.add_parser("position", help="legal moves of a position, or the result of a move")
    pos.add_argument("position", help="a position line (see docs/NOTATION.md)")
    pos.add_argument("move", nargs="?", help="a move such as '0 5H n-w2 +7C'")
    pos.add_argument(
        "--in-the-air", action="store_true", help="let a card move count after the round ended"
    )
    pos.set_defaults(run=_cmd_position)

    bench = sub.add_parser("bench", help="benchmarks (medians of repeated runs)")
    bench.add_argument("what", choices=("engine", "sync", "net", "bots", "client", "blind"))
    bench.add_argument(
        "--repeats",
        type=whole_number(1, 1000),
        default=None,
        help="engine, sync, net, client: runs per measure (1..1000; default 7, net 5: about "
        "13 s a run)",
    )
    bench.add_argument(
        "--rounds",
        type=whole_number(1, 100_000),
        default=300,
        help="bots: rounds per pairing (1..100000)",
    )
    bench.add_argument(
        "--pairs",
        type=whole_number(1, 1000),
        default=20,
        help="blind: paired rounds, one seat honest then blind (1..1000; about 1 s a pair)",
    )
    bench.add_argument("--json", action="store_true")
    bench.set_defaults(run=_cmd_bench)

    play = sub.add_parser("play", help="play Nerts")
    play.add_argument(
        "--practice",
        action="store_true",
        help="against bots on this machine only, with no network (the default)",
    )
    play.add_argument(
        "--players",
        type=whole_number(2, 16),
        default=None,
        help=f"players at the table, you included, 2..8 (with --partnerships 4..16, two per "
        f"seat; default {PLAYERS}; with --bots N: N + 1)",
    )
    play.add_argument("--level", default="novice", help="bot level: novice, casual or expert")
    play.add_argument("--seed", type=any_whole_number, default=None)
    mode = play.add_mutually_exclusive_group()
    mode.add_argument("--interactive", dest="interactive", action="store_true", default=None)
    mode.add_argument(
        "--watch",
        dest="interactive",
        action="store_false",
        help="let a bot play your seat and watch the round",
    )
    play.add_argument(
        "--bots",
        type=int,
        default=None,
        help="practice over the real network node on loopback against N bot peers",
    )
    play.add_argument("--rounds", type=int, default=None, help="with --bots: stop after K rounds")
    play.add_argument("--headless", action="store_true", help="with --bots: a bot plays your seat")
    play.add_argument("--json", action="store_true", help="with --bots: JSON records")
    play.add_argument("--bot-pace", type=float, default=1.0)
    play.add_argument("--silence", type=float, default=15.0)
    play.add_argument(
        "--data-dir",
        default=None,
        help="with --bots: where the match's replay is saved, under replays/ (default: the "
        "user's data directory)",
    )
    _add_rule_options(play)
    _add_frames_option(play)
    play.set_defaults(run=_cmd_play)

    host = sub.add_parser("host", help="open a table on the network and announce it")
    host.add_argument("--name", required=True, help="the table's name, as others will see it")
    host.add_argument("--seats", type=int, default=4, help="players at the table (you included)")
    host.add_argument("--bots", type=int, default=0, help="bot players hosted by this peer")
    host.add_argument("--rounds", type=int, default=None, help="end the match after K rounds")
    host.add_argument("--no-spectators", action="store_true")
    _add_peer_options(host)
    _add_rule_options(host, "--seats")
    host.set_defaults(run=_cmd_host)

    join = sub.add_parser("join", help="join a table announced on the network")
    join.add_argument("table", help="the table's name")
    join.add_argument("--as", dest="as_name", default=None, help="your name at the table")
    join.add_argument("--bots", type=int, default=0, help="bot players hosted by this peer")
    join.add_argument("--rounds", type=int, default=None, help="leave after K rounds")
    join.add_argument("--timeout", type=float, default=10.0, help="seconds to look for the table")
    _add_peer_options(join)
    join.set_defaults(run=_cmd_join)

    spectate = sub.add_parser("spectate", help="watch a table announced on the network")
    spectate.add_argument("table", help="the table's name")
    spectate.add_argument("--as", dest="as_name", default=None, help="your name at the table")
    spectate.add_argument(
        "--timeout", type=float, default=10.0, help="seconds to look for the table"
    )
    _add_peer_options(spectate, seated=False)
    spectate.set_defaults(run=_cmd_spectate)

    replay = sub.add_parser("replay", help="verify a saved match and replay it as text")
    replay.add_argument("file", help="a .nrp file (saved under the data dir's replays/)")
    replay.add_argument("--json", action="store_true", help="the round and match records")
    replay.set_defaults(run=_cmd_replay)

    lister = sub.add_parser("list", help="the tables announced on the network")
    lister.add_argument("--interface", default="0.0.0.0")
    lister.add_argument("--timeout", type=float, default=2.0, help="seconds to listen")
    lister.add_argument("--json", action="store_true")
    lister.set_defaults(run=_cmd_list)

    window = sub.add_parser("window", help="the game's window (pygame)")
    window.add_argument("--practice", action="store_true", help="open straight at a practice table")
    window.add_argument("--watch", action="store_true", help="open watching bots play every seat")
    window.add_argument("--players", type=int, default=4, help="seats, you included (2-8)")
    window.add_argument("--level", default="casual", help="bot level: novice, casual or expert")
    window.add_argument("--seed", type=int, default=None, help="deal the same game again")
    window.add_argument(
        "--interface",
        default="0.0.0.0",
        help="the IPv4 address network tables play and announce on (default: all interfaces)",
    )
    _add_frames_option(window)
    window.set_defaults(run=_cmd_window)

    from tools.fuzz.cli import add_fuzz_parser

    add_fuzz_parser(sub)
    return parser


#: errno values of a write to stdout that cannot succeed: the output's disk is full.
UNWRITABLE: Final = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def _quiet_stdout() -> None:
    """After a closed pipe: send whatever is still buffered nowhere, so that the interpreter's
    final flush does not complain either."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Exit codes: 0 done, 1 a finding or failure (a rejected move), 2 a
    usage error. A reader that stops reading (``| head -1``) ends the command quietly with
    0, as Unix tools do; Ctrl-C ends it with 130."""
    try:
        parser = build_parser()  # imports what the commands need: Ctrl-C may come meanwhile
        try:
            args = parser.parse_args(argv)
        except SystemExit as done:
            # `--help` (0) or a usage error (2), already printed: flushed here, so that a
            # help that could not be written is said like any other output.
            sys.stdout.flush()
            return done.code if isinstance(done.code, int) else 2
        code: int = args.run(args)
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except OSError as exc:
        if exc.errno not in UNWRITABLE:
            raise
        # Our output's disk is full (`> /dev/full`): said in words, on stderr.
        _quiet_stdout()
        print(f"nerts-p2p: could not write the output: {exc.strerror}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except (NertsError, ValueError) as exc:
        print(f"nerts-p2p: {exc}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
