"""stdio: MCP over this process's stdin and stdout, one JSON-RPC message per line (DESIGN §5).

This stands in for the SDK's `stdio_server`, with its framing (each line validated by the SDK's
message adapter and handed to its session; each message the session sends serialized as the SDK
serializes it), so that one task sees every incoming line first and one lock orders every write:

- the reader answers a line the fast path can answer (`_stdio_fast`) itself, and hands every
  other line, unchanged and in order, to the SDK session;
- `Stdout.send` writes one whole line at a time, for the reader's answers and for the task that
  drains the session's write stream alike: responses never interleave.

While serving, fds 0 and 1 point at /dev/null and stderr, as under the SDK's transport, so stray
reads and prints (ours, a hook's, a child's) never touch the protocol stream. Pipes and sockets
(an agent spawning us) are read and written in non-blocking mode, waiting in Trio only when the
fd is not ready: the SDK's thread-backed files cost a worker-thread hop per line and per write,
and Trio's `FdStream` a scheduler pass per read and per write, each more than the rest of a
fast call. Anything else (a terminal, a regular file) is read and written in worker threads.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from functools import partial
from typing import Any

import anyio
import mcp_types as types
import structlog
import trio
from mcp.server import Server
from mcp.shared.message import SessionMessage

from ._stdio_fast import StdioFastCalls

__all__ = ["Stdout", "fd_wire", "serve_lines", "serve_stdio", "thread_wire"]

Wire = tuple[AsyncIterator[str], "Stdout"]

logger = structlog.get_logger("windtunnel.mcp")


class Stdout:
    """The one way out: a whole line per write, one write at a time."""

    def __init__(self, send_all: Callable[[bytes], Awaitable[None]]) -> None:
        self._send_all = send_all
        self._lock = trio.Lock()

    async def send(self, line: bytes, *, once_placed: Callable[[], None] | None = None) -> None:
        """Write `line` and a newline, after any write already under way.

        `once_placed` runs as soon as the line's place on the wire is settled, before it is
        written: whatever is sent after that goes out after this line.
        """
        try:
            self._lock.acquire_nowait()  # no scheduler pass when no one else is writing
        except trio.WouldBlock:
            await self._lock.acquire()
        try:
            if once_placed is not None:
                once_placed()
            await self._send_all(line + b"\n")
        finally:
            self._lock.release()


async def serve_stdio(server: Server[Any], fast: StdioFastCalls | None = None) -> None:
    """Serve `server` on stdin/stdout until stdin closes (both protocol eras).

    With `fast`, plain `tools/call` lines are answered by it; every other line goes to the SDK.
    """
    if sys.platform == "win32":  # no fd diversion there: the SDK's own transport, no fast path
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
        return
    wire = fd_wire if _is_pipe(0) and _is_pipe(1) else thread_wire
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        with _claimed(0, devnull) as stdin_fd, _claimed(1, 2) as stdout_fd:
            async with wire(stdin_fd, stdout_fd) as (lines, stdout):
                try:
                    await serve_lines(server, lines, stdout, fast)
                except* (BrokenPipeError, ConnectionResetError):
                    # The client closed its end of our stdout: it is gone, like a closed stdin.
                    logger.info("stdio_client_gone", reason="stdout closed by the client")
    finally:
        os.close(devnull)


async def serve_lines(
    server: Server[Any],
    lines: AsyncIterable[str],
    stdout: Stdout,
    fast: StdioFastCalls | None,
) -> None:
    """Serve `server` on `lines` and `stdout` until `lines` ends."""
    read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_receive = anyio.create_memory_object_stream[SessionMessage](0)

    async def read() -> None:
        try:
            async with read_send:
                async for line in lines:
                    if fast is not None:
                        answered = await fast.answer(line)
                        if answered is not None:
                            await stdout.send(answered)
                            continue
                    try:
                        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                    except Exception as exc:  # the SDK's transport hands these to the session too
                        await read_send.send(exc)
                        continue
                    if fast is not None:
                        fast.handed_over(message)
                    await read_send.send(SessionMessage(message))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # the session closed its end: there is no one left to hand lines to

    async def write() -> None:
        async with write_receive:
            async for session_message in write_receive:
                message = session_message.message
                line = message.model_dump_json(by_alias=True, exclude_unset=True).encode()
                if fast is None:
                    await stdout.send(line)
                else:
                    # The fast path learns of an answer (to `initialize`) when its place is
                    # settled: not later, so the client's next line finds it up to date; not
                    # sooner, so no fast answer can overtake it.
                    await stdout.send(line, once_placed=partial(fast.sent, message))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(read)
        nursery.start_soon(write)
        await server.run(read_receive, write_send, server.create_initialization_options())


@asynccontextmanager
async def fd_wire(read_fd: int, write_fd: int) -> AsyncIterator[Wire]:
    """Lines from `read_fd` and a `Stdout` on `write_fd` (pipes or sockets), read and written in
    non-blocking mode on duplicates that are closed on the way out."""
    with _non_blocking(read_fd) as reader, _non_blocking(write_fd) as writer:

        async def send_all(data: bytes) -> None:
            view = memoryview(data)
            while view:
                try:
                    view = view[os.write(writer, view) :]
                except BlockingIOError:
                    await trio.lowlevel.wait_writable(writer)

        yield _FdLines(reader), Stdout(send_all)


@asynccontextmanager
async def thread_wire(read_fd: int, write_fd: int) -> AsyncIterator[Wire]:
    """Lines from `read_fd` and a `Stdout` on `write_fd`, with blocking reads and writes in
    worker threads: for what Trio cannot poll (a terminal, a regular file)."""
    lines = _ThreadLines(os.dup(read_fd))
    out = os.dup(write_fd)

    async def send_all(data: bytes) -> None:
        await trio.to_thread.run_sync(_write_all, out, data)

    try:
        yield lines, Stdout(send_all)
    finally:
        os.close(out)
        lines.close()


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


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


@contextmanager
def _non_blocking(fd: int) -> Iterator[int]:
    """A duplicate of `fd` in non-blocking mode. The mode belongs to the open file, which the
    duplicate shares with whoever spawned us: it is restored before the duplicate is closed."""
    duplicate = os.dup(fd)
    was_blocking = os.get_blocking(duplicate)
    os.set_blocking(duplicate, False)
    try:
        yield duplicate
    finally:
        os.set_blocking(duplicate, was_blocking)
        trio.lowlevel.notify_closing(duplicate)
        os.close(duplicate)


class _FdLines:
    """Text lines from a non-blocking fd, decoded as the SDK's stdio transport decodes them."""

    # A client that pipelines faster than we answer would otherwise keep this loop from ever
    # letting the session's tasks (or a cancellation) in: yield at least every this many lines.
    YIELD_EVERY = 64

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = bytearray()
        self._unyielded = 0

    def __aiter__(self) -> _FdLines:
        return self

    async def __anext__(self) -> str:
        self._unyielded += 1
        if self._unyielded >= self.YIELD_EVERY:
            self._unyielded = 0
            await trio.lowlevel.checkpoint()
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                return line.decode("utf-8", errors="replace")
            if not self._buffer:
                # Nothing pending: the client is most likely waiting for our last answer, so
                # wait before reading rather than pay for a read that finds nothing.
                self._unyielded = 0
                await trio.lowlevel.wait_readable(self._fd)
            try:
                chunk = os.read(self._fd, 65536)
            except BlockingIOError:
                self._unyielded = 0
                await trio.lowlevel.wait_readable(self._fd)
                continue
            if not chunk:
                if self._buffer:
                    line = bytes(self._buffer)
                    self._buffer.clear()
                    return line.decode("utf-8", errors="replace")
                raise StopAsyncIteration
            self._buffer += chunk


class _ThreadLines:
    """Text lines from a blocking fd, each read in a worker thread."""

    def __init__(self, fd: int) -> None:
        self._file = os.fdopen(fd, "rb")
        self._reading = False

    def __aiter__(self) -> _ThreadLines:
        return self

    async def __anext__(self) -> str:
        self._reading = True
        # Abandoned on cancellation: a terminal may never send another line.
        line = await trio.to_thread.run_sync(self._file.readline, abandon_on_cancel=True)
        self._reading = False
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")

    def close(self) -> None:
        # An abandoned read may still be blocked on the fd; closing it would free the number
        # for reuse under that read, so then it stays open (the SDK's transport does the same).
        if not self._reading:
            self._file.close()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
