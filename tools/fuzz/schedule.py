"""Fault schedules: what the network and the machines do to a table, when, as data.

A schedule is a list of `Fault`s, each active from `start` to `end` (simulated seconds), plus
the seed that drives every random draw of the link. It is plain JSON, so a finding carries
the schedule that produced it, a shrinker can drop faults from it, and `fuzz replay` runs it
again exactly.

Fault kinds (`peers` and `value` mean what the kind says):

- `drop`: while active, each datagram is lost with probability `value`;
- `duplicate`: each datagram arrives twice with probability `value`;
- `delay`: each datagram takes up to `value` extra seconds (a spread, so datagrams reorder);
- `corrupt`: with probability `value`, 1-4 bytes of a datagram are overwritten;
- `partition`: the peers in `peers` and the others cannot reach each other;
- `oneway`: datagrams from `peers[0]` to `peers[1]` are lost (the other way works);
- `lag`: datagrams from `peers[0]` to each of `peers[1:]` take `value` seconds more (a slow
  link one way, in order): the lagging peer's moves reach some peers late, so it races the
  others for foundations, and peers see the racers' ops in different orders;
- `pause`: `peers[0]` stops (a laptop lid, a long GC): it neither ticks nor plays, and what
  arrives waits in a bounded socket buffer until `end`;
- `skew`: `peers[0]`'s clock jumps `value` seconds ahead at `start` and goes on from there
  (a monotonic clock never goes back; `end` only says when the jump is old news);
- `kill`: `peers[0]` stops for good at `start` and never comes back (`end` is ignored);
- `restart`: `peers[0]` crashes at `start` and restarts at `end` from its own store (the
  ops it authored, its keys and deal seeds, its Lamport time).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Final

LINK_KINDS: Final = ("drop", "duplicate", "delay", "corrupt", "partition", "oneway", "lag")
PEER_KINDS: Final = ("pause", "skew")
LIFE_KINDS: Final = ("kill", "restart")
ALL_KINDS: Final = LINK_KINDS + PEER_KINDS + LIFE_KINDS
#: Since protocol version 2 main votes a vanished player out (DEPART) and restarts from its
#: store (`TableReplica.restore`), so kills and restarts are honest faults like the rest.
DEFAULT_KINDS: Final = ALL_KINDS


@dataclass(frozen=True)
class Fault:
    kind: str
    start: float
    end: float
    peers: tuple[int, ...] = ()
    value: float = 0.0

    def active(self, now: float) -> bool:
        return self.start <= now < self.end

    def cuts(self, sender: int, target: int) -> bool:
        """True if this (active) fault keeps `sender`'s datagrams from `target`."""
        if self.kind == "partition":
            return (sender in self.peers) != (target in self.peers)
        return self.kind == "oneway" and self.peers[:2] == (sender, target)

    def describe(self) -> str:
        who = f" peers {list(self.peers)}" if self.peers else ""
        value = f" {self.value:g}" if self.value else ""
        return f"{self.kind}{value}{who} from {self.start:.2f}s to {self.end:.2f}s"


@dataclass(frozen=True)
class Schedule:
    seed: int
    faults: tuple[Fault, ...] = ()
    #: Every fault has ended by then; from here on the link is perfect and the table must
    #: settle (the liveness check counts from this time).
    heal_at: float = 0.0

    def with_faults(self, faults: Iterable[Fault]) -> Schedule:
        kept = tuple(faults)
        heal = max((f.start if f.kind == "kill" else f.end for f in kept), default=0.0)
        return Schedule(self.seed, kept, heal)

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "heal_at": self.heal_at,
            "faults": [asdict(f) | {"peers": list(f.peers)} for f in self.faults],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Schedule:
        faults = []
        for item in data.get("faults", []):
            kind = str(item["kind"])
            if kind not in ALL_KINDS:
                raise ValueError(f"unknown fault kind {kind!r} (known: {', '.join(ALL_KINDS)})")
            faults.append(
                Fault(
                    kind,
                    float(item["start"]),
                    float(item["end"]),
                    tuple(int(p) for p in item.get("peers", ())),
                    float(item.get("value", 0.0)),
                )
            )
        return cls(int(data["seed"]), tuple(faults), float(data.get("heal_at", 0.0)))

    def dumps(self) -> str:
        return json.dumps(self.to_json(), separators=(",", ":"))


