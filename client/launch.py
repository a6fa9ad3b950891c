"""The `nerts-p2p` command's entry point, apart from `client.cli` so that loading the program
is inside it: Ctrl-C while the modules are still being imported (the first fraction of a
second) ends the command as Ctrl-C does at any later moment, exit 130 and no traceback."""

from __future__ import annotations


def main() -> int:
    try:
        from client.cli import main as run
    except KeyboardInterrupt:
        return 130
    return run()
