"""stdio: MCP over this process's stdin and stdout, one JSON-RPC message per line (DESIGN §5).

This stands in for the SDK's `stdio_server`, with its framing (each line validated by the SDK's
message adapter and handed to its session; each message the session sends serialized as the SDK
serializes it), so that one reader sees every incoming line first and one lock orders every
write:

- a reader thread reads stdin with blocking reads and decides, line by line, whether the fast
  path answers it (`_fast_path_stdio`: a plain `tools/call` the SDK would serve). It answers
  those itself when the server answers without Trio (`SyncAnswer`: recorded servers), else has
  Trio answer them (a mock's async tools, the router's backpressure); every other line it
  hands, unchanged and in order, to the SDK session on Trio;
- `Stdout.write_line` writes one whole line at a time, under a lock, for the reader thread and
  for Trio alike (Trio's writes run in worker threads, so a client that stops reading never
  stalls the Trio loop): responses never interleave;
- a line that is not JSON is answered with a parse error (-32700), as over HTTP; the SDK's
  own stdio transport only logs it and leaves the client waiting;
- calls whose order matters (`ordered` tools: a universe's sequence-mode tools) are consumed in
  the order the client sent them. A line answered by the fast path is consumed before the next
  line is read; the SDK session runs each request in a task of its own, which Trio may run
  after a later line was answered, so a call of an ordered tool handed to it holds the reader
  until its answer is written.

Why a thread: on Trio every line costs a pass through its scheduler (an epoll registration, a
task wake-up, the run loop's bookkeeping) before any of our code runs, and the client waits for
all of it. On the reader thread, with the answer's listeners told after the write, a call costs
close to what a canned blocking responder does (A/B figures in docs/benchmarks.md).

While serving, fds 0 and 1 point at /dev/null and stderr, as under the SDK's transport, so stray
reads and prints (ours, a hook's, a child's) never touch the protocol stream.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Awaitable, Callable, Collection, Sequence
from functools import partial
from typing import Any, NamedTuple

import anyio
import mcp_types as types
import pydantic_core
import structlog
import trio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server import Server

from ._fast_path_stdio import StdioFastPath
from ._plain_call import PlainCall
from ._sdk_internals import SessionMessage, serve_handshake_era
from ._stdio_fds import Stdout, claimed_stdio, client_gone_ends_serving, read_some

__all__ = ["Resume", "Stdout", "serve_fds", "serve_stdio"]

logger = structlog.get_logger("windtunnel.mcp")

STOP_DRAIN_S = 2.0
"""How long stopping waits for the call the reader thread is answering (its write may be stuck
on a client that stopped reading)."""
EOF_DRAIN_S = 5.0
"""How long the end of stdin waits for the answers to requests already handed to the SDK (a
server-to-client request whose client is gone never completes)."""


class Resume(NamedTuple):
    """Where an SDK-free start-up (`_stdio_lite`) left a session it hands over: `prelude`, the
    lines the SDK must see first to be in the session's state (their answers were already
    written: the SDK's are dropped, those of the requests whose ids are `silenced`), and
    `pending`, what was read of stdin and not answered yet (from the line that needs the SDK)."""

    prelude: Sequence[bytes]
    silenced: frozenset[str]
    pending: bytes


async def serve_stdio(
    server: Server[Any],
    fast_path: StdioFastPath | None = None,
    ordered: Collection[str] = (),
    *,
    handshake_only: bool = False,
) -> None:
    """Serve `server` on stdin/stdout until stdin closes, in both protocol eras (the client's
    first request opens one), or with `handshake_only` in the handshake era only
    (`_protocol_era`: a replay of a handshake-era server).

    With `fast_path`, plain `tools/call` lines are answered by it; every other line goes to the SDK.
    Calls of the `ordered` tools are consumed in the order they were sent.
    """
    if sys.platform == "win32":  # no fd diversion there: the SDK's own transport, no fast path
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read_stream, write_stream):
            await _run_session(server, read_stream, write_stream, handshake_only)
        return
    with claimed_stdio() as (stdin_fd, stdout_fd), client_gone_ends_serving():
        await serve_fds(
            server, stdin_fd, stdout_fd, fast_path, ordered, handshake_only=handshake_only
        )


async def _run_session(
    server: Server[Any],
    read_stream: MemoryObjectReceiveStream[SessionMessage | Exception],
    write_stream: MemoryObjectSendStream[SessionMessage],
    handshake_only: bool,
) -> None:
    """The SDK's session on the streams: `Server.run` (both eras), or its handshake-only loop."""
    if handshake_only:
        await serve_handshake_era(server, read_stream, write_stream)
    else:
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_fds(
    server: Server[Any],
    read_fd: int,
    write_fd: int,
    fast_path: StdioFastPath | None,
    ordered: Collection[str] = (),
    resume: Resume | None = None,
    *,
    handshake_only: bool = False,
) -> None:
    """Serve `server` on lines read from `read_fd` and written to `write_fd` (any kind of file:
    pipes, sockets, terminals, regular files) until `read_fd` ends. The fds stay the caller's.
    With `resume`, the session an SDK-free start-up began goes on here (see `Resume`); with
    `handshake_only`, in the handshake era only (see `serve_stdio`)."""
    ordered = frozenset(ordered)
    unanswered: dict[types.RequestId, trio.Event] = {}
    """Ordered calls handed to the SDK, by id: set once the answer is written."""
    in_flight: set[types.RequestId] = set()
    """Every request handed to the SDK whose answer is not written yet."""
    answer_written = trio.lowlevel.ParkingLot()
    read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_receive = anyio.create_memory_object_stream[SessionMessage](0)
    # Duplicates of our own: one a read is still blocked on when we leave is never closed, so
    # its number cannot be reused under that read.
    reader_fd, writer_fd = os.dup(read_fd), os.dup(write_fd)
    stdout = Stdout(writer_fd)

    async def hand_over(line: str, plain: tuple[PlainCall, str] | None) -> bool:
        """Answer `plain` (the fast path's call in `line`) on Trio, or give `line` to the SDK;
        False once the session is gone."""
        try:
            if fast_path is not None and plain is not None:
                await stdout.send(await fast_path.answer(plain))
                return True
            try:
                message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            except Exception as exc:  # the SDK's transport hands these to the session too
                unreadable = _parse_error(line)
                if unreadable is not None:
                    await stdout.send(unreadable)
                await read_send.send(exc)
                return True
            if fast_path is not None:
                fast_path.handed_over(message)
            if isinstance(message, types.JSONRPCRequest):
                in_flight.add(message.id)
            consumed = _ordered_call(message, ordered, unanswered)
            await read_send.send(SessionMessage(message))
            if consumed is not None:
                await consumed.wait()  # no later line is read before this call is consumed
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return False  # the session closed its end: there is no one left to hand lines to
        return True

    silenced: set[Any] = set(resume.silenced) if resume is not None else set()
    reader = _Reader(reader_fd, stdout, fast_path, hand_over, resume.pending if resume else b"")

    async def read() -> None:
        async with read_send:
            for line in resume.prelude if resume is not None else ():
                await hand_over(line.decode(), None)
            await trio.to_thread.run_sync(reader.run, abandon_on_cancel=True)
            # A client may close stdin right after its last request (MCP clients shut a server
            # down that way): closing the session now would cancel the requests still being
            # answered, and their answers would never be written.
            with trio.move_on_after(EOF_DRAIN_S):
                while in_flight:
                    await answer_written.park()

    async def write() -> None:
        async with write_receive:
            async for session_message in write_receive:
                message = session_message.message
                line = message.model_dump_json(by_alias=True, exclude_unset=True).encode()
                if (
                    isinstance(message, types.JSONRPCResponse | types.JSONRPCError)
                    and message.id in silenced
                ):
                    # Already answered before the hand-over: the SDK only catches up.
                    silenced.discard(message.id)
                    if fast_path is not None:
                        fast_path.sent(message)
                    in_flight.discard(message.id)
                    answer_written.unpark_all()
                    continue
                if fast_path is None:
                    await stdout.send(line)
                else:
                    # The fast path learns of an answer (to `initialize`) when its place is
                    # settled: not later, so the client's next line finds it up to date; not
                    # sooner, so no fast answer can overtake it.
                    await stdout.send(line, once_placed=partial(fast_path.sent, message))
                if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
                    in_flight.discard(message.id)
                    answer_written.unpark_all()
                    consumed = unanswered.pop(message.id, None)  # type: ignore[arg-type]
                    if consumed is not None:
                        consumed.set()

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(read)
            nursery.start_soon(write)
            await _run_session(server, read_receive, write_send, handshake_only)
    finally:
        # Waits for a line the reader thread is answering: its listeners (the events file) hear
        # of the call before we return, also when a signal stops us right after the answer.
        reader.stop(deadline_s=STOP_DRAIN_S)
        if stdout.close():
            os.close(writer_fd)
        if reader.done:
            os.close(reader_fd)


