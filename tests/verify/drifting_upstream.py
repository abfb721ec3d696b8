"""A live upstream in two versions, for `wt verify`: the official `mcp` SDK's `MCPServer`.

    python tests/verify/drifting_upstream.py v1|v2 SENT_LOG          # stdio
    python tests/verify/drifting_upstream.py v1|v2 SENT_LOG http     # prints its URL, serves it

v2 is v1 after a release that changes one thing of each kind `wt verify` classifies (listed in
`V2_CHANGES`, which the tests assert exactly). `send_email` is a write tool (no read-only
annotation): every call appends a line to SENT_LOG, so a test can prove it was never re-sent.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, TypedDict

import hypercorn.config
import hypercorn.trio
import trio
from mcp.server import MCPServer
from mcp_types import ToolAnnotations

READ_ONLY = ToolAnnotations(readOnlyHint=True)


class SearchV1(TypedDict):
    hits: list[str]


class SearchV2(TypedDict):
    results: list[str]
    total: int


def build_server(version: str, sent_log: Path) -> MCPServer:
    v2 = version == "v2"
    server = MCPServer(
        "drifting-upstream",
        version="2.0.0" if v2 else "1.0.0",
        instructions="Look clients up, then write." if v2 else "Look clients up.",
    )

    if v2:

        @server.tool(description="Look up a client by name, in a region.", annotations=READ_ONLY)
        def lookup(query: str, region: str = "eu") -> dict[str, Any]:
            return {"name": query.title(), "tier": 2, "region": region}

        @server.tool(description="Search the catalogue.", annotations=READ_ONLY)
        def search(term: str) -> SearchV2:
            return {"results": [term, term + "s"], "total": 2}

        @server.tool(description="Find records.")
        def find(term: str, limit: int) -> str:
            return f"{term} x{limit}"

        @server.tool(description="Count to n.")
        def count(n: int) -> int:
            return n

        @server.tool(description="Export the catalogue as CSV.", annotations=READ_ONLY)
        def export_csv() -> str:
            return "name,tier\n"

    else:

        @server.tool(description="Look up a client by name.", annotations=READ_ONLY)
        def lookup(query: str) -> dict[str, Any]:
            return {"name": query.title(), "tier": 2}

        @server.tool(description="Search the catalogue.", annotations=READ_ONLY)
        def search(term: str) -> SearchV1:
            return {"hits": [term, term + "s"]}

        @server.tool(description="Find records.")
        def find(term: str) -> str:
            return term

        @server.tool(description="Count to n.")
        def count(n: float) -> float:
            return n

        @server.tool(description="The legacy report.", annotations=READ_ONLY)
        def legacy_report() -> str:
            return "all quiet"

    @server.tool(description="Send an email.")
    def send_email(to: str, body: str) -> str:
        with sent_log.open("a", encoding="utf-8") as log:
            log.write(f"{to}\n")
        return f"sent to {to}"

    @server.resource("res://catalog", name="catalog", description="The catalogue.")
    def catalog() -> str:
        return "lamp, desk"

    if v2:

        @server.resource("res://new", name="new", description="What is new.")
        def new() -> str:
            return "export"

        @server.prompt(description="Greet someone.")
        def greet(name: str, tone: str) -> str:
            return f"Greet {name}, {tone}."

    else:

        @server.resource("res://old", name="old", description="What was.")
        def old() -> str:
            return "legacy"

        @server.prompt(description="Greet someone.")
        def greet(name: str) -> str:
            return f"Greet {name}."

    return server


async def serve_http(server: MCPServer) -> None:
    """Streamable HTTP on a free loopback port; the URL is printed once it listens."""
    config = hypercorn.config.Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.errorlog = None
    async with trio.open_nursery() as nursery:
        app = server.streamable_http_app()
        binds: list[str] = await nursery.start(
            lambda task_status: hypercorn.trio.serve(app, config, task_status=task_status)  # type: ignore[arg-type]
        )
        print(binds[0] + "/mcp", flush=True)


if __name__ == "__main__":
    built = build_server(sys.argv[1], Path(sys.argv[2]))
    if sys.argv[3:] == ["http"]:
        trio.run(serve_http, built)
    else:
        built.run("stdio")
