"""Floods of HELLOs from invented keys against the host's bounds (PROTOCOL.md 17.4): the
host admits at most 63 keys over a table's life, so a flood must not be able to spend them,
nor hold the seats; a real player still gets in and plays. Addresses are `(ip, port)`
pairs, as the node's are: a flooder picks its ports freely."""

from __future__ import annotations

from collections.abc import Hashable

from protocol.admission import (
    ADMIT_TTL,
    BUSY_PATIENCE,
    MAX_ADMITTED,
    MAX_SPECTATORS,
    PER_SOURCE_WAITING,
    Refusal,
)
from protocol.envelope import seal
from protocol.messages import PLAYER, SPECTATOR, Challenge, Kind, Verdict, decode, hello_body

from .admission_lan import PASSPHRASE, RULES, Lan, keypair, play_a_round

HOST = ("10.0.0.1", 5000)


def _hello(lan: Lan, label: str, role: int, source: Hashable) -> Verdict:
    """An invented key asks the host; the host's VERDICT to it."""
    key = keypair(label)
    body = hello_body(lan.table, key.key_id, key.public_key, role, label[:32])
    lan.host.receive(seal(key, body), source, lan.now)
    verdicts = []
    for _, datagram in lan.host.outgoing():
        message = decode(datagram, table=lan.table)
        if isinstance(message, Verdict):
            verdicts.append(message)
    assert len(verdicts) == 1
    return verdicts[0]


def _admitted(verdicts: list[Verdict]) -> int:
    return sum(1 for v in verdicts if v.admit_seq)


def _admits_signed(lan: Lan) -> int:
    return sum(1 for op in lan.host.sync.logs[lan.host.me] if op.kind == Kind.ADMIT)


def _a_real_player_gets_in_and_plays(lan: Lan, address: Hashable) -> None:
    player = lan.add("real player", address=address)
    lan.join(player)
    replica = lan.replicas[player]
    assert replica.admission_refused is None
    assert replica.is_member
    play_a_round(lan, [0, player])
    assert replica.current_round is not None
    assert replica.seat is not None
    assert replica.sync.vector() == lan.host.sync.vector()


def test_a_flood_from_one_machine_on_many_ports_gets_two_admissions_and_then_none() -> None:
    lan = Lan(private=False, host_address=HOST)
    flood = [
        _hello(lan, f"ports/{n}", (PLAYER, SPECTATOR)[n % 2], ("10.0.0.66", 10_000 + n))
        for n in range(60)
    ]
    assert _admitted(flood) == PER_SOURCE_WAITING
    assert {v.reason for v in flood if not v.admit_seq} == {Refusal.BUSY}
    # Its keys never joined: once they lapse, its address is not let in again, whatever
    # key or port it tries next.
    lan.now += ADMIT_TTL + 1
    later = [_hello(lan, f"ports/later/{n}", PLAYER, ("10.0.0.66", 20_000 + n)) for n in range(20)]
    assert _admitted(later) == 0
    assert _admits_signed(lan) == PER_SOURCE_WAITING
    _a_real_player_gets_in_and_plays(lan, ("10.0.0.7", 4000))


def test_a_spectator_flood_from_many_addresses_leaves_every_seat_to_the_players() -> None:
    lan = Lan(private=False, host_address=HOST)
    flood = [_hello(lan, f"many/{n}", SPECTATOR, (f"10.1.{n // 200}.{n % 200}", 5353))
             for n in range(60)]  # fmt: skip
    assert _admitted(flood) == MAX_SPECTATORS
    assert {v.reason for v in flood if not v.admit_seq} == {Refusal.TABLE_FULL}
    _a_real_player_gets_in_and_plays(lan, ("10.0.0.7", 4000))


def test_waves_of_spectators_never_spend_the_admissions_kept_for_the_seats() -> None:
    """Spectators come (and lapse) from fresh addresses wave after wave: the host stops
    admitting spectators MAX_ADMITTED - seats in, and the seats stay admissible."""
    lan = Lan(private=False, host_address=HOST)
    admitted, wave = 0, 0
    while True:
        verdicts = [
            _hello(lan, f"wave{wave}/{n}", SPECTATOR, (f"10.2.{wave}.{n}", 5353))
            for n in range(MAX_SPECTATORS + 2)
        ]
        if not _admitted(verdicts):
            break
        admitted += _admitted(verdicts)
        wave += 1
        lan.now += ADMIT_TTL + 1
    assert admitted == MAX_ADMITTED - RULES.seats
    assert {v.reason for v in verdicts} == {Refusal.TABLE_FULL}
    _a_real_player_gets_in_and_plays(lan, ("10.0.0.7", 4000))
    assert _admits_signed(lan) == MAX_ADMITTED - RULES.seats + 1


