"""Two versions of an author's first op: whichever arrives first, every peer ends expelling
the author and holding one version, so their vectors agree and nobody asks for ever. One
version here names its own author in its deps (it waits for itself until the equivocation
is known). (A known survivor of `tools.mutate`, seed 7, `protocol/sync_checks.py`.)"""

from __future__ import annotations

from protocol.envelope import seal
from protocol.messages import NO_PREV, PLAYER, Kind, op_body
from protocol.sync import SyncPeer
from protocol.sync_events import AuthorExpelled
from tests.protocol.test_hostile import HISTORY, IDS, observer, op_of
from tools.gen_vectors import KEYS, TABLE


def _versions() -> tuple[bytes, bytes, bytes]:
    """The host's ADMIT of Mallory, and two JOINs of Mallory at seq 1: one naming only
    that ADMIT, one naming her own seq 1 as well."""
    admit = seal(
        KEYS["host"], HISTORY.body("host", Kind.ADMIT, 0, [KEYS["mallory"].public_key, PLAYER])
    )
    admitted = op_of(admit)
    lamport = admitted.lamport + 1

    def join(name: str, deps: list[list[object]]) -> bytes:
        payload = [KEYS["mallory"].public_key, name, PLAYER]
        body = op_body(Kind.JOIN, TABLE, IDS["mallory"], 1, NO_PREV, lamport, 0, deps, payload)
        return seal(KEYS["mallory"], body)

    host_dep: list[object] = [IDS["host"], admitted.seq]
    plain = join("mallory", [host_dep])
    self_named = join("mallory2", [host_dep, [IDS["mallory"], 1]])
    return admit, plain, self_named


def _expelled(peer: SyncPeer) -> list[bytes]:
    return [e.author for e in peer.events() if isinstance(e, AuthorExpelled)]


def test_two_first_ops_of_one_author_leave_equal_vectors_in_either_order() -> None:
    admit, plain, self_named = _versions()
    waited = observer()
    waited.receive(admit, "host", 1.0)
    waited.receive(self_named, "mallory", 1.0)  # parked: it waits for itself
    assert waited.delivered(IDS["mallory"]) == 0
    waited.receive(plain, "mallory", 1.0)
    direct = observer()
    direct.receive(admit, "host", 1.0)
    direct.receive(plain, "mallory", 1.0)  # delivered at once
    direct.receive(self_named, "mallory", 1.0)
    assert _expelled(waited) == _expelled(direct) == [IDS["mallory"]]
    assert waited.expelled == direct.expelled == {IDS["mallory"]: 1}
    assert waited.delivered(IDS["mallory"]) == direct.delivered(IDS["mallory"]) == 1
    assert waited.vector() == direct.vector()
