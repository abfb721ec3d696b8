"""The one place that touches the `mcp` SDK server and hypercorn (DESIGN §5).

Everything above this module speaks `MCPCall`s and plain dicts; this module translates them to the
SDK's low-level `Server`, serves it over Streamable HTTP (hypercorn's protocol code on the Trio
worker in `_http_worker`) or over stdio, and maps answers to `CallToolResult`s:

- a recorded MCP `CallToolResult` (see `is_tool_result`) is served as recorded;
- an object becomes `structuredContent` plus a text block with its JSON (sorted keys);
- a string becomes a text block; anything else becomes a text block with its JSON;
- an answer flagged as an error (`fail_call`, a failed hook, a raising mock tool) sets `isError`;
- a call to an undeclared tool is the JSON-RPC error -32602 naming the tool.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import hypercorn.config
import mcp_types as types
import pydantic
import trio
from hypercorn.app_wrappers import ASGIWrapper
from hypercorn.config import Sockets
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

from ..calls import MCPCall, is_tool_result
from . import _http_worker

__all__ = [
    "MAX_REQUEST_BODY",
    "ASGIApp",
    "Answer",
    "HTTPServing",
    "ToolSpec",
    "bind_sockets",
    "build_sdk_server",
    "serve_http",
    "serve_stdio",
    "to_call_tool_result",
]

MAX_REQUEST_BODY = 4 * 1024 * 1024
GRACEFUL_TIMEOUT_S = 0.5

Answer = Callable[[str, dict[str, Any]], Awaitable[MCPCall]]
ASGIApp = Callable[
    [dict[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
    Awaitable[None],
]
"""Resolve one call and record it; the returned `MCPCall` says what to send."""

# The SDK logs client mistakes (bad Host headers, malformed bodies) and handler tracebacks through
# stdlib logging; the CLI decides where they go. Hypercorn's per-server "Running on" lines are off.
logging.getLogger("mcp").addHandler(logging.NullHandler())


@dataclass(frozen=True)
class ToolSpec:
    """What `tools/list` offers for one tool."""

    name: str
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    description: str = ""


def _text(value: Any) -> dict[str, Any]:
    # Sorted keys: a live mock and its frozen replay render the same text, whatever the key order.
    text = (
        value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    )
    return {"type": "text", "text": text}


def to_call_tool_result(call: MCPCall) -> types.CallToolResult:
    """Map an answered call to the `CallToolResult` the agent receives."""
    result = call.result
    if is_tool_result(result):
        try:
            return types.CallToolResult.model_validate(result)
        except pydantic.ValidationError:
            pass  # blocks the SDK cannot represent: fall back to their JSON as text
    wire: dict[str, Any] = {"content": [_text(result)]}
    if isinstance(result, dict):
        wire["structuredContent"] = result
    if call.is_error:
        wire["isError"] = True
    return types.CallToolResult.model_validate(wire)


def build_sdk_server(name: str, version: str, tools: list[ToolSpec], answer: Answer) -> Server[Any]:
    """A low-level SDK server whose only source of answers is `answer`."""
    listed = types.ListToolsResult(
        tools=[
            types.Tool(name=t.name, description=t.description or None, input_schema=t.input_schema)
            for t in tools
        ]
    )
    schemas = {t.name: t.input_schema for t in tools}

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listed

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        args = dict(params.arguments or {})
        try:
            call = await answer(params.name, args)
        except MCPError:
            raise
        except Exception as exc:
            # Never leak a traceback or let one tool break the server; the message is ours.
            logging.getLogger("windtunnel").exception("tool call failed")
            raise MCPError(
                code=INTERNAL_ERROR, message=f"tool {params.name!r} failed: {exc}"
            ) from exc
        divergence = call.divergence
        if divergence is not None and divergence.get("reason") == "unknown_tool":
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        return to_call_tool_result(call)

    server: Server[Any] = Server(
        name,
        version=version,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        # Without this the 2026-07-28 path re-runs on_list_tools on every call to check headers.
        get_tool_input_schema=schemas.get,
    )
    # The default middleware is OpenTelemetry's; replay servers do not export spans.
    server.middleware = []
    return server


def _bind(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@dataclass
class HTTPServing:
    """A running HTTP server: its URL and the handles that stop it."""

    url: str
    shutdown: trio.Event
    cancel_scope: trio.CancelScope
    finished: trio.Event

    async def stop(self, *, grace_s: float = 2.0) -> None:
        """Graceful shutdown, then a hard cancel if it takes longer than `grace_s`."""
        self.shutdown.set()
        with trio.move_on_after(grace_s):
            await self.finished.wait()
            return
        self.cancel_scope.cancel()
        await self.finished.wait()


def _config(host: str, port: int) -> hypercorn.config.Config:
    config = _http_worker.Config()
    config.bind = [_bind(host, port)]
    config.accesslog = None
    config.errorlog = None
    config.graceful_timeout = GRACEFUL_TIMEOUT_S
    return config


def bind_sockets(host: str, port: int) -> Sockets:
    """Bind and listen now, so a taken port is a plain `OSError` for the caller."""
    config = _config(host, port)
    sockets = config.create_sockets()
    for sock in sockets.insecure_sockets:
        sock.listen(config.backlog)
    return sockets


async def serve_http(
    server: Server[Any],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    sockets: Sockets | None = None,
    path: str = "/mcp",
    wrap_app: Callable[[ASGIApp], ASGIApp] | None = None,
    task_status: trio.TaskStatus[HTTPServing] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve `server` over Streamable HTTP until stopped; report an `HTTPServing` when bound.

    Stateless JSON mode answers both protocol eras (the `initialize` handshake, and 2026-07-28)
    with no per-client session state. The SDK checks Host/Origin for loopback hosts (DNS
    rebinding) and limits request bodies to 4 MiB (HTTP 413).
    """
    app = server.streamable_http_app(
        streamable_http_path=path,
        stateless_http=True,
        json_response=True,
        host=host,
        max_request_body_size=MAX_REQUEST_BODY,
    )
    served: Any = wrap_app(app) if wrap_app is not None else app
    config = _config(host, port)
    if sockets is None:
        sockets = bind_sockets(host, port)
    shutdown = trio.Event()
    finished = trio.Event()
    scope = trio.CancelScope()

    async def run(task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED) -> None:
        await _http_worker.serve(
            ASGIWrapper(served),
            config,
            sockets=sockets,
            shutdown_trigger=shutdown.wait,
            task_status=task_status,
        )

    try:
        with scope:
            async with trio.open_nursery() as nursery:
                binds: list[str] = await nursery.start(run)
                task_status.started(HTTPServing(binds[0] + path, shutdown, scope, finished))
    finally:
        for sock in sockets.insecure_sockets:
            sock.close()  # hypercorn closes its listeners; this covers a cancel before it started
        finished.set()


