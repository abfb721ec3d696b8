"""Whole lines to a stream someone else drains (stderr, a pipe), never blocking whoever writes.

A parent that pipes our stderr and never reads it fills the pipe (64 KiB on Linux) after a few
hundred event lines; a plain write then blocks the thread that makes it, which is the Trio loop,
so every server stops answering. Here `offer` only appends to a bounded buffer, and a thread of
its own does the blocking writes. When the buffer is full the line is dropped and counted, and the
next line that fits is preceded by a notice with the count, as the WebSocket feed does for a slow
subscriber: a gap is never silent. `close` announces the last gap and waits a bounded time for
the buffer to drain, so a process whose stderr nobody reads still exits.

Setting O_NONBLOCK on the stream instead would change the open file description we share with
the parent (a terminal, a shell's pipe): its other writers would start to see EAGAIN.
"""

from __future__ import annotations

import os
import select
import threading
from collections.abc import Callable

__all__ = ["DEFAULT_LIMIT", "PipeTextStream", "PipeWriter"]

DEFAULT_LIMIT = 256 * 1024
"""Bytes buffered beyond what the pipe holds: about a thousand event lines, a feed's buffer."""

LINGER_S = 0.005
"""How long the thread lets lines gather once the first arrives. Waking it for every line (one
event per call) costs the serving thread more than the call itself on a busy 2-core machine
(GIL hand-offs; docs/benchmarks.md has the figure); batching bounds the wake-ups to 200 a
second."""

# Lines go out in writes of at most PIPE_BUF bytes: each such write to a pipe is atomic, so a
# line never tears against another writer of the same pipe (a traceback printed meanwhile).
_ATOMIC_WRITE = select.PIPE_BUF


class PipeWriter:
    """Writes whole lines to (a duplicate of) `fd` from a background thread; `offer` never waits.

    `notice(count)` renders the line announcing `count` dropped lines (it must end in a newline).
    """

    def __init__(
        self, fd: int, *, notice: Callable[[int], bytes], limit: int = DEFAULT_LIMIT
    ) -> None:
        self._fd = os.dup(fd)  # ours to close; the original stays with its owner
        self._notice = notice
        self.limit = limit
        self.dropped = 0
        """Lines dropped so far: the buffer was full, or the stream failed."""
        self.error: OSError | None = None
        """The first write error (the reader closed its end); every later line is dropped."""
        self._pending = 0  # dropped but not yet announced in the stream
        self._lines: list[bytes] = []
        self._size = 0  # bytes queued or being written
        self._closing = False
        lock = threading.Lock()
        self._ready = threading.Condition(lock)  # the thread waits for lines here
        self._written = threading.Condition(lock)  # `drain` waits for an empty buffer here
        self._thread = threading.Thread(target=self._run, name="windtunnel-pipe", daemon=True)
        self._thread.start()

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def offer(self, line: bytes) -> bool:
        """Queue one line (ending in a newline) to be written; False when it was dropped."""
        with self._ready:
            if self._closing or self.error is not None:
                self._drop()
                return False
            if self._pending:
                notice = self._notice(self._pending)
                if self._size + len(notice) + len(line) > self.limit:
                    self._drop()
                    return False
                self._queue(notice)
                self._pending = 0
            elif self._size + len(line) > self.limit:
                self._drop()
                return False
            self._queue(line)
            return True

    def drain(self, *, timeout_s: float) -> bool:
        """Wait up to `timeout_s` until every queued line is written; True when it is."""
        with self._written:
            self._written.wait_for(lambda: self._size == 0 or self.error is not None, timeout_s)
            return self._size == 0 and self.error is None

    def close(self, *, deadline_s: float) -> bool:
        """Announce any last gap, then wait up to `deadline_s` for every queued line to be
        written; True when all were. After a timeout the thread is left blocked in its write
        (it is a daemon: the process can exit) and its queued lines are lost."""
        with self._ready:
            if self._closing:
                return not self._thread.is_alive()
            if self._pending and self.error is None:
                # Past the limit by one line: the final count is worth more than the bound.
                self._queue(self._notice(self._pending))
                self._pending = 0
            self._closing = True
            self._ready.notify()
        self._thread.join(deadline_s)
        if self._thread.is_alive():
            return False
        os.close(self._fd)
        return self.error is None

    def _queue(self, line: bytes) -> None:
        self._lines.append(line)
        self._size += len(line)
        # The thread waits for a first line, then lingers: wake it for the first, and early
        # when half the buffer is taken so a burst is written before it has to be dropped.
        if len(self._lines) == 1 or self._size > self.limit // 2:
            self._ready.notify()

    def _drop(self) -> None:
        self.dropped += 1
        self._pending += 1

    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._lines and not self._closing:
                    self._ready.wait()
                if not self._lines:
                    return
                if not self._closing and self._size <= self.limit // 2:
                    self._ready.wait(LINGER_S)  # cut short by `close` or a filling buffer
                batch, self._lines = self._lines, []
            try:
                for chunk in _chunks(batch):
                    _write_all(self._fd, chunk)
            except OSError as exc:
                with self._ready:
                    self.error = exc
                    # What was queued and not written is lost: count it with what follows.
                    self.dropped += len(batch) + len(self._lines)
                    self._lines = []
                    self._size = 0
                    self._written.notify_all()
                return
            with self._ready:
                self._size -= sum(len(line) for line in batch)
                self._written.notify_all()


def _chunks(lines: list[bytes]) -> list[bytes]:
    """Whole lines joined into writes of at most PIPE_BUF bytes (a longer line goes alone)."""
    chunks: list[bytes] = []
    current: list[bytes] = []
    size = 0
    for line in lines:
        if current and size + len(line) > _ATOMIC_WRITE:
            chunks.append(b"".join(current))
            current, size = [], 0
        current.append(line)
        size += len(line)
    if current:
        chunks.append(b"".join(current))
    return chunks


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class PipeTextStream:
    """A `PipeWriter` as the text stream that logging and structlog print to.

    They write a message and its newline in one or two calls; only whole lines are offered.
    """

    def __init__(self, writer: PipeWriter) -> None:
        self.writer = writer
        self._partial = ""
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        with self._lock:
            *lines, self._partial = (self._partial + text).split("\n")
        for line in lines:
            self.writer.offer(line.encode("utf-8", "backslashreplace") + b"\n")
        return len(text)

    def flush(self) -> None:
        """Nothing to do: the writer's thread writes each line as soon as it can."""

    def isatty(self) -> bool:
        return self.writer.isatty()
