"""A live fastmcp server for the recording tests; runs in `.venvs/fw-fastmcp` (tests/requirements).

python fastmcp_upstream.py stdio
python fastmcp_upstream.py http     # prints its URL (a socket bound on port 0), then serves
"""

import asyncio
import socket
import sys

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError

server = FastMCP("fastmcp-upstream")
count = {"n": 0}


@server.tool(description="Look up a client by name.")
def lookup(query: str) -> dict:
    return {"name": query.title(), "tier": 2}


@server.tool(description="Count calls: every call answers the next number.")
def counter() -> int:
    count["n"] += 1
    return count["n"]


@server.tool(description="Always fails with the reason given.")
def fail(reason: str) -> str:
    raise ToolError(reason)


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio", show_banner=False)
    else:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        print(f"http://127.0.0.1:{listener.getsockname()[1]}/mcp", flush=True)
        asyncio.run(
            server.run_http_async(show_banner=False, sockets=[listener], log_level="warning")
        )
