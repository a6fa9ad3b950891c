"""Tables announced over mDNS: seen by a standard client (dig), updated, withdrawn."""

from __future__ import annotations

import shutil
import subprocess
import time

import pytest
import trio

from nerts_p2p.net import discovery
from nerts_p2p.net.discovery import SERVICE_TYPE, TableAd, TableBrowser, ad_from_txt
from protocol.envelope import PROTOCOL_VERSION

from .procs import FAST, bot_table, finish, nerts, table_name

LO = ["--interface", "127.0.0.1"]


def _dig(*query: str) -> str:
    out = subprocess.run(
        ["dig", "+short", "+tries=3", "+time=2", "-p", "5353", "@127.0.0.1", *query],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    # A try that timed out leaves a ";; communications error" line before the answer: an
    # unanswered unicast query (another socket on 5353 of this namespace may take it).
    return "\n".join(line for line in out.stdout.splitlines() if not line.startswith(";;"))


def _dig_answer(*query: str, fields: int) -> list[str]:
    """dig's answer to a query with the given number of fields, asked again for a while (each
    dig asks from a port of its own, and on a loaded machine zeroconf's thread may answer
    after dig's own three tries)."""
    deadline = time.monotonic() + 30
    answer = _dig(*query).split()
    while len(answer) < fields and time.monotonic() < deadline:
        time.sleep(0.25)
        answer = _dig(*query).split()
    return answer


@pytest.mark.skipif(shutil.which("dig") is None, reason="dig is not installed (make netdeps)")
def test_a_standard_mdns_client_sees_the_table_ptr_srv_and_txt() -> None:
    name = table_name()
    host = nerts(["host", "--name", name, "--seats", "3", "--headless", "--port", "0", *LO])
    try:
        instance = ""
        # Bounded by time, not by tries: until the host has started (slow on a loaded
        # machine) nothing listens on 5353 and dig is refused at once.
        deadline = time.monotonic() + 60
        while not instance and time.monotonic() < deadline and host.poll() is None:
            ptrs = _dig(SERVICE_TYPE.rstrip("."), "PTR").split()
            instance = next((p for p in ptrs if p.startswith(name)), "")
            if not instance:
                time.sleep(0.25)
        assert instance, "the table never answered a PTR query"
        srv = _dig_answer(instance, "SRV", fields=4)
        assert len(srv) == 4  # priority weight port target
        port = int(srv[2])
        assert 0 < port < 65536
        txt = " ".join(_dig_answer(instance, "TXT", fields=7))
        for key in ("proto=", "table=", "host=", "seats=1/3", "phase=lobby", "pass=0", "spect=1"):
            assert key in txt, (key, txt)
        assert f"name={name}" in txt
        assert f"proto={PROTOCOL_VERSION}" in txt
    finally:
        host.kill()
        host.communicate()


async def test_a_table_is_found_by_its_name_typed_in_another_unicode_form() -> None:
    # "café" hosted as one é (NFC), looked for as e + a combining accent (NFD): both print
    # alike, yet join and spectate said "no table named 'café' found".
    composed = table_name("caf\u00e9")
    decomposed = composed.replace("\u00e9", "e\u0301")
    async with TableBrowser("127.0.0.1") as browser:
        host = nerts([*bot_table(composed), "--headless", *LO, "--bot-pace", "1"])
        try:
            ad = await browser.wait_for(decomposed, 30)
            assert ad is not None
            assert ad.name == composed
        finally:
            host.kill()
            await trio.to_thread.run_sync(host.communicate)


async def test_the_announcement_is_withdrawn_when_the_match_ends() -> None:
    name = table_name()
    async with TableBrowser("127.0.0.1") as browser:
        host = nerts([*bot_table(name), "--headless", *LO, *FAST])
        ad = await browser.wait_for(name, 30)
        assert ad is not None
        assert ad.seats_max == 2
        code, _, err = await trio.to_thread.run_sync(finish, host)
        assert code == 0, err
        with trio.move_on_after(10):
            while any(t.name == name for t in (await browser.poll()).values()):
                await trio.sleep(0.1)
        assert all(t.name != name for t in (await browser.poll()).values())


async def test_a_table_announced_before_the_browser_started_is_found_by_asking() -> None:
    """`list`, `join` and the window's table list start after the tables they look for are
    announced. The browser's first question used to be asked from port 5353 with the QU
    bit, and answered by unicast to 5353 of this machine, where the kernel gives it to one
    of the sockets on that port: with another mDNS stack beside (another peer, a daemon),
    often not the browser's, which then saw the table only at its next question, a
    second later (`list --timeout 1` said "no tables found"). Its asker asks from a port of
    its own: here it alone finds the table, the browser on 5353 stopped."""
    ad = TableAd(
        table_name(), ("127.0.0.1", 4000), PROTOCOL_VERSION, b"t" * 8, b"h" * 8, 1, 4,
        "lobby", False, True,
    )  # fmt: skip
    beside = await trio.to_thread.run_sync(discovery._open_zeroconf, "127.0.0.1")
    announcer = discovery.TableAnnouncer("127.0.0.1", ad)
    try:
        await announcer.open()
        async with TableBrowser("127.0.0.1") as browser:
            on_5353, _asker = browser._browsers
            await trio.to_thread.run_sync(on_5353.cancel)  # what it hears plays no part
            found = await browser.wait_for(ad.name, 10)
        assert found == ad
    finally:
        await announcer.aclose()
        await trio.to_thread.run_sync(beside.close)


def test_a_txt_record_missing_a_key_or_malformed_is_not_a_table() -> None:
    good = TableAd("x", ("127.0.0.1", 5), 1, b"a" * 8, b"b" * 8, 1, 4, "lobby", False, True)
    txt = {k.encode(): v.encode() for k, v in good.txt().items()}
    assert ad_from_txt(txt, ("127.0.0.1", 5)) == good
    for key in txt:
        assert ad_from_txt({k: v for k, v in txt.items() if k != key}, ("127.0.0.1", 5)) is None
    for key, bad in ((b"seats", b"3"), (b"table", b"zz"), (b"phase", b"over"), (b"proto", b"x")):
        assert ad_from_txt({**txt, key: bad}, ("127.0.0.1", 5)) is None
    # Values no honest host announces (a squatter's, seen in a hostile run, used to be
    # listed): a negative or absurd count, a sign or another script's digits, a seat count
    # no rules have, an empty name or one longer than any table's.
    for key, bad in (
        (b"seats", b"-5/4"),
        (b"seats", b"+1/4"),
        (b"seats", b" 1/4"),
        (b"seats", "\u0661/4".encode()),  # ARABIC-INDIC DIGIT ONE
        (b"seats", b"1/1"),
        (b"seats", b"1/17"),
        (b"seats", b"65/16"),
        (b"proto", b"99999999999999999999999"),
        (b"proto", b"-3"),
        (b"name", b""),
        (b"name", b"   "),
        (b"name", b"n" * 33),
    ):
        assert ad_from_txt({**txt, key: bad}, ("127.0.0.1", 5)) is None, (key, bad)
    assert ad_from_txt({**txt, b"seats": b"0/16", b"name": ("é" * 16).encode()}, ("127.0.0.1", 5))


async def test_a_table_whose_records_came_late_is_looked_up_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A host busy playing may not answer a resolve within its timeout: the browser must
    try again on its next poll, not forget the table until its announcement changes."""
    ad = TableAd(
        name="late",
        address=("127.0.0.1", 4000),
        protocol_version=PROTOCOL_VERSION,
        table_id=b"t" * 8,
        host_fingerprint=b"h" * 8,
        seats_taken=2,
        seats_max=4,
        phase="playing",
        passphrase=False,
        spectators=True,
    )
    answers: list[object] = [discovery.UNANSWERED, discovery.UNANSWERED, ad]
    monkeypatch.setattr(discovery, "_resolve", lambda zc, asker, name: answers.pop(0))
    browser = TableBrowser("127.0.0.1")
    browser._zc = browser._asker = object()  # type: ignore[assignment]  # _resolve is replaced: never used
    browser._listener.add_service(None, SERVICE_TYPE, "late._nerts._udp.local.")  # type: ignore[arg-type]
    assert await browser.poll() == {}
    assert await browser.poll() == {}
    assert await browser.poll() == {"late._nerts._udp.local.": ad}
    assert answers == []
    assert await browser.poll() == {"late._nerts._udp.local.": ad}  # resolved: not asked again


def test_of_tables_of_one_name_a_joiner_takes_the_one_that_can_let_it_in() -> None:
    # Anyone may announce any name: squatters that are full, of another protocol version
    # or over took the real table's place in 2 of 3 joins of a hostile run.
    from client.netplay import _likeliest
    from protocol.messages import PLAYER, SPECTATOR

    def ad(n: int, **changes: object) -> TableAd:
        fields: dict[str, object] = {
            "name": "T", "address": ("127.0.0.1", 4000 + n), "protocol_version": PROTOCOL_VERSION,
            "table_id": bytes([n]) * 8, "host_fingerprint": b"h" * 8, "seats_taken": 1,
            "seats_max": 3, "phase": "lobby", "passphrase": False, "spectators": True,
        }  # fmt: skip
        return TableAd(**{**fields, **changes})  # type: ignore[arg-type]

    full, other_version = ad(1, seats_taken=3), ad(2, protocol_version=99)
    over, real = ad(3, phase="ended"), ad(4)
    squats = [full, other_version, over, real]
    assert _likeliest(squats, PLAYER, set()) == real
    assert _likeliest([ad(5, spectators=False), full], SPECTATOR, set()) == full
    assert _likeliest(squats, PLAYER, {over.table_id}) == over  # the table we were at
    assert _likeliest([ad(6), ad(7)], PLAYER, set()) == ad(6)  # among equals, the first found


async def test_a_table_of_another_protocol_version_is_listed_as_such_and_refused() -> None:
    """A newer program's table is on the LAN: `list` shows it with the version it speaks,
    and `join` and `spectate` refuse it in words, exit 1, before sending it anything."""
    ad = TableAd(
        table_name(), ("127.0.0.1", 4000), PROTOCOL_VERSION + 1, b"v" * 8, b"h" * 8, 1, 4,
        "lobby", False, True,
    )  # fmt: skip
    announcer = discovery.TableAnnouncer("127.0.0.1", ad)
    await announcer.open()
    try:
        runs = [
            await trio.to_thread.run_sync(finish, nerts([*command, *LO]))
            for command in (
                ["list", "--timeout", "5"],
                ["join", ad.name, "--headless"],
                ["spectate", ad.name, "--headless"],
            )
        ]
    finally:
        await announcer.aclose()
    (code, out, err), *refusals = runs
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith(ad.name))
    speaks = f"speaks protocol {PROTOCOL_VERSION + 1}, not {PROTOCOL_VERSION}: cannot join"
    assert speaks in row
    for code, _out, err in refusals:
        assert code == 1
        assert (
            f"protocol version mismatch: table {ad.name!r} speaks version "
            f"{PROTOCOL_VERSION + 1}, this program speaks version {PROTOCOL_VERSION}"
        ) in err
