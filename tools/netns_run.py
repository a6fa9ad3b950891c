#!/usr/bin/env python3
"""Run a command inside a fresh network namespace that has only `lo`, brought up.

`make test` runs the whole suite this way, so no test can reach a real interface of this
machine (the network rule in DESIGN.md section 6). Standard library only: it runs before,
and outside, the project's virtual environment.

Where a namespace cannot be made (not root, no unshare), it says so and runs the command
on the host, where the tests still bind only to 127.0.0.1.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import struct
import subprocess
import sys

SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
MARKER = "NERTS_P2P_NETNS"


def bring_loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH", b"lo", 0)
        flags = struct.unpack("16sH", fcntl.ioctl(sock, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | IFF_UP))


def main(argv: list[str]) -> int:
    inside = argv[:1] == ["--inside"]
    if inside:
        argv = argv[1:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print("usage: netns_run.py -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    if inside:
        bring_loopback_up()
        os.environ[MARKER] = "1"
        os.execvp(argv[0], argv)
    unshare = shutil.which("unshare")
    if unshare and os.geteuid() == 0:
        probe = subprocess.run([unshare, "-n", "true"], capture_output=True, check=False)
        if probe.returncode == 0:
            me = os.path.abspath(__file__)
            os.execv(unshare, [unshare, "-n", "--", sys.executable, me, "--inside", "--", *argv])
    print(
        "netns_run: cannot create a network namespace here (needs root and unshare); "
        "running on the host, where tests bind to 127.0.0.1 only",
        file=sys.stderr,
    )
    os.execvp(argv[0], argv)
    return 1  # pragma: no cover - execvp does not return


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