def test_a_player_flood_from_many_addresses_holds_free_seats_only_until_it_lapses() -> None:
    """The limit of what a host can tell apart: invented players from many addresses take
    the table's free room for ADMIT_TTL; then they count no more, and their addresses are
    not let in again (a flood that keeps the seats busy needs fresh addresses all along, and
    spends the table's admissions only as fast as seats fall free: section 12)."""
    lan = Lan(private=False, host_address=HOST)
    flood = [_hello(lan, f"seats/{n}", PLAYER, (f"10.3.0.{n}", 5353)) for n in range(30)]
    # Players beyond the seats may sit a round out: the room is the seats plus 8, less
    # the host's own place.
    assert _admitted(flood) == RULES.seats + MAX_SPECTATORS - 1
    player = lan.add("real player", address=("10.0.0.7", 4000))
    lan.join(player)
    assert lan.replicas[player].admission_refused == "the table is full"
    lan.now += ADMIT_TTL + 1
    admitted_from = [f"10.3.0.{n}" for n, v in enumerate(flood) if v.admit_seq]
    again = [_hello(lan, f"seats/again/{a}", PLAYER, (a, 6000)) for a in admitted_from]
    assert {v.reason for v in again} == {Refusal.BUSY}
    lan.replicas[player].sync.admission.refused = None  # asked again, as a user would
    lan.join(player)
    assert lan.replicas[player].is_member
    play_a_round(lan, [0, player])
    assert lan.replicas[player].seat is not None


def test_a_joiner_and_its_bots_on_one_address_all_get_in() -> None:
    """Three peers of one machine ask at once: the host lets two wait, tells the third
    "busy", and the third asks again and gets in once the others joined."""
    lan = Lan(private=False, host_address=HOST)
    peers = [lan.add(f"bot{n}", role=SPECTATOR, address=("10.0.0.9", 4000 + n)) for n in range(3)]
    lan.deliver(2)
    for index in peers:
        lan.replicas[index].join()
    lan.deliver(40)  # two seconds: a HELLO again after HELLO_RETRY
    assert all(lan.replicas[index].is_member for index in peers)
    assert lan.host.sync.admission.refused_count[Refusal.BUSY] >= 1


def test_the_hosts_own_machine_is_not_bounded_per_address() -> None:
    """The host's bots reach it from its own address (loopback or its interface): the
    kernel drops datagrams from outside that claim them, so they are not a flood."""
    lan = Lan(private=False, host_address=HOST)
    lan.host.sync.admission.own_addresses.add(HOST[0])
    for address in ("127.0.0.1", HOST[0]):
        verdicts = [_hello(lan, f"own/{address}/{n}", SPECTATOR, (address, 7000 + n))
                    for n in range(4)]  # fmt: skip
        assert _admitted(verdicts) == 4


def test_a_joiner_kept_busy_gives_up_with_the_reason_after_its_patience() -> None:
    lan = Lan(private=False, host_address=HOST)
    for n in range(2):
        _hello(lan, f"no-show/{n}", SPECTATOR, ("10.0.0.66", 9000 + n))
    lan.now += ADMIT_TTL + 1  # they never joined: the address is barred
    joiner = lan.add("same machine", role=SPECTATOR, address=("10.0.0.66", 9100))
    lan.join(joiner)
    replica = lan.replicas[joiner]
    assert not replica.is_member
    assert replica.admission_refused is None  # still asking
    lan.now += BUSY_PATIENCE
    lan.deliver(30)
    assert replica.admission_refused == "too many joins from this address; try again later"


def test_at_a_private_table_one_machine_gets_two_challenges_and_then_busy() -> None:
    """Challenges wait like admissions: a flood from one machine on many ports cannot
    crowd out the host's challenges to others (it keeps 64 at most, all joiners together)."""
    lan = Lan(private=True, host_address=HOST)
    challenges, refusals = 0, set()
    for n in range(40):
        key = keypair(f"private/{n}")
        body = hello_body(lan.table, key.key_id, key.public_key, PLAYER, f"p{n}")
        lan.host.receive(seal(key, body), ("10.0.0.66", 30_000 + n), lan.now)
        for _, datagram in lan.host.outgoing():
            message = decode(datagram, table=lan.table)
            if isinstance(message, Challenge):
                challenges += 1
            elif isinstance(message, Verdict):
                refusals.add(message.reason)
    assert challenges == PER_SOURCE_WAITING
    assert refusals == {Refusal.BUSY}
    player = lan.add("real player", passphrase=PASSPHRASE, address=("10.0.0.7", 4000))
    lan.join(player)
    assert lan.replicas[player].is_member
    play_a_round(lan, [0, player])
    assert lan.replicas[player].seat is not None
