"""Private tables over real processes on loopback (PROTOCOL.md 17): the passphrase never
travels; a joiner or spectator without it gets a plain-word error and exit 1, never a hang."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from nerts_p2p.net.discovery import TableAd, ad_from_txt
from nerts_p2p.net.store import resumable_tables

from .procs import FAST, FAST_JOIN, finish, nerts, table_name

LO = ["--interface", "127.0.0.1"]
PATIENT = ["--silence", "60"]
SECRET = "owls at the lighthouse"
#: A refusal comes back within a few seconds (KDF, discovery, one round trip): far less
#: than this, so a hang fails the test rather than the whole run.
REFUSED_WITHIN = 60.0


def test_a_private_table_lets_in_the_passphrase_and_refuses_the_rest() -> None:
    name = table_name("private")
    host = nerts(
        ["host", "--name", name, "--seats", "2", "--rounds", "1", "--passphrase", SECRET,
         "--headless", "--json", *LO, *FAST, *PATIENT]
    )  # fmt: skip
    try:
        time.sleep(0.5)
        code, out, err = finish(nerts(["list", "--json", "--timeout", "4", *LO]))
        assert code == 0, err
        ours = [t for t in map(json.loads, out.splitlines()) if t["name"] == name]
        assert [t["passphrase"] for t in ours] == [True]
        # Refused before any seat is taken: a wrong passphrase, a spectator's wrong one,
        # and none at all.
        wrong = nerts(
            ["join", name, "--passphrase", "owls at the harbour", "--headless", *LO, *FAST_JOIN]
        )
        peeking = nerts(["spectate", name, "--passphrase", "owls", "--json", *LO])
        bare = nerts(["join", name, "--headless", *LO, *FAST_JOIN])
        for proc, doing in ((wrong, "join"), (peeking, None)):
            code, out, err = finish(proc, timeout=REFUSED_WITHIN)
            assert code == 1
            assert f"wrong passphrase for table {name!r}" in err
            assert out == ""  # nothing of the table was shown
            assert "Traceback" not in err
            # Never said to be at the table it was refused (it used to say "at table ...:
            # waiting for its next round" first).
            assert " at table" not in err
            assert "waiting" not in err
            if doing is not None:  # (with --json stderr has no such words)
                assert f"asking to {doing} table {name!r}" in err
        code, out, err = finish(bare, timeout=REFUSED_WITHIN)
        assert code == 1
        assert f"table {name!r} is private" in err
        assert "--passphrase" in err
        # The right passphrase joins and plays the round; a spectator with it watches.
        guest = nerts(
            ["join", name, "--passphrase", SECRET, "--headless", "--json", *LO, *FAST_JOIN,
             *PATIENT]
        )  # fmt: skip
        watcher = nerts(["spectate", name, "--passphrase", SECRET, "--json", *LO, *PATIENT])
        results = [finish(p) for p in (host, guest, watcher)]
    finally:
        host.kill()
    for code, _out, err in results:
        assert code == 0, err
    lines = [out.splitlines() for _, out, _ in results]
    assert len(lines[0]) == 2  # the round, then the match
    assert all(each == lines[0] for each in lines)


def test_the_pass_flag_of_a_txt_record_is_one_or_zero() -> None:
    private = TableAd("x", ("127.0.0.1", 5), 3, b"a" * 8, b"b" * 8, 1, 4, "lobby", True, True)
    public = TableAd("x", ("127.0.0.1", 5), 3, b"a" * 8, b"b" * 8, 1, 4, "lobby", False, True)
    assert private.txt()["pass"] == "1"
    assert public.txt()["pass"] == "0"
    txt = {k.encode(): v.encode() for k, v in private.txt().items()}
    assert ad_from_txt(txt, ("127.0.0.1", 5)) == private
    for bad in (b"yes", b"true", b"2", b""):
        assert ad_from_txt({**txt, b"pass": bad}, ("127.0.0.1", 5)) is None


def test_a_restored_table_keeps_the_privacy_it_was_opened_with() -> None:
    """The signed OPEN fixes whether a table is private. Hosting a stored table again with a
    passphrase it was not opened with must not host it open in silence, and a private one
    must not be hosted again without its passphrase: both are refused in plain words."""
    for first, again, said in (
        ([], ["--passphrase", SECRET], "stays open"),
        (["--passphrase", SECRET], [], "is private: give its --passphrase"),
    ):
        name = table_name("restored")
        folder = Path(tempfile.mkdtemp(prefix="nerts-test-"))
        data = ["--data-dir", str(folder)]
        host = nerts(["host", "--name", name, "--seats", "2", "--headless", *first, *data, *LO])
        try:
            opened_by = time.monotonic() + REFUSED_WITHIN
            while not _stored_open(folder) and time.monotonic() < opened_by:
                time.sleep(0.1)
        finally:
            host.kill()
            host.communicate()
        again_proc = nerts(
            ["host", "--name", name, "--seats", "2", "--headless", *again, *data, *LO]
        )
        code, _out, err = finish(again_proc, timeout=REFUSED_WITHIN)
        assert code == 1, err
        assert said in err
        assert "Traceback" not in err


def _stored_open(data_dir: Path) -> bool:
    return any(store.own_ops for store in resumable_tables(data_dir))


def test_a_passphrase_given_for_a_public_table_is_said_to_be_needless() -> None:
    # It was ignored without a word; and without --json a peer said nothing at all until
    # the first round's end, which looked like a hang.
    name = table_name()
    host = nerts(["host", "--name", name, "--seats", "2", "--rounds", "1", "--headless"]
                 + [*LO, *FAST])  # fmt: skip
    time.sleep(0.5)
    joiner = ["join", name, "--passphrase", "owls", "--headless", "--rounds", "1"]
    code, _, err = finish(nerts([*joiner, *LO, *FAST_JOIN]))
    assert code == 0, err
    assert f"table {name!r} is not private: the passphrase is not needed" in err
    # First that it asks to be let in, then, once let in, that it is at the table.
    asking = err.index(f"asking to join table {name!r} (from 127.0.0.1:")
    assert err.index(f"at table {name!r}: waiting for its next round") > asking
    code, _, err = finish(host)
    assert code == 0, err
    assert f"table {name!r} is open on 127.0.0.1:" in err
