"""A live upstream for the recording tests: the official `mcp` SDK's `MCPServer`, real tools.

Run as a program it serves stdio (`python tests/record/sdk_upstream.py`); the tests serve the same
server over Streamable HTTP with `streamable_http_app()` under hypercorn.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
from mcp.server import MCPServer

SECRET = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e"
"""What `issue_token` hands out: looks like an API key, so redaction tests can hunt it."""


def build_server() -> MCPServer:
    server = MCPServer("record-upstream")
    count = {"n": 0}

    @server.tool(description="Look up a client by name.")
    def lookup(query: str) -> dict[str, Any]:
        return {"name": query.title(), "email": "ops@bluewing.example", "tier": 2}

    @server.tool(description="Count calls: every call answers the next number.")
    def counter() -> int:
        count["n"] += 1
        return count["n"]

    @server.tool(description="Always fails with the reason given.")
    def fail(reason: str) -> str:
        raise ValueError(reason)

    @server.tool(description="Issue an API token.")
    def issue_token(user: str) -> dict[str, Any]:
        return {"user": user, "api_key": SECRET}

    @server.tool(description="Use an API token.")
    def use_token(api_key: str) -> str:
        return "accepted" if api_key == SECRET else "rejected"

    @server.tool(description="Answer after `seconds`.")
    async def slow(seconds: float) -> str:
        await anyio.sleep(seconds)
        return f"slept {seconds}"

    @server.tool(description="A text of `size` bytes.")
    def blob(size: int) -> str:
        return "x" * size

    @server.tool(description="Exit the server process at once (a crash mid-session).")
    def crash() -> str:
        os._exit(3)

    return server


if __name__ == "__main__":
    build_server().run("stdio")
