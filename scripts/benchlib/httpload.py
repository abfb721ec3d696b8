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


class Poster:
    """POSTs to one URL over one kept-alive connection, checking every answer."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.path = parts.path or "/"
        self.conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80)

    def post(self, body: bytes = CALL_BODY) -> bytes:
        self.conn.request("POST", self.path, body, HEADERS)
        response = self.conn.getresponse()
        data = response.read()
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
