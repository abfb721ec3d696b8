"""Live upstreams for the recording tests, and the script every client runs through them."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import hypercorn.config
import hypercorn.trio
import mcp
import trio
from mcp import StdioServerParameters

from tests.processes import WT
from tests.record.sdk_upstream import SECRET, build_server

SDK_UPSTREAM = [sys.executable, str(Path(__file__).with_name("sdk_upstream.py"))]

SCRIPT: list[tuple[str, dict[str, Any]]] = [
    ("lookup", {"query": "bluewing logistics"}),
    ("counter", {}),
    ("counter", {}),
    ("fail", {"reason": "card declined"}),
    ("lookup", {"query": "bluewing logistics"}),
    ("issue_token", {"user": "ana"}),
    ("use_token", {"api_key": SECRET}),
]
"""Structured content, a stateful tool called twice, a tool error, a repeat, a secret."""


def dump(value: Any) -> Any:
    return value.model_dump(mode="json", by_alias=True, exclude_none=True)


def tool_view(result: Any) -> dict[str, Any]:
    """What a tool answered, without the protocol's envelope (`_meta` names the server)."""
    view = dump(result)
    return {key: view[key] for key in ("content", "structuredContent", "isError") if key in view}


async def run_script(client: mcp.Client) -> list[Any]:
    """tools/list, then every call of SCRIPT; each answer as the client decoded it."""
    seen: list[Any] = [dump(await client.list_tools())]
    for name, args in SCRIPT:
        seen.append(dump(await client.call_tool(name, args)))
    return seen


@asynccontextmanager
async def sdk_http_upstream(
    *,
    stateless: bool = False,
    shutdown: trio.Event | None = None,
    stopped: trio.Event | None = None,
) -> AsyncIterator[str]:
    """A fresh SDK `MCPServer` over Streamable HTTP (stateful with event streams by default).

    Setting `shutdown` stops it early; `stopped` is set once it no longer listens."""
    app = build_server().streamable_http_app(stateless_http=stateless)
    config = hypercorn.config.Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.errorlog = None
    config.graceful_timeout = 0.2
    shutdown = shutdown if shutdown is not None else trio.Event()
    async with trio.open_nursery() as nursery:

        async def serve(task_status: trio.TaskStatus[list[str]]) -> None:
            await hypercorn.trio.serve(
                app,  # type: ignore[arg-type]
                config,
                shutdown_trigger=shutdown.wait,
                task_status=task_status,
            )
            if stopped is not None:
                stopped.set()

        binds: list[str] = await nursery.start(serve)
        try:
            yield binds[0] + "/mcp"
        finally:
            shutdown.set()


def sdk_stdio_upstream() -> StdioServerParameters:
    return StdioServerParameters(command=SDK_UPSTREAM[0], args=SDK_UPSTREAM[1:])


def wt_record_stdio(stderr_to: Path, *args: str) -> StdioServerParameters:
    """What an agent spawns instead of the server: `wt record --stdio ARGS`, stderr to a file."""
    return StdioServerParameters(
        command="/bin/sh",
        args=["-c", f'exec "$0" "$@" 2>{stderr_to}', *WT, "record", "--stdio", *args],
    )
