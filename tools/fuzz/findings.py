"""Findings: what a campaign reports, and how each one is written down to be replayed.

A finding is one JSON file (`FINDING.json`) holding the mode, the seed and configuration,
the minimal reproducer (a fault schedule, or the datagrams to inject and when), the
problems seen, and the one-line command that replays it; the event history of the
shrunk run sits beside it as JSON lines (`FINDING.history.jsonl`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.fuzz.table import Problem


@dataclass
class Finding:
    mode: str  # link, mutate, hostile
    title: str
    problems: list[Problem]
    case: dict[str, Any]  # everything `replay` needs: config, schedule, injections
    history: list[dict[str, Any]] = field(default_factory=list)
    path: str = ""

    @property
    def kinds(self) -> list[str]:
        return sorted({p.kind for p in self.problems})

    def replay_command(self) -> str:
        return f"nerts-p2p fuzz replay {self.path or 'FINDING.json'}"

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "title": self.title,
            "kinds": self.kinds,
            "problems": [p.to_json() for p in self.problems[:50]],
            "case": self.case,
            "replay": self.replay_command(),
            "history": str(Path(self.path).with_suffix(".history.jsonl")) if self.path else "",
        }

    def write(self, directory: Path, number: int) -> Path:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"finding-{number:03d}-{self.mode}-{'-'.join(self.kinds)}.json"
        self.path = str(path)
        path.write_text(json.dumps(self.to_json(), indent=1) + "\n")
        with path.with_suffix(".history.jsonl").open("w") as out:
            for record in self.history:
                out.write(json.dumps(record, separators=(",", ":")) + "\n")
        return path


def load_case(path: Path) -> tuple[str, dict[str, Any]]:
    """The mode and case of a finding file, with a plain error for anything else."""
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON: {exc}") from None
    if not isinstance(data, dict) or "mode" not in data or "case" not in data:
        raise ValueError(f"{path} is not a fuzz finding (it has no mode and case)")
    return str(data["mode"]), dict(data["case"])
