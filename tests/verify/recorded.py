"""Universes recorded for the `wt verify` tests by `wt record`'s own proxy, from real servers."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import mcp
import trio

from windtunnel.record import RecordingProxy, RedactionRules

DRIFTING = Path(__file__).with_name("drifting_upstream.py")

Session = Callable[[mcp.Client], Awaitable[None]]


def drifting_command(version: str, sent_log: Path) -> list[str]:
    return [sys.executable, str(DRIFTING), version, str(sent_log)]


def record(
    upstream: Sequence[str],
    session: Session,
    path: Path,
    *,
    name: str,
    redact: RedactionRules | None = None,
) -> Path:
    """Run `session` through a recording proxy in front of `upstream`; save the universe."""
    return trio.run(lambda: record_async(upstream, session, path, name=name, redact=redact))


async def record_async(
    upstream: Sequence[str],
    session: Session,
    path: Path,
    *,
    name: str,
    redact: RedactionRules | None = None,
) -> Path:
    """`record` from inside a Trio run."""
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            proxy = RecordingProxy(list(upstream), name=name, redact=redact)
            url = await proxy.start(nursery)
            async with mcp.Client(url, mode="legacy") as client:
                await session(client)
            await proxy.stop()
    proxy.save(path)
    return path


async def drifting_session(client: mcp.Client) -> None:
    """Everything the v1 drifting upstream shows, and one call of most of its tools."""
    await client.list_tools()
    await client.list_resources()
    await client.list_prompts()
    calls: list[tuple[str, dict[str, Any]]] = [
        ("lookup", {"query": "ana"}),
        ("search", {"term": "lamp"}),
        ("send_email", {"to": "ana@example.com", "body": "hi"}),
        ("legacy_report", {}),
        ("find", {"term": "lamp"}),
    ]
    for name, args in calls:
        await client.call_tool(name, args)


@contextmanager
def drifting_over_http(version: str, sent_log: Path) -> Iterator[str]:
    """The drifting upstream as a Streamable HTTP server in a process of its own, its URL."""
    process = subprocess.Popen(
        [*drifting_command(version, sent_log), "http"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        yield url
    finally:
        process.kill()
        process.wait(timeout=10)
