"""Fair races (PROTOCOL.md 6): every exact tie is its own fair coin, fixed only once every
participant's nonce is revealed, so neither a grinding READY nor a seat-permuting host gains
anything, and no move counts before its author had every nonce."""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from itertools import permutations

from nerts_p2p.game.errors import Rejection
from nerts_p2p.game.moves import Move
from nerts_p2p.game.rules import Rules
from protocol.messages import Kind
from protocol.order import nonce_commitment, nonce_mix, round_mix, tie_coin
from protocol.signing import SigningKeyPair
from tests.replication.table_helpers import ManualTable, seed_showing

SEATS = 4
KEYS = [SigningKeyPair(hashlib.sha256(f"fair/{i}".encode()).digest()).public_key for i in range(4)]


def _tie_winner(mix: bytes, nonces: list[bytes], lamport: int, keys: list[bytes]) -> int:
    revealed = nonce_mix(mix, nonces)
    return min(range(len(keys)), key=lambda i: tie_coin(revealed, lamport, keys[i]))


def _within(wins: Counter[int], trials: int, seats: int = SEATS) -> bool:
    # Binomial(trials, 1/seats): every seat within 4.5 standard deviations of its share.
    p = 1 / seats
    sd = (trials * p * (1 - p)) ** 0.5
    return all(abs(wins[i] - trials * p) < 4.5 * sd for i in range(seats))


def test_exact_ties_within_one_round_are_independent_coins_not_one_seat_all_round() -> None:
    rng = random.Random(1)
    commitments = [rng.randbytes(32) for _ in range(SEATS)]
    nonces = [rng.randbytes(16) for _ in range(SEATS)]
    mix = round_mix(commitments)
    trials = 2000
    wins = Counter(_tie_winner(mix, nonces, lamport, KEYS) for lamport in range(100, 100 + trials))
    assert _within(wins, trials), wins  # per race: every seat wins its share in one round


def test_exact_ties_stay_fair_across_rounds() -> None:
    rng = random.Random(2)
    trials = 2000
    wins: Counter[int] = Counter()
    for _ in range(trials):
        mix = round_mix([rng.randbytes(32) for _ in range(SEATS)])
        wins[_tie_winner(mix, [rng.randbytes(16) for _ in range(SEATS)], 57, KEYS)] += 1
    assert _within(wins, trials), wins  # per round


def test_a_grinding_last_ready_gains_nothing_measurable() -> None:
    """The last player to send READY knows every other commitment and tries 25 deals,
    keeping the one whose ties it can best predict to win. It cannot know the nonces."""
    rng = random.Random(3)
    trials, tries, grinder = 1500, 25, 3
    wins: Counter[int] = Counter()
    for _ in range(trials):
        others = [rng.randbytes(32) for _ in range(SEATS - 1)]
        nonces = [rng.randbytes(16) for _ in range(SEATS)]
        best = None
        for _ in range(tries):
            nonce = rng.randbytes(16)
            commitment = rng.randbytes(32)
            mix = round_mix([*others, commitment])
            # Its best guess: the coin with its own nonce and the others' unknown.
            guess = nonce_mix(mix, [None, None, None, nonce])
            score = tie_coin(guess, 57, KEYS[grinder])
            if best is None or score < best[0]:
                best = (score, mix, nonce)
        assert best is not None
        _, mix, nonce = best
        nonces[grinder] = nonce
        wins[_tie_winner(mix, nonces, 57, KEYS)] += 1
    assert _within(wins, trials), wins
    assert wins[grinder] < trials / SEATS + 4.5 * (trials * 3 / 16) ** 0.5


def test_a_seat_permuting_host_gains_nothing_measurable() -> None:
    rng = random.Random(4)
    trials, host = 800, 0
    wins: Counter[int] = Counter()
    for _ in range(trials):
        commitments = [rng.randbytes(32) for _ in range(SEATS)]
        nonces = [rng.randbytes(16) for _ in range(SEATS)]
        best = None
        for order in permutations(range(SEATS)):
            mix = round_mix([commitments[i] for i in order])
            guess = nonce_mix(mix, [nonces[host] if i == host else None for i in order])
            score = tie_coin(guess, 57, KEYS[host])
            if best is None or score < best[0]:
                best = (score, order)
        assert best is not None
        order = best[1]
        mix = round_mix([commitments[i] for i in order])
        winner = _tie_winner(mix, [nonces[i] for i in order], 57, [KEYS[i] for i in order])
        wins[order[winner]] += 1
    assert _within(wins, trials), wins


def test_the_nonce_commitment_binds_the_nonce() -> None:
    assert nonce_commitment(bytes(16)) != nonce_commitment(bytes(15) + b"\x01")


def test_no_move_is_played_before_every_mix_nonce_has_arrived() -> None:
    rules = Rules(seats=2)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"n{i}") for i in range(2)])
    host, other = table.players
    table.ready_all()
    host.start()  # the other player has not seen START, so it has sent no nonce yet
    table.collect(only=[0])
    table.queue.clear()
    result = host.play(Move(0, "turn"))
    assert isinstance(result, Rejection)
    assert "mix nonce" in result.message
    table.players[1].receive(host.sync.logs[host.me][-2].datagram(), 0, 0.0)  # host's START
    table.players[1].receive(host.sync.logs[host.me][-1].datagram(), 0, 0.0)  # host's MIX
    table.collect()
    table.deliver_all()
    assert not isinstance(host.play(Move(0, "turn")), Rejection)
    assert other.current_round is not None


def test_a_move_whose_author_had_not_every_nonce_is_rejected_by_every_fold() -> None:
    rules = Rules(seats=2)
    table = ManualTable(rules, [seed_showing(rules, [], label=f"m{i}") for i in range(2)])
    host, other = table.players
    table.ready_all()
    host.start()
    for _, datagram in host.outgoing():  # START and the host's MIX reach the other player,
        other.receive(datagram, 0, 0.0)  # whose own MIX is not sent yet
    # A modified host moves before the other's nonce reached it (its client would wait).
    host.sync.author(Kind.MOVE, 1, "turn")
    host._after_sync()
    table.collect()
    table.deliver_all()
    table.settle(0.5)
    for replica in table.players:
        rnd = replica.current_round
        assert rnd is not None
        steps = [s for s in rnd.steps if s.op.kind == Kind.MOVE]
        assert len(steps) == 1
        assert not steps[0].applied
        assert "mix nonce" in steps[0].reason
