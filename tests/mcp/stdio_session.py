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
from windtunnel.mcp._stdio import serve_fds

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
    calls = StdioFastPath(sdk, tools, server.handle_call, now) if fast else None
    client_in, server_out = os.pipe()
    server_in, client_out = os.pipe()
    if non_blocking:
        os.set_blocking(server_in, False)
        os.set_blocking(server_out, False)
    try:
        async with trio.open_nursery() as nursery:

            async def serve() -> None:
                await serve_fds(sdk, server_in, server_out, calls, server.ordered_tools())

            nursery.start_soon(serve)
            to_server = trio.lowlevel.FdStream(os.dup(client_out))
            from_server = trio.lowlevel.FdStream(os.dup(client_in))
            async with to_server, from_server:
                yield StdioClient(to_server, from_server, saw)
                os.close(client_out)
                client_out = -1
                await to_server.aclose()  # stdin's last writer gone: EOF, the session ends
    finally:
        for fd in (client_in, server_out, server_in, client_out):
            if fd >= 0:
                os.close(fd)