def _parse_error(line: str) -> bytes | None:
    """The answer to a line that is not JSON (or nests past the SDK's parser): the SDK's
    Streamable HTTP transport's answer to such a body, -32700 with a null id, as JSON-RPC asks.
    The SDK's stdio transport only logs it, and a client waiting for the answer would wait
    forever. None for a blank line (no message) or a readable one (the SDK's to judge)."""
    if not line.strip():
        return None
    try:
        pydantic_core.from_json(line.rstrip("\r\n"))  # positions as in the same HTTP body
    except ValueError as exc:
        error = types.ErrorData(code=types.PARSE_ERROR, message=f"Parse error: {exc}")
        message = types.JSONRPCError(jsonrpc="2.0", id=None, error=error)
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode()
    return None


def _ordered_call(
    message: types.JSONRPCMessage,
    ordered: frozenset[str],
    unanswered: dict[types.RequestId, trio.Event],
) -> trio.Event | None:
    """If `message` calls an `ordered` tool, an event set once its answer is written."""
    if not ordered or not isinstance(message, types.JSONRPCRequest):
        return None
    params = message.params
    if message.method != "tools/call" or not isinstance(params, dict):
        return None
    if params.get("name") not in ordered or message.id in unanswered:
        return None
    answered = unanswered[message.id] = trio.Event()
    return answered


