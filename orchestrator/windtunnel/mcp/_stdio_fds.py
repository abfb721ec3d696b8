"""The stdio transport's file descriptors, without the MCP SDK: claiming stdin and stdout for
the protocol, whole-line writes from any thread, blocking reads from any kind of file.

Shared by the SDK-free start-up (`_stdio_lite`) and the serving loop it hands over to
(`_stdio`), which use the same fds one after the other.
"""

from __future__ import annotations

import os
import select
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from functools import partial

import structlog

__all__ = [
    "Stdout",
    "claimed_stdio",
    "client_gone_ends_serving",
    "read_some",
    "write_all",
]

logger = structlog.get_logger("windtunnel.mcp")

_READ_SIZE = 65536


@contextmanager
def claimed_stdio() -> Iterator[tuple[int, int]]:
    """Private duplicates of stdin and stdout for the protocol, with fds 0 and 1 pointing at
    /dev/null and stderr meanwhile, as under the SDK's transport: stray reads and prints (ours,
    a hook's, a child's) never touch the protocol stream."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        with _claimed(0, devnull) as stdin_fd, _claimed(1, 2) as stdout_fd:
            yield stdin_fd, stdout_fd
    finally:
        os.close(devnull)


@contextmanager
def client_gone_ends_serving() -> Iterator[None]:
    """A client that closed its end of our stdout is gone, like a closed stdin: serving ends."""
    try:
        yield
    except* (BrokenPipeError, ConnectionResetError):
        logger.info("stdio_client_gone", reason="stdout closed by the client")


class Stdout:
    """The one way out: a whole line per write, one write at a time, from any thread."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = threading.Lock()
        self._closed = False

    def write_line(self, line: bytes, once_placed: Callable[[], None] | None = None) -> None:
        """Write `line` and a newline (blocking), after any write already under way.

        `once_placed` runs as soon as the line's place on the wire is settled, before it is
        written: whatever is written after that goes out after this line.
        """
        with self._lock:
            if self._closed:
                raise BrokenPipeError("stdout is closed")
            if once_placed is not None:
                once_placed()
            write_all(self._fd, line + b"\n")

    async def send(self, line: bytes, *, once_placed: Callable[[], None] | None = None) -> None:
        """`write_line` from Trio, in a worker thread."""
        import trio

        await trio.to_thread.run_sync(
            partial(self.write_line, line, once_placed), abandon_on_cancel=True
        )

    def close(self) -> bool:
        """Refuse every later write; True when no write is under way (the fd may be closed)."""
        self._closed = True
        if not self._lock.acquire(blocking=False):
            return False  # a write is blocked on a full pipe: the fd stays open under it
        self._lock.release()
        return True


def read_some(fd: int) -> bytes:
    """A blocking read, also from a file someone else put in non-blocking mode."""
    while True:
        try:
            return os.read(fd, _READ_SIZE)
        except BlockingIOError:
            select.select([fd], [], [])


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            select.select([], [fd], [])


@contextmanager
def _claimed(fd: int, diversion: int) -> Iterator[int]:
    """A private duplicate of `fd`, with `fd` itself pointed at `diversion` meanwhile."""
    import fcntl

    private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    try:
        os.dup2(diversion, fd)
        try:
            yield private
        finally:
            os.dup2(private, fd)
    finally:
        with suppress(OSError):
            os.close(private)