async def serve_stdio(server: Server[Any]) -> None:
    """Serve `server` on this process's stdin/stdout until stdin closes (both protocol eras).

    When both are pipes or sockets (an agent spawning us), they are read and written with Trio's
    non-blocking fd streams: the SDK's default wraps them in files that hop to a worker thread
    for every line read and every write, which cost more than the rest of a call put together.
    """
    async with (
        _stdio_streams() as (stdin, stdout),
        stdio_server(stdin, stdout) as (read_stream, write_stream),
    ):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@contextmanager
def _claimed(fd: int, diversion: int) -> Iterator[int]:
    """A private duplicate of `fd`, with `fd` itself pointed at `diversion` meanwhile, so stray
    reads and prints (ours, a hook's, a child's) never touch the protocol stream."""
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


class _FdLines:
    """Text lines from a non-blocking fd, as the SDK's stdio transport iterates its stdin."""

    def __init__(self, stream: trio.lowlevel.FdStream) -> None:
        self._stream = stream
        self._buffer = bytearray()

    def __aiter__(self) -> _FdLines:
        return self

    async def __anext__(self) -> str:
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                return line.decode("utf-8", errors="replace")
            chunk = await self._stream.receive_some(65536)
            if not chunk:
                if self._buffer:
                    line = bytes(self._buffer)
                    self._buffer.clear()
                    return line.decode("utf-8", errors="replace")
                raise StopAsyncIteration
            self._buffer += chunk


class _FdWriter:
    """The SDK's stdio transport writes a message, then flushes: one write per message here."""

    def __init__(self, stream: trio.lowlevel.FdStream) -> None:
        self._stream = stream
        self._pending: list[bytes] = []

    async def write(self, text: str) -> None:
        self._pending.append(text.encode("utf-8"))

    async def flush(self) -> None:
        data, self._pending = b"".join(self._pending), []
        if data:
            await self._stream.send_all(data)


@asynccontextmanager
async def _stdio_streams() -> AsyncIterator[tuple[Any, Any]]:
    if sys.platform == "win32" or not (_is_pipe(0) and _is_pipe(1)):
        yield None, None  # the SDK's own thread-backed files
        return
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        with _claimed(0, devnull) as stdin_fd, _claimed(1, 2) as stdout_fd:
            # FdStream owns (and closes) its fd, puts it in non-blocking mode and restores the
            # mode on close; the claimed duplicates stay open to restore fds 0 and 1 after.
            stdin = trio.lowlevel.FdStream(os.dup(stdin_fd))
            stdout = trio.lowlevel.FdStream(os.dup(stdout_fd))
            async with stdin, stdout:
                yield _FdLines(stdin), _FdWriter(stdout)
    finally:
        os.close(devnull)