class _Reader:
    """The reader thread's work: lines from a blocking read, answered or handed to Trio."""

    def __init__(
        self,
        fd: int,
        stdout: Stdout,
        fast_path: StdioFastPath | None,
        hand_over: Callable[[str, tuple[PlainCall, str] | None], Awaitable[bool]],
        pending: bytes = b"",
    ) -> None:
        self._fd = fd
        self._pending = pending
        self._stdout = stdout
        self._fast_path = fast_path
        self._hand_over = hand_over
        self._stopped = False
        self._answering = threading.Lock()
        """Held while a line is answered on this thread, from the call to its listeners."""
        self.done = False
        """The thread left `run`: no read is blocked on the fd."""

    def stop(self, *, deadline_s: float) -> None:
        """Answer no more lines, once the one being answered (if any) is done and its listeners
        told, waiting at most `deadline_s` for it (a read under way cannot be interrupted)."""
        answering_done = self._answering.acquire(timeout=deadline_s)
        self._stopped = True
        if answering_done:
            self._answering.release()

    def run(self) -> None:
        try:
            buffer = bytearray()
            chunk = self._pending
            while chunk or (chunk := read_some(self._fd)):
                buffer += chunk
                chunk = b""
                while (end := buffer.find(b"\n")) >= 0:
                    line = bytes(buffer[: end + 1])
                    del buffer[: end + 1]
                    if not self._line(line.decode("utf-8", errors="replace")):
                        return
            if buffer:  # a last line without its newline
                self._line(buffer.decode("utf-8", errors="replace"))
        finally:
            self.done = True

    def _line(self, line: str) -> bool:
        plain = None
        with self._answering:
            if self._stopped:
                return False
            fast_path = self._fast_path
            if fast_path is not None:
                plain = fast_path.plain(line)
                if plain is not None and fast_path.now is not None:
                    self._stdout.write_line(fast_path.answer_now(plain))
                    fast_path.written()  # listeners hear of the call now, off the client's wait
                    return True
        # Back into the task that started this thread: Trio gets lines in order, one at a time.
        return trio.from_thread.run(self._hand_over, line, plain)
