"""A LAN of hosts in network namespaces, for tests: `ip netns` + veth pairs + a bridge.

Each host is a namespace with one interface `eth0` (10.77.<net>.<n>/24) plugged into a bridge
that lives in a namespace of its own (the switch), so nothing is attached to, or sent on, the
namespace the test runs in, let alone the machine's real interfaces (DESIGN.md section 6).
Everything is made by `Lan.create()` and removed by `Lan.destroy()` (or the context manager).
Needs root and iproute2; `lan_available()` says whether this machine can.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import TracebackType


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def lan_available() -> str | None:
    """None if a LAN can be made here, else the reason it cannot."""
    if shutil.which("ip") is None:
        return "iproute2 (ip) is not installed (make netdeps)"
    if os.geteuid() != 0:
        return "making network namespaces needs root"
    probe = f"nerts-probe-{uuid.uuid4().hex[:6]}"
    try:
        _ip("netns", "add", probe)
    except subprocess.CalledProcessError as exc:
        return f"ip netns add failed: {exc.stderr.strip()}"
    _ip("netns", "del", probe)
    return None


@dataclass
class LanHost:
    namespace: str
    address: str
    switch_port: str  # the veth end on the bridge: down means the host's cable is out

    def command(self, argv: Sequence[str]) -> list[str]:
        return ["ip", "netns", "exec", self.namespace, *argv]


@dataclass
class Lan:
    hosts_wanted: int = 3
    net: int = 77
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:6])
    hosts: list[LanHost] = field(default_factory=list)

    @property
    def switch(self) -> str:
        return f"nerts-sw-{self.tag}"

    def create(self) -> Lan:
        _ip("netns", "add", self.switch)
        _ip("-n", self.switch, "link", "set", "lo", "up")
        _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.switch, "link", "set", "br0", "up")
        for n in range(1, self.hosts_wanted + 1):
            namespace = f"nerts-h{n}-{self.tag}"
            port = f"p{n}"
            _ip("netns", "add", namespace)
            _ip(
                "-n",
                self.switch,
                "link",
                "add",
                port,
                "type",
                "veth",
                "peer",
                "name",
                "eth0",
                "netns",
                namespace,
            )
            _ip("-n", self.switch, "link", "set", port, "master", "br0")
            _ip("-n", self.switch, "link", "set", port, "up")
            address = f"10.{self.net}.0.{n}"
            _ip("-n", namespace, "link", "set", "lo", "up")
            _ip("-n", namespace, "addr", "add", f"{address}/24", "dev", "eth0")
            _ip("-n", namespace, "link", "set", "eth0", "up")
            # mDNS goes to 224.0.0.251: route multicast out of the LAN's interface.
            _ip("-n", namespace, "route", "add", "224.0.0.0/4", "dev", "eth0")
            self.hosts.append(LanHost(namespace, address, port))
        return self

    def unplug(self, host: LanHost) -> None:
        _ip("-n", self.switch, "link", "set", host.switch_port, "down")

    def plug(self, host: LanHost) -> None:
        _ip("-n", self.switch, "link", "set", host.switch_port, "up")

    def destroy(self) -> None:
        for host in self.hosts:
            subprocess.run(["ip", "netns", "del", host.namespace], check=False, capture_output=True)
        subprocess.run(["ip", "netns", "del", self.switch], check=False, capture_output=True)
        self.hosts.clear()

    def __enter__(self) -> Lan:
        return self.create()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.destroy()
