"""Tables on the LAN over mDNS: python-zeroconf, bridged into trio.

zeroconf runs its own asyncio loop in its own thread; everything here that talks to it
runs in a worker thread (`trio.to_thread.run_sync`), so the trio loop never blocks on it.
Each table is one `_nerts._udp.local.` service instance whose TXT record (PROTOCOL.md
appendix N) says what a browser needs to show and pick a table. TXT is only a hint: a
joiner verifies everything through the table's signed ops.

Zeroconf only ever runs on the interface it is given (`--interface`); tests and benchmarks
give it 127.0.0.1 or an address inside a network namespace they made.
"""

from __future__ import annotations

import errno
import ipaddress
import re
import socket
import threading
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final

import trio
from zeroconf import (
    InterfaceChoice,
    ServiceBrowser,
    ServiceInfo,
    ServiceListener,
    Zeroconf,
)
from zeroconf._utils.net import InterfacesType, get_all_addresses

from nerts_p2p.game.errors import NertsError
from protocol.envelope import PROTOCOL_VERSION
from protocol.messages import MAX_MEMBERS, name_size_problem, quoted_name

SERVICE_TYPE: Final = "_nerts._udp.local."
PHASES: Final = ("lobby", "playing", "ended")
_DECIMAL: Final = re.compile(r"[0-9]{1,9}")
#: The players a table's rules can seat: 2 to 8 seats, two players each with partnerships.
MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 16
ALL_INTERFACES: Final = "0.0.0.0"
#: How often a browser looks at what zeroconf's thread has seen (seconds).
BROWSE_POLL: Final = 0.05


@dataclass(frozen=True)
class TableAd:
    """What a table announces about itself."""

    name: str
    address: tuple[str, int]
    protocol_version: int
    table_id: bytes
    host_fingerprint: bytes  # the host's key id
    seats_taken: int
    seats_max: int
    phase: str
    passphrase: bool
    spectators: bool

    @property
    def full(self) -> bool:
        return self.seats_taken >= self.seats_max

    @property
    def speaks_our_protocol(self) -> bool:
        """Can this program sit at (or watch) the table at all?"""
        return self.protocol_version == PROTOCOL_VERSION

    def version_note(self) -> str | None:
        """A list row's words for a table of another protocol version (None: ours)."""
        if self.speaks_our_protocol:
            return None
        return f"speaks protocol {self.protocol_version}, not {PROTOCOL_VERSION}"

    def version_mismatch(self) -> str | None:
        """Why a join or a watch of this table is refused before anything is sent to it, if
        it speaks another protocol version (None: ours)."""
        if self.speaks_our_protocol:
            return None
        return (
            f"protocol version mismatch: table {quoted_name(self.name)} speaks version "
            f"{self.protocol_version}, this program speaks version {PROTOCOL_VERSION}"
        )

    def txt(self) -> dict[str, str]:
        return {
            "proto": str(self.protocol_version),
            "table": self.table_id.hex(),
            "host": self.host_fingerprint.hex(),
            "name": self.name,
            "seats": f"{self.seats_taken}/{self.seats_max}",
            "phase": self.phase,
            "pass": "1" if self.passphrase else "0",
            "spect": "1" if self.spectators else "0",
        }

    def instance_name(self) -> str:
        # Unique per table even when two tables share a display name; a DNS label is at
        # most 63 bytes.
        label = "".join(c if c.isalnum() or c in "-_ " else "-" for c in self.name)
        label = label.encode()[:40].decode(errors="ignore") or "table"
        return f"{label}-{self.table_id.hex()[:12]}.{SERVICE_TYPE}"


def _count(text: str) -> int:
    """A TXT record's decimal count: ASCII digits only (`int` also takes a sign, spaces,
    underscores and other scripts' digits), at most 9 of them."""
    if not _DECIMAL.fullmatch(text):
        raise ValueError(f"not a count: {text!r}")
    return int(text)


