"""A progress line for long runs (`nerts-p2p bench ...`): a bar, how far, and what it is on,
redrawn in place on stderr while stderr is a terminal. Elsewhere it says nothing: a log or a
pipe gets the results alone, and `--json` stays one clean document on stdout.

The benchmarks take a `ProgressLine` (default `SILENT`), say once how many steps they will
take (`expect`) and take them (`step`) between their measures, never inside a timed region.
"""

from __future__ import annotations

import sys
from typing import TextIO

#: Room for the label on an 80-column line beside the bar and the count.
LABEL_WIDTH = 40


def bar_line(done: int, total: int, label: str, label_width: int) -> str:
    """`[#####-----] done/total label`, the label cut to its width visibly ("...")."""
    width = 28
    bar = "#" * (width * done // max(total, 1))
    shown = label if len(label) <= label_width else label[: label_width - 3] + "..."
    return f"[{bar:-<{width}}] {done}/{total} {shown:{label_width}s}"


class ProgressLine:
    def __init__(self, stream: TextIO | None = None, *, live: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.total = 1
        self.done = 0

    def expect(self, total: int) -> None:
        """The run takes `total` steps from here."""
        self.total = max(total, 1)
        self.done = 0

    def step(self, label: str) -> None:
        """One more step done; `label` says what it was."""
        self.done = min(self.done + 1, self.total)
        if not self.live:
            return
        line = bar_line(self.done, self.total, label, LABEL_WIDTH)
        try:
            self.stream.write("\r" + line + ("\n" if self.done == self.total else ""))
            self.stream.flush()
        except OSError:
            self.live = False  # the terminal is gone: the run goes on without its line


#: For runs nobody watches (tests, other tools): counts, draws nothing.
SILENT = ProgressLine(sys.stderr, live=False)
