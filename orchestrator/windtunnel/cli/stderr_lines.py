"""stderr for a long command (`wt run`): lines that would block on a full pipe are dropped.

A parent that pipes a child's stderr and reads it only once the child has exited (a common
test-harness pattern) would stall `wt run` as soon as the pipe's buffer filled with progress and
log lines: the run would hang, not fail. `StderrLines` writes whatever `sys.stderr` is at the
time, a whole line at a time; when that is this process's own stderr and a pipe, it writes a line
only if the pipe has room for it now, and otherwise drops and counts it, as `wt serve` does with
its event lines. Terminals, files and in-process captures are written as before.
"""

from __future__ import annotations

import os
import select
import stat
import sys

__all__ = ["StderrLines"]

# A write of at most PIPE_BUF bytes to a pipe that select() reports writable never blocks: it
# lands whole in the free room. Longer lines are cut to fit.
_LINE_LIMIT = select.PIPE_BUF
_CUT = b"...\n"


class StderrLines:
    """A text stream for `sys.stderr` that never waits on a full pipe; `dropped` counts lines."""

    def __init__(self) -> None:
        self.dropped = 0
        self._partial = ""

    def write(self, text: str) -> int:
        self._partial += text
        if "\n" in self._partial:
            lines, _, self._partial = self._partial.rpartition("\n")
            self._emit(lines + "\n")
        return len(text)

    def flush(self) -> None:
        if self._partial:
            text, self._partial = self._partial, ""
            self._emit(text)
        sys.stderr.flush()

    def isatty(self) -> bool:
        return sys.stderr.isatty()

    def _emit(self, text: str) -> None:
        stream = sys.stderr
        fd = _own_pipe(stream)
        if fd is None:
            stream.write(text)
            return
        stream.flush()  # whatever was written to it directly goes first
        for line in text.splitlines(keepends=True):
            data = line.encode(stream.encoding, stream.errors or "strict")
            if len(data) > _LINE_LIMIT:
                data = data[: _LINE_LIMIT - len(_CUT)] + _CUT
            try:
                if select.select([], [fd], [], 0)[1]:
                    os.write(fd, data)
                    continue
            except OSError:  # the reader closed the pipe: nobody can read the rest either
                pass
            self.dropped += 1


def _own_pipe(stream: object) -> int | None:
    """The fd of `stream` when it is this process's own stderr and a pipe (or FIFO)."""
    own = sys.__stderr__
    if own is None or stream is not own:
        return None
    try:
        fd = own.fileno()
        return fd if stat.S_ISFIFO(os.fstat(fd).st_mode) else None
    except (OSError, ValueError):
        return None
