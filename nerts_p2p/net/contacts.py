"""Where the other members are: the node's signed address gossip (PROTOCOL.md, appendix N).

The sync protocol addresses peers by key; the node must know an address for each. A joiner
knows only the host's (from discovery). The host hears every member directly, so every
member tells the others, from time to time and whenever someone new appears, the addresses
it has *verified* (it received a signed sync message from that key at that address). A
CONTACTS datagram is signed by a member's key like a sync message, so nobody outside the
table can make members send to an address of its choosing.

Datagram: msgpack array ["contacts", PROTOCOL_VERSION, body (bin), signature (bin 64)];
body: canonical msgpack [table (bin 8), sender (bin 8), [[author (bin 8), ip (str), port], ...]]
with at most `MAX_CONTACTS` entries.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Final

from protocol.codec import pack, unpack_bounded
from protocol.envelope import MAX_BODY, PROTOCOL_VERSION
from protocol.errors import DropReason, RemoteProtocolError
from protocol.signing import KEY_ID_LEN, SIGNATURE_LEN, SigningKeyPair, sign, verify

CONTACTS_TAG: Final = "contacts"
MAX_CONTACTS: Final = 24  # 24 entries of at most ~40 bytes stay well inside one datagram
Address = tuple[str, int]


@dataclass(frozen=True)
class Contacts:
    table: bytes
    sender: bytes
    entries: tuple[tuple[bytes, Address], ...]
    body: bytes
    signature: bytes


def is_contacts(datagram: bytes) -> bool:
    """A cheap look at the first bytes: an array whose first item is the tag string."""
    return datagram[1:10] == b"\xa8contacts"


def encode_contacts(
    key: SigningKeyPair, table: bytes, entries: list[tuple[bytes, Address]]
) -> list[bytes]:
    out = []
    for start in range(0, len(entries), MAX_CONTACTS):
        chunk = [[a, host, port] for a, (host, port) in entries[start : start + MAX_CONTACTS]]
        body = pack([table, key.key_id, chunk])
        out.append(pack([CONTACTS_TAG, PROTOCOL_VERSION, body, sign(key, body)]))
    return out


def _fail(message: str) -> RemoteProtocolError:
    return RemoteProtocolError(DropReason.SCHEMA, f"contacts: {message}")


def decode_contacts(datagram: bytes, *, table: bytes) -> Contacts:
    """Decode without verifying; raises only `RemoteProtocolError`."""
    outer = unpack_bounded(datagram)
    if not (isinstance(outer, list) and len(outer) == 4 and outer[0] == CONTACTS_TAG):
        raise _fail("expected [tag, version, body, signature]")
    _, version, body, signature = outer
    if version != PROTOCOL_VERSION:
        raise _fail(f"protocol version {version!r} is not supported")
    if not isinstance(body, bytes) or len(body) > MAX_BODY:
        raise _fail("body must be bin of at most MAX_BODY bytes")
    if not isinstance(signature, bytes) or len(signature) != SIGNATURE_LEN:
        raise _fail("bad signature field")
    inner = unpack_bounded(body, max_len=MAX_BODY, canonical=True)
    if not (isinstance(inner, list) and len(inner) == 3):
        raise _fail("body must be [table, sender, entries]")
    their_table, sender, raw = inner
    if their_table != table:
        raise RemoteProtocolError(DropReason.WRONG_TABLE, "contacts for another table")
    if not isinstance(sender, bytes) or len(sender) != KEY_ID_LEN:
        raise _fail("bad sender")
    if not isinstance(raw, list) or len(raw) > MAX_CONTACTS:
        raise _fail(f"entries must be a list of at most {MAX_CONTACTS}")
    entries: list[tuple[bytes, Address]] = []
    for item in raw:
        if not (isinstance(item, list) and len(item) == 3):
            raise _fail("an entry must be [author, ip, port]")
        author, host, port = item
        if not isinstance(author, bytes) or len(author) != KEY_ID_LEN:
            raise _fail("bad author in an entry")
        if not isinstance(host, str) or type(port) is not int or not 1 <= port <= 65535:
            raise _fail("bad address in an entry")
        try:
            ip = ipaddress.IPv4Address(host)
        except ValueError:
            raise _fail(f"{host!r} is not an IPv4 address") from None
        if ip.is_multicast or ip.is_unspecified or ip == ipaddress.IPv4Address("255.255.255.255"):
            raise _fail(f"{host} cannot be a peer's address")
        entries.append((author, (host, port)))
    return Contacts(table, sender, tuple(entries), body, signature)


def verify_contacts(contacts: Contacts, public_key: bytes) -> None:
    verify(public_key, contacts.body, contacts.signature)


#: CONTACTS goes out at least this often (seconds).
CONTACTS_INTERVAL: Final = 1.0
#: Contacts whose addresses changed are told again soon, but not more often than this (a
#: member whose address flaps must not make us tell the table at every tick). A member we
#: never told of is told at once: admission bounds how many there can be.
CONTACTS_SOONEST: Final = 0.1

ContactEntries = list[tuple[bytes, Address]]


@dataclass
class ContactsSchedule:
    """When a member tells the table its contacts (PROTOCOL.md N.2): once a second; at once
    when a member it never named has an address here; soon (`CONTACTS_SOONEST`) when an
    address changed. Sans-I/O: the node asks `due` and reports what it told with `told`.

    Until the others know a new member's address, its ops reach them only through
    anti-entropy (a heartbeat later), and theirs reach it the same way: a round started
    right after the last JOIN had its first moves fold 20-60 ms late at every peer while
    the last joiner's MIX went round that way (the rate limit then held the news back up
    to 0.1 s behind the previous joiner's)."""

    last: ContactEntries | None = None  # what we told the table last
    told_at: float = -CONTACTS_SOONEST
    next_at: float = 0.0

    def due(self, entries: ContactEntries, now: float) -> bool:
        if now >= self.next_at:
            return True
        if entries == self.last:
            return False
        named = {author for author, _ in self.last or ()}
        return any(a not in named for a, _ in entries) or now >= self.told_at + CONTACTS_SOONEST

    def looked(self, now: float) -> None:
        """We looked and told nothing (nothing to tell, or not a member yet): the next
        regular look is a second on."""
        self.next_at = now + CONTACTS_INTERVAL

    def told(self, entries: ContactEntries, now: float) -> None:
        self.looked(now)
        self.last, self.told_at = entries, now