def ad_from_txt(txt: Mapping[bytes, bytes | None], address: tuple[str, int]) -> TableAd | None:
    """A table ad from a TXT record, or None if any key is missing or malformed (a browser
    shows only what it understands): a name no table can have (empty, over 32 bytes), a
    seat count no rules have, a negative or absurd number."""
    try:
        fields = {k.decode(): (v or b"").decode() for k, v in txt.items()}
        if fields["pass"] not in ("0", "1") or fields["spect"] not in ("0", "1"):
            return None  # a flag is 1 or 0; anything else is not a table we understand
        taken, seats = map(_count, fields["seats"].split("/"))
        if not fields["name"].strip() or name_size_problem(fields["name"]) is not None:
            return None
        if not MIN_PLAYERS <= seats <= MAX_PLAYERS or taken > MAX_MEMBERS:
            return None
        ad = TableAd(
            name=fields["name"],
            address=address,
            protocol_version=_count(fields["proto"]),
            table_id=bytes.fromhex(fields["table"]),
            host_fingerprint=bytes.fromhex(fields["host"]),
            seats_taken=taken,
            seats_max=seats,
            phase=fields["phase"],
            passphrase=fields["pass"] == "1",
            spectators=fields["spect"] == "1",
        )
    except (KeyError, ValueError, UnicodeDecodeError):
        return None
    if len(ad.table_id) != 8 or len(ad.host_fingerprint) != 8 or ad.phase not in PHASES:
        return None
    return ad


def zeroconf_interfaces(interface: str) -> InterfacesType:
    return InterfaceChoice.All if interface == ALL_INTERFACES else [interface]


def announce_addresses(interface: str) -> list[bytes]:
    if interface != ALL_INTERFACES:
        return [socket.inet_aton(interface)]
    found = [a for a in get_all_addresses() if not ipaddress.IPv4Address(a).is_loopback]
    return [socket.inet_aton(a) for a in found] or [socket.inet_aton("127.0.0.1")]


def _open_zeroconf(interface: str, *, unicast: bool = False) -> Zeroconf:
    """Zeroconf on `interface` only. `unicast`: the asker of `TableBrowser`, on a port of
    its own rather than 5353. A question asked from 5353 may be answered to 5353 by
    unicast (RFC 6762 5.4: the QU bit, which python-zeroconf sets on a browser's first
    query), and the kernel hands such a datagram to just one of the sockets that share
    5353 on this machine (every other peer, browser or mDNS daemon here): often not the
    one that asked, which then sees a table only at its next question, a second later.
    A question from any other port is answered to that port (RFC 6762 6.7), so the asker
    sees every table that is already announced at once."""
    try:
        return Zeroconf(interfaces=zeroconf_interfaces(interface), unicast=unicast)
    except OSError as exc:
        if exc.errno in (errno.ENODEV, errno.EADDRNOTAVAIL):
            # As the UDP socket says it (transport.py): no interface has this address.
            raise NertsError(f"{interface} is not an address of this machine") from exc
        raise NertsError(f"cannot start mDNS on {interface}: {exc}") from exc


class TableAnnouncer:
    """One table's announcement: `open`, `update` as seats fill, `aclose` withdraws it."""

    def __init__(self, interface: str, ad: TableAd) -> None:
        self.interface = interface
        self.ad = ad
        self._zc: Zeroconf | None = None
        self._info: ServiceInfo | None = None

    def _service_info(self, ad: TableAd, *, name: str | None = None) -> ServiceInfo:
        registered = self._info
        return ServiceInfo(
            SERVICE_TYPE,
            name or ad.instance_name(),
            server=registered.server if registered is not None else None,
            addresses=announce_addresses(self.interface),
            port=ad.address[1],
            properties=ad.txt(),
        )

    async def open(self) -> None:
        def register() -> tuple[Zeroconf, ServiceInfo]:
            zc = _open_zeroconf(self.interface)
            info = self._service_info(self.ad)
            zc.register_service(info, allow_name_change=True)
            return zc, info

        self._zc, self._info = await trio.to_thread.run_sync(register)

    async def update(self, **changes: object) -> None:
        ad = replace(self.ad, **changes)  # type: ignore[arg-type]
        if ad == self.ad or self._zc is None or self._info is None:
            return
        self.ad = ad
        # The same instance and host names as registered (zeroconf may have renamed it).
        info = self._service_info(ad, name=self._info.name)
        self._info = info
        zc = self._zc
        await trio.to_thread.run_sync(zc.update_service, info)

    async def aclose(self) -> None:
        zc, info = self._zc, self._info
        self._zc = self._info = None
        if zc is None:
            return

        def withdraw() -> None:
            try:
                if info is not None:
                    zc.unregister_service(info)
            finally:
                zc.close()

        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(withdraw)


