"""Running `wt` as a real subprocess in tests: start, read the URL it prints, stop it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio
from mcp import StdioServerParameters

WT = [sys.executable, "-m", "windtunnel"]


def wt_serve_stdio(stderr_to: str | os.PathLike[str], *args: str) -> StdioServerParameters:
    """What the SDK's stdio client spawns: `wt serve --stdio ARGS`, its stderr sent to the path
    `stderr_to` (a file or a FIFO) by a shell, as an agent's launcher would."""
    return StdioServerParameters(
        command="/bin/sh",
        args=["-c", f'exec "$0" "$@" 2>{stderr_to}', *WT, "serve", "--stdio", *args],
    )


async def read_until(stream: trio.abc.ReceiveStream, marker: bytes) -> bytes:
    """Read until `marker` has arrived (a deadline comes from the caller)."""
    data = b""
    while marker not in data:
        chunk = await stream.receive_some()
        if not chunk:
            raise AssertionError(f"stream closed before {marker!r}; got {data!r}")
        data += chunk
    return data


@asynccontextmanager
async def wt_serve(
    *args: str, prints_config: bool = False
) -> AsyncIterator[tuple[trio.Process, bytes]]:
    """`wt serve ARGS` until it printed its URL (or, with several universes, the JSON config)."""
    process = await trio.lowlevel.open_process(
        [*WT, "serve", "--log-format", "json", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        marker = b"}\n" if prints_config else b"\n"
        first = await read_until(process.stdout, marker)
        yield process, first
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGKILL)
            with trio.CancelScope(shield=True):
                await process.wait()
