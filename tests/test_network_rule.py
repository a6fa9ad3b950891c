"""The suite must not be able to reach a real interface (DESIGN.md section 6)."""

from __future__ import annotations

import os
import socket

import pytest

IN_NAMESPACE = os.environ.get("NERTS_P2P_NETNS") == "1"


@pytest.mark.skipif(not IN_NAMESPACE, reason="run through `make test` to check the namespace")
def test_make_test_runs_in_a_namespace_with_only_loopback() -> None:
    names = [name for _, name in socket.if_nameindex()]
    assert names == ["lo"]


@pytest.mark.skipif(not IN_NAMESPACE, reason="run through `make test` to check the namespace")
def test_loopback_is_up_inside_the_namespace() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(2)
        sock.sendto(b"ping", sock.getsockname())
        assert sock.recv(16) == b"ping"