class _Names(ServiceListener):
    """Called in zeroconf's thread: keeps the set of instance names it currently sees."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.names: set[str] = set()
        self.changed: set[str] = set()

    def add_service(self, zc: Zeroconf, type_: str, name: str) -> None:
        with self.lock:
            self.names.add(name)
            self.changed.add(name)

    def update_service(self, zc: Zeroconf, type_: str, name: str) -> None:
        with self.lock:
            self.changed.add(name)

    def remove_service(self, zc: Zeroconf, type_: str, name: str) -> None:
        with self.lock:
            self.names.discard(name)
            self.changed.discard(name)


class TableBrowser:
    """The tables currently announced on the interface. `tables` is refreshed by `poll`."""

    def __init__(self, interface: str) -> None:
        self.interface = interface
        self.tables: dict[str, TableAd] = {}
        self._listener = _Names()
        #: On port 5353 with the other mDNS stacks of this machine: hears what tables
        #: multicast (announcements, updates as seats fill, goodbyes).
        self._zc: Zeroconf | None = None
        #: Asks from a port of its own, so every answer comes back to it (`_open_zeroconf`).
        self._asker: Zeroconf | None = None
        self._browsers: list[ServiceBrowser] = []

    async def __aenter__(self) -> TableBrowser:
        def start() -> tuple[Zeroconf, Zeroconf, list[ServiceBrowser]]:
            zc = _open_zeroconf(self.interface)
            try:
                asker = _open_zeroconf(self.interface, unicast=True)
            except BaseException:
                zc.close()
                raise
            browsers = [
                ServiceBrowser(zc, SERVICE_TYPE, listener=self._listener),
                ServiceBrowser(asker, SERVICE_TYPE, listener=self._listener),
            ]
            return zc, asker, browsers

        self._zc, self._asker, self._browsers = await trio.to_thread.run_sync(start)
        return self

    async def __aexit__(self, *exc: object) -> None:
        zc, asker, browsers = self._zc, self._asker, self._browsers
        if zc is None or asker is None:
            return

        def stop() -> None:
            for browser in browsers:
                browser.cancel()
            asker.close()
            zc.close()

        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(stop)

    async def poll(self) -> dict[str, TableAd]:
        """Resolve what changed since the last poll; returns every table seen now."""
        zc, asker = self._zc, self._asker
        assert zc is not None, "use TableBrowser as an async context manager"
        assert asker is not None
        with self._listener.lock:
            names = set(self._listener.names)
            changed, self._listener.changed = self._listener.changed, set()
        for gone in set(self.tables) - names:
            del self.tables[gone]
        unresolved: set[str] = set()
        for name in changed & names:
            ad = await trio.to_thread.run_sync(_resolve, zc, asker, name)
            if isinstance(ad, _Unanswered):
                # No answer in time (a host busy playing, a lost datagram): look again next
                # poll, else a table missed once stays unseen until its announcement changes.
                unresolved.add(name)
            elif ad is not None:
                self.tables[name] = ad
            else:
                self.tables.pop(name, None)  # a record we cannot read: not one of ours
        if unresolved:
            with self._listener.lock:
                self._listener.changed |= unresolved & self._listener.names
        return dict(self.tables)

    async def wait_for(self, name: str, timeout: float) -> TableAd | None:
        """The first table announced under `name` (`same_name`) within `timeout` seconds."""
        with trio.move_on_after(timeout):
            while True:
                for ad in (await self.poll()).values():
                    if same_name(ad.name, name):
                        return ad
                await trio.sleep(BROWSE_POLL)
        return None


def same_name(a: str, b: str) -> bool:
    """Two table names that read the same: equal once both are in Unicode's composed form
    (NFC). A keyboard may type "café" as "e" and a combining accent (NFD) where the host
    typed one character; both print alike, and `list` shows no difference."""
    return unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b)


class _Unanswered:
    """`_resolve`'s answer when the instance's records did not come in time."""


UNANSWERED: Final = _Unanswered()


def _resolve(zc: Zeroconf, asker: Zeroconf, name: str) -> TableAd | _Unanswered | None:
    """The table `name` stands for: as it last multicast itself, if `zc` heard it (its
    updates come that way, so this is the freshest); else as it answers `asker` now."""
    heard = ServiceInfo(SERVICE_TYPE, name)
    info = (
        heard
        if heard.load_from_cache(zc)
        else asker.get_service_info(SERVICE_TYPE, name, timeout=1000)
    )
    if info is None:
        return UNANSWERED
    if info.port is None:
        return None
    addresses = info.parsed_addresses()
    if not addresses:
        return None
    return ad_from_txt(dict(info.properties), (addresses[0], info.port))


async def browse(interface: str, timeout: float) -> list[TableAd]:
    """Every table seen within `timeout` seconds, by name."""
    async with TableBrowser(interface) as browser:
        with trio.move_on_after(timeout):
            while True:
                await browser.poll()
                await trio.sleep(BROWSE_POLL)
        tables = await browser.poll()
    return sorted(tables.values(), key=lambda ad: (ad.name, ad.table_id))
