"""An in-process stdio session: `serve_fds` on OS pipes, and the client's end of them."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import trio

from windtunnel.mcp import MCPServer
from windtunnel.mcp._fast_path_stdio import StdioFastPath
from windtunnel.mcp._protocol_era import served_versions
from windtunnel.mcp._stdio import serve_fds
from windtunnel.mcp._stdio_lite import lite_session, serve_fds_lazily

ANSWERING = ("thread", "trio")
"""Where plain calls are answered: on the reader thread (the server's `SyncAnswer`), or on Trio
(a server that has none, like a mock)."""
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def encode(message: Any) -> bytes:
    return message if isinstance(message, bytes) else json.dumps(message).encode()


@dataclass
class StdioClient:
    """The agent's end: whole lines out, whole lines in."""

    to_server: trio.lowlevel.FdStream
    from_server: trio.lowlevel.FdStream
    sdk_saw: list[tuple[str, Any]]
    """(method, request id) of every message the SDK session handled (a middleware records
    them; a notification's id is None)."""
    _buffer: bytearray = field(default_factory=bytearray)

    async def send(self, message: Any) -> None:
        await self.to_server.send_all(encode(message) + b"\n")

    async def receive(self) -> bytes:
        """The next line the server wrote, without its newline."""
        while (end := self._buffer.find(b"\n")) < 0:
            chunk = await self.from_server.receive_some(1 << 16)
            if not chunk:
                raise EOFError("the server closed stdout")
            self._buffer += chunk
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        return line

    async def request(self, message: dict[str, Any]) -> bytes:
        await self.send(message)
        return await self.receive()


@dataclass
class LiteOutcome:
    """How a session that started without the SDK went: `handed_over` once it is over."""

    handed_over: bool | None = None


@asynccontextmanager
async def lite_stdio_session(server: MCPServer) -> AsyncIterator[tuple[StdioClient, LiteOutcome]]:
    """Serve `server` over a pair of pipes as `wt serve --stdio` does (SDK-free until a line
    needs it: `_stdio_lite`) until the block ends."""
    session = lite_session(server)
    assert session is not None, "the server does not start without the SDK"
    outcome = LiteOutcome()

    async def serve(server_in: int, server_out: int) -> None:
        outcome.handed_over = await serve_fds_lazily(server, session, server_in, server_out)

    async with _piped(serve, non_blocking=False) as client:
        yield client, outcome


@asynccontextmanager
async def _piped(
    serve: Any, *, non_blocking: bool, saw: list[tuple[str, Any]] | None = None
) -> AsyncIterator[StdioClient]:
    """`serve(server_in, server_out)` on one end of two pipes, the client on the other."""
    client_in, server_out = os.pipe()
    server_in, client_out = os.pipe()
    if non_blocking:
        os.set_blocking(server_in, False)
        os.set_blocking(server_out, False)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve, server_in, server_out)
            to_server = trio.lowlevel.FdStream(os.dup(client_out))
            from_server = trio.lowlevel.FdStream(os.dup(client_in))
            async with to_server, from_server:
                yield StdioClient(to_server, from_server, saw if saw is not None else [])
                os.close(client_out)
                client_out = -1
                await to_server.aclose()  # stdin's last writer gone: EOF, the session ends
    finally:
        for fd in (client_in, server_out, server_in, client_out):
            if fd >= 0:
                os.close(fd)


@asynccontextmanager
async def stdio_session(
    server: MCPServer, *, fast: bool, answering: str = "thread", non_blocking: bool = False
) -> AsyncIterator[StdioClient]:
    """Serve `server` over a pair of pipes until the block ends (then stdin closes); with
    `non_blocking`, the server's ends are in non-blocking mode, as a parent may leave them."""
    assert answering in ANSWERING
    sdk = server.sdk_server(notify=True)  # as `MCPServer.serve_stdio` builds it
    saw: list[tuple[str, Any]] = []

    async def record(ctx: Any, call_next: Any) -> Any:
        saw.append((ctx.method, ctx.request_id))
        return await call_next(ctx)

    sdk.middleware.append(record)
    messaging = server.messaging_tools()
    tools = [spec.name for spec in server.tool_specs() if spec.name not in messaging]
    now = server.sync_answer() if answering == "thread" else None
    handshake_only = served_versions(server.surface().protocol_version) is not None
    calls = (
        StdioFastPath(sdk, tools, server.handle_call, now, handshake_only=handshake_only)
        if fast
        else None
    )

    async def serve(server_in: int, server_out: int) -> None:
        ordered = server.ordered_tools()
        await serve_fds(sdk, server_in, server_out, calls, ordered, handshake_only=handshake_only)

    async with _piped(serve, non_blocking=non_blocking, saw=saw) as client:
        yield client