@dataclass(frozen=True)
class ScheduleShape:
    """How rough a generated schedule is."""

    peers: int
    count: int = 8  # faults drawn
    window: tuple[float, float] = (1.0, 20.0)  # faults start within this window (seconds)
    longest: float = 6.0  # the longest a fault lasts
    kinds: Sequence[str] = field(default=DEFAULT_KINDS)


def generate(seed: int, shape: ScheduleShape) -> Schedule:
    """A seeded random schedule: the same seed and shape give the same schedule."""
    rng = random.Random(f"schedule/{seed}")
    faults: list[Fault] = []
    killed: set[int] = set()
    for _ in range(shape.count):
        kind = rng.choice(list(shape.kinds))
        start = round(rng.uniform(*shape.window), 3)
        end = round(start + rng.uniform(0.2, shape.longest), 3)
        peer = rng.randrange(shape.peers)
        if kind == "drop":
            faults.append(Fault(kind, start, end, (), round(rng.uniform(0.05, 0.6), 3)))
        elif kind == "duplicate":
            faults.append(Fault(kind, start, end, (), round(rng.uniform(0.05, 0.5), 3)))
        elif kind == "delay":
            faults.append(Fault(kind, start, end, (), round(rng.uniform(0.01, 0.8), 3)))
        elif kind == "corrupt":
            faults.append(Fault(kind, start, end, (), round(rng.uniform(0.01, 0.3), 3)))
        elif kind == "partition":
            size = rng.randrange(1, max(2, shape.peers))
            group = tuple(sorted(rng.sample(range(shape.peers), size)))
            faults.append(Fault(kind, start, end, group))
        elif kind == "oneway":
            other = rng.choice([p for p in range(shape.peers) if p != peer] or [peer])
            faults.append(Fault(kind, start, end, (peer, other)))
        elif kind == "lag":
            others = [p for p in range(shape.peers) if p != peer]
            slowed = tuple(sorted(rng.sample(others, rng.randrange(1, len(others) + 1))))
            faults.append(Fault(kind, start, end, (peer, *slowed), round(rng.uniform(0.2, 1.2), 3)))
        elif kind == "pause":
            faults.append(Fault(kind, start, end, (peer,)))
        elif kind == "skew":
            faults.append(Fault(kind, start, end, (peer,), round(rng.uniform(0.0, 30.0), 3)))
        elif kind == "kill":
            # The host opens the table and starts rounds: killing it is a different story
            # (a vanished host needs a successor), so a kill takes a non-host player.
            victim = rng.randrange(1, shape.peers) if shape.peers > 1 else 0
            # A departure needs a quorum of the round's participants (PROTOCOL.md 13): kill
            # a minority, or the survivors rightly wait for the others for good.
            if victim in killed or len(killed) + 1 > (shape.peers - 1) // 2:
                continue
            killed.add(victim)
            faults.append(Fault(kind, start, start, (victim,)))
        elif kind == "restart":
            faults.append(Fault(kind, start, end, (peer,)))
        else:
            raise ValueError(f"unknown fault kind {kind!r}")
    return Schedule(seed).with_faults(sorted(faults, key=lambda f: (f.start, f.kind)))


def kinds_from_text(text: str) -> tuple[str, ...]:
    """`--faults drop,pause` or `all` or `default`; a clear error for unknown names."""
    if text in ("", "default"):
        return DEFAULT_KINDS
    if text == "all":
        return ALL_KINDS
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [n for n in names if n not in ALL_KINDS]
    if unknown:
        raise ValueError(
            f"unknown fault kind(s) {', '.join(unknown)}; known: {', '.join(ALL_KINDS)}"
        )
    return names
