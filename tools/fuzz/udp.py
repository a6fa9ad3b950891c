"""`mutate` over UDP: the same mutations, sent at a peer's address on loopback.

The target is either a peer this tool starts (`--target local`: `tools/fuzz/udp_peer.py`, a
table whose target peer listens on a UDP socket on 127.0.0.1) or any address given as
`HOST:PORT` (another implementation, or a node of this one). The network rule holds: a target
outside loopback is refused unless `--allow-remote` is given, and nothing is ever announced
on mDNS.

Watching a target we do not run in-process:
- **hang/crash**: a heartbeat watchdog. Every `PROBE_INTERVAL` the fuzzer sends a HEARTBEAT
  signed by a key the target has never seen; a live peer answers with a REQUEST for that
  key's first op (PROTOCOL.md section 9, strangers). No answer for `HANG_AFTER` seconds is a
  hang. This needs the target's table id (`--table`; `local` targets say theirs). For a local
  target the process itself is watched too (it exiting is a crash).
- **drop counters by reason**: a local target prints them when it is told to stop.
- **growth** (local targets): the target process looks at itself once a second and reports
  its resident memory when the campaign began and at most, and the target peer's queues at
  most. Queues past the bounds PROTOCOL.md gives, or memory that grew by more than
  `MEMORY_GROWTH_MB` during the campaign, are a finding.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import json
import os
import random
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from protocol.envelope import seal
from protocol.messages import heartbeat_body
from protocol.signing import SigningKeyPair
from protocol.sync import MAX_AWAITING, MAX_PENDING, MAX_REQUESTED
from tools.fuzz.campaign import CampaignOptions
from tools.fuzz.findings import Finding
from tools.fuzz.mutate import Mutator
from tools.fuzz.schedule import Schedule
from tools.fuzz.table import FuzzTable, Problem

PROBE_INTERVAL = 0.25
HANG_AFTER = 3.0
#: The campaign's own corpus and history, and the peer's bounded queues full, take a few
#: MB; the table plays on for the whole run. More than this is memory that grows unbounded.
MEMORY_GROWTH_MB = 64.0
#: The target peer's queue bounds (protocol/sync_limits.py, PROTOCOL.md), by the name udp_peer uses.
QUEUE_BOUNDS = {
    "pending": MAX_PENDING,
    "awaiting_key": MAX_AWAITING,
    "requests_in_flight": MAX_REQUESTED,
    "rate_limit_sources": 256,
}


def growth_problems(watch: dict[str, Any], at: float) -> list[Problem]:
    """What a local target reported of its memory and queues, judged against the bounds."""
    problems = []
    grew = float(watch.get("rss_max_mb", 0.0)) - float(watch.get("rss_start_mb", 0.0))
    if grew > MEMORY_GROWTH_MB:
        problems.append(Problem("growth", None, at, f"the target's memory grew by {grew:.0f} MB"))
    for name, size in dict(watch.get("queues_max", {})).items():
        bound = QUEUE_BOUNDS.get(name)
        if bound is not None and int(size) > bound:
            problems.append(
                Problem("growth", None, at, f"the target's {name} queue reached {size} > {bound}")
            )
    return problems


def parse_target(text: str, *, allow_remote: bool) -> tuple[str, int]:
    """HOST:PORT on loopback (or anywhere with `allow_remote`); ValueError otherwise."""
    host, sep, port_text = text.rpartition(":")
    if not sep or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(f"--target must be HOST:PORT or local, got {text!r}")
    host = host.strip("[]")
    if host == "localhost":
        host = "127.0.0.1"
    try:
        addresses = {str(ipaddress.ip_address(host))}
    except ValueError:
        # Resolving a name would itself send a DNS query out of this machine.
        if not allow_remote:
            raise ValueError(
                f"--target: give an IP address (127.0.0.1, ::1) or localhost, not {host!r}"
            ) from None
        try:
            infos = socket.getaddrinfo(host, int(port_text), type=socket.SOCK_DGRAM)
        except socket.gaierror as exc:
            raise ValueError(f"--target: cannot resolve {host!r}: {exc.strerror}") from None
        addresses = {str(info[4][0]) for info in infos}
    remote = [a for a in addresses if not ipaddress.ip_address(a).is_loopback]
    if remote and not allow_remote:
        raise ValueError(
            f"--target {text} is not on loopback ({', '.join(sorted(remote))}); the fuzzer only "
            "sends to 127.0.0.1 or ::1 unless given --allow-remote"
        )
    return sorted(addresses)[0], int(port_text)


def corpus_from_table(seed: int, players: int) -> tuple[list[bytes], FuzzTable]:
    """Valid traffic of a short honest table, to mutate."""
    from tools.fuzz.table import TableConfig

    table = FuzzTable(TableConfig(players=players, seed=seed), Schedule(seed))
    corpus: list[bytes] = []
    table.taps.append(lambda s, d, data: corpus.append(data) if len(corpus) < 4000 else None)
    table.run(until=60.0)
    return corpus, table


class LocalTarget:
    """`python -m tools.fuzz.udp_peer`, started and stopped by the fuzzer."""

    def __init__(self, seed: int) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tools.fuzz.udp_peer", "--seed", str(seed)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert self.process.stdout is not None
        first = self.process.stdout.readline().split()
        if len(first) != 2:
            raise RuntimeError("the local target did not start")
        self.port = int(first[0])
        self.table = bytes.fromhex(first[1])

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> dict[str, Any]:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        try:
            self.process.stdin.close()
            out = self.process.stdout.read()
            self.process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
            return {}
        finally:
            self.process.stdout.close()
        try:
            data: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
            return data
        except (ValueError, IndexError):
            return {}


def run_udp_campaign(args: argparse.Namespace, options: CampaignOptions) -> int:
    local: LocalTarget | None = None
    if args.target == "local":
        local = LocalTarget(options.seed)
        address: tuple[str, int] = ("127.0.0.1", local.port)
        table_id: bytes | None = local.table
    else:
        address = parse_target(args.target, allow_remote=args.allow_remote)
        table_id = None
        if args.table:
            try:
                table_id = bytes.fromhex(args.table)
            except ValueError:
                table_id = b""
            if len(table_id) != 8:
                raise ValueError("--table must be 16 hex digits (an 8-byte table id)")
    corpus, _ = corpus_from_table(options.seed, options.table.players)
    rng = random.Random(f"udp/{options.seed}")
    key = SigningKeyPair(rng.randbytes(32))
    mutator = Mutator(rng, key, table_id or bytes(8))
    if table_id is not None:
        corpus = [_retarget(d, table_id, key) or d for d in corpus]
    family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_DGRAM)
    sock.bind(("::1" if family == socket.AF_INET6 else "127.0.0.1", 0))
    sock.setblocking(False)
    problems: list[Problem] = []
    sent = 0
    began = time.perf_counter()
    last_answer = began
    next_probe = began
    probe_key = SigningKeyPair(rng.randbytes(32))
    injected: list[tuple[float, str, str]] = []
    while sent < options.datagrams:
        now = time.perf_counter()
        if table_id is not None and now >= next_probe:
            next_probe = now + PROBE_INTERVAL
            probe = seal(probe_key, heartbeat_body(table_id, probe_key.key_id, 1, [], b""))
            _send(sock, probe, address)
            if now - last_answer > HANG_AFTER:
                problems.append(
                    Problem("hang", None, now - began, f"no answer to probes for {HANG_AFTER}s")
                )
                break
        if local is not None and not local.alive():
            problems.append(Problem("crash", None, now - began, "the target process exited"))
            break
        _, datagram = mutator.mutate(rng.choice(corpus))
        if datagram is not None:
            _send(sock, datagram, address)
            sent += 1
            if len(injected) < 100_000:
                injected.append((round(now - began, 6), "udp", datagram.hex()))
        try:
            while True:
                sock.recvfrom(2048)
                last_answer = time.perf_counter()
        except BlockingIOError:
            pass
        if sent % 200 == 0:
            time.sleep(0.001)  # let the target breathe: this measures it, not the kernel
    wall = time.perf_counter() - began
    drops = local.stop() if local is not None else {}
    sock.close()
    latency: dict[str, Any] = {}
    watch: dict[str, Any] = drops.pop("watch", {})
    problems.extend(growth_problems(watch, wall))
    if local is not None:
        latency["move_latency_p99"] = drops.pop("move_latency_p99", None)
        if options.baseline:
            # The same table left alone for as long: honest latency without the campaign.
            quiet = LocalTarget(options.seed)
            time.sleep(wall)
            latency["move_latency_p99_without"] = quiet.stop().get("move_latency_p99")
    report: dict[str, Any] = {
        "target": f"{address[0]}:{address[1]}",
        "datagrams": sent,
        "datagrams_per_second": round(sent / wall, 1) if wall else 0.0,
        "watchdog": "heartbeat probes" if table_id is not None else "none (give --table)",
        "target_drops": drops,
        "watch": watch,
        **latency,
        "problems": [p.to_json() for p in problems],
    }
    if problems:
        finding = Finding(
            "mutate-udp",
            f"{problems[0].kind} at {report['target']}",
            problems,
            {"mode": "mutate-udp", "target": report["target"], "injections": injected[-200:]},
        )
        finding.write(options.out, 1)
        report["finding"] = finding.path
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print(
            f"udp {report['target']}: {sent} datagrams, {report['datagrams_per_second']:,.0f} "
            f"per second; watchdog: {report['watchdog']}"
        )
        if latency:
            print(
                f"  honest p99 move latency {latency.get('move_latency_p99')}s "
                f"(without the campaign {latency.get('move_latency_p99_without')}s)"
            )
        if watch:
            queues = ", ".join(f"{k} {v}" for k, v in watch.get("queues_max", {}).items())
            print(
                f"  target's memory {watch.get('rss_start_mb')} MB at the start, "
                f"{watch.get('rss_max_mb')} MB at most; queues at most: {queues}"
            )
        if drops:
            print(
                "  target's drops by reason: "
                + ", ".join(f"{k} {v}" for k, v in drops.items() if v)
            )
        for p in problems:
            print(f"FINDING: {p.kind}: {p.detail}")
    return 1 if problems else 0


def _send(sock: socket.socket, datagram: bytes, address: tuple[str, int]) -> None:
    # A full buffer or an ICMP error from a closed port: the datagram is lost, as on a LAN.
    with contextlib.suppress(OSError):
        sock.sendto(datagram, address)


def _retarget(datagram: bytes, table_id: bytes, key: SigningKeyPair) -> bytes | None:
    """A captured message moved to the target's table, signed by the fuzzer's key."""
    from tools.fuzz.mutate import envelope, split

    parts = split(datagram)
    if parts is None or not isinstance(parts[2], list) or len(parts[2]) < 3:
        return None
    body = parts[2]
    body[1], body[2] = table_id, key.key_id
    import msgpack

    from protocol.signing import sign

    packed: bytes = msgpack.packb(body, use_bin_type=True)
    return envelope(packed, sign(key, packed))
