"""A minimal keep-alive HTTP client for driving servers with JSON-RPC `tools/call` posts."""

from __future__ import annotations

import http.client
import json
import time
from urllib.parse import urlsplit

from .targets import CALL_ARGS, TOOL

__all__ = ["CALL_BODY", "HEADERS", "Poster"]

CALL_BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": TOOL, "arguments": CALL_ARGS},
    }
).encode()
# What a Streamable HTTP client sends in the initialize era (NOTES.md).
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}


INITIALIZE_BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    }
).encode()
INITIALIZED_BODY = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


class Poster:
    """POSTs to one URL over one kept-alive connection, checking every answer; with `session`,
    in a Streamable HTTP session it opens as an SDK client does (`initialize`, then
    `notifications/initialized`, then every request names the session)."""

    def __init__(self, url: str, *, session: bool = False) -> None:
        parts = urlsplit(url)
        self.path = parts.path or "/"
        self.conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80)
        self.headers = dict(HEADERS)
        if session:
            self.open_session()

    def open_session(self) -> None:
        headers = {k: v for k, v in HEADERS.items() if k != "MCP-Protocol-Version"}
        self.conn.request("POST", self.path, INITIALIZE_BODY, headers)
        response = self.conn.getresponse()
        response.read()
        session_id = response.getheader("mcp-session-id")
        if response.status != 200 or session_id is None:
            raise RuntimeError(f"no session opened: {response.status}")
        self.headers["Mcp-Session-Id"] = session_id
        self.conn.request("POST", self.path, INITIALIZED_BODY, self.headers)
        acknowledged = self.conn.getresponse()
        acknowledged.read()
        if acknowledged.status != 202:
            raise RuntimeError(f"notifications/initialized: {acknowledged.status}")

    def post(self, body: bytes = CALL_BODY) -> bytes:
        self.conn.request("POST", self.path, body, self.headers)
        response = self.conn.getresponse()
        data = response.read()
        if "close" in (response.getheader("connection") or "").lower():
            # The server's last request on this connection (hypercorn's keep-alive limit). An
            # SSE answer says `keep-alive` first (the SDK's header) and `close` after it, and
            # http.client reads only the first: close here, and the next post reconnects.
            self.conn.close()
        if response.status != 200 or b'"result"' not in data:
            raise RuntimeError(f"bad answer {response.status}: {data[:200]!r}")
        return data

    def run(self, n: int) -> float:
        """`n` sequential posts; wall seconds."""
        start = time.perf_counter()
        for _ in range(n):
            self.post()
        return time.perf_counter() - start

    def close(self) -> None:
        self.conn.close()
