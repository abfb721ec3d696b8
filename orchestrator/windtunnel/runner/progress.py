"""Progress of a pack run: a live status line on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import Protocol

from ..terminal_text import escape_terminal
from .trace import Status, Trace, undelivered_faults

__all__ = ["MARKS", "Progress", "TextStream"]

MARKS: dict[Status, str] = {
    "passed": "PASS",
    "failed": "FAIL",
    "error": "ERROR",
    "invalid": "INVALID",
}
"""How a finished unit's line starts (`--progress plain`; `scale.local` reads them back)."""


class TextStream(Protocol):
    """What progress (and log) lines are written to: `sys.stderr`, a file, or a wrapper."""

    def write(self, text: str, /) -> int: ...

    def flush(self) -> None: ...

    def isatty(self) -> bool: ...


class Progress:
    """`start(total)`, `unit_started()`, `unit_finished(trace)`, `close()`."""

    def __init__(self, stream: TextStream | None = None, *, live: bool | None = None) -> None:
        self.stream: TextStream = stream if stream is not None else sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.total = 0
        self.done = 0
        self.running = 0
        self.counts = {"passed": 0, "failed": 0, "error": 0, "invalid": 0}
        self._t0 = time.monotonic()

    def start(self, total: int, *, skipped: int = 0) -> None:
        self.total = total
        if skipped:
            self._line(f"resuming: {skipped} unit(s) already finished, {total} to run")
        self._render()

    def unit_started(self) -> None:
        self.running += 1
        self._render()

    def unit_finished(self, trace: Trace) -> None:
        self.running -= 1
        self.done += 1
        self.counts[trace.status] = self.counts.get(trace.status, 0) + 1
        if trace.status != "passed" or not self.live:
            mark = MARKS[trace.status]
            reason = _reason(trace)
            suffix = f" - {reason}" if reason else ""
            self._line(f"{mark:5} {trace.unit_id} ({trace.duration_s:.2f}s){suffix}")
        self._render()

    def close(self) -> None:
        if self.live:
            self.stream.write("\r\x1b[2K")
        self.stream.flush()

    def _status(self) -> str:
        elapsed = time.monotonic() - self._t0
        return (
            f"[{self.done}/{self.total}] passed {self.counts['passed']}  failed "
            f"{self.counts['failed']}  errors {self.counts['error']}  "
            + (f"invalid {self.counts['invalid']}  " if self.counts["invalid"] else "")
            + f"running {self.running}  {elapsed:.1f}s"
        )

    def _render(self) -> None:
        if self.live:
            self.stream.write("\r\x1b[2K" + self._status())
            self.stream.flush()

    def _line(self, text: str) -> None:
        if self.live:
            self.stream.write("\r\x1b[2K")
        # Unit ids, reasons, agents' stderr lines and answers are data: escaped, one line each.
        self.stream.write(escape_terminal(text) + "\n")
        self.stream.flush()


def _reason(trace: Trace) -> str:
    if trace.error:
        return trace.error
    if trace.status == "invalid":
        return "; ".join(undelivered_faults(trace))
    failing = [v.reason for v in trace.verdicts if not v.passed]
    failing += [f"{s.name}: {s.detail}" for s in trace.scores if not s.passed]
    return "; ".join(failing)
