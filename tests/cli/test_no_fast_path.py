"""`wt serve --no-fast-path`: every request goes through the MCP SDK, and clients see the same.

The server runs under a bootstrap that makes building either fast path (HTTP or stdio) an error,
so a request answered outside the SDK cannot go unnoticed; without the flag the same bootstrap
fails at once, which shows the trap is armed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import Any

import mcp
import pytest
import trio

from tests.compat import COMPAT_UNIVERSE, assert_compat_observed, observe_compat_script
from tests.processes import WT, read_until

FAST_PATH_FORBIDDEN = textwrap.dedent(
    """
    import sys
    import windtunnel.mcp._fast_path_http as http_fast_path
    import windtunnel.mcp._fast_path_stdio as stdio_fast_path

    def forbidden(*args, **kwargs):
        raise AssertionError("a fast path was built")

    http_fast_path.HTTPFastPath = forbidden
    stdio_fast_path.StdioFastPath = forbidden
    from windtunnel.cli.main import main
    sys.exit(main(sys.argv[1:]))
    """
)
TRAPPED_WT = [sys.executable, "-c", FAST_PATH_FORBIDDEN]


async def _observe_http(wt: list[str], *flags: str, mode: str) -> dict[str, Any]:
    process = await trio.lowlevel.open_process(
        [*wt, "serve", "--log-format", "json", *flags, str(COMPAT_UNIVERSE)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        url = (await read_until(process.stdout, b"\n")).decode().strip()
        async with mcp.Client(url, mode=mode) as client:
            return await observe_compat_script(client)
    finally:
        process.kill()
        await process.wait()


async def _observe_stdio(wt: list[str], *flags: str, mode: str) -> dict[str, Any]:
    params = mcp.StdioServerParameters(
        command=wt[0],
        args=[*wt[1:], "serve", "--stdio", *flags, str(COMPAT_UNIVERSE)],
        env=dict(os.environ),  # the SDK passes only a few variables by default
    )
    async with mcp.Client(params, mode=mode) as client:
        return await observe_compat_script(client)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_no_fast_path_serves_the_same_answers_through_the_sdk(
    transport: str, mode: str
) -> None:
    observe = _observe_http if transport == "http" else _observe_stdio
    with trio.fail_after(60):
        through_sdk = await observe(TRAPPED_WT, "--no-fast-path", mode=mode)
        with_fast_path = await observe(WT, mode=mode)
    assert_compat_observed(through_sdk)
    assert through_sdk == with_fast_path


def test_the_trap_springs_when_the_fast_path_is_on() -> None:
    done = subprocess.run(
        [*TRAPPED_WT, "serve", str(COMPAT_UNIVERSE)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0
    assert "a fast path was built" in done.stderr
