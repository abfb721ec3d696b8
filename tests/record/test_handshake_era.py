"""A handshake-era upstream from npm (`@modelcontextprotocol/server-everything` behind the
TypeScript SDK's stateful Streamable HTTP transport) refuses the SDK client's `server/discover`
probe with an `id: null` error: that is the probe's answer, not a request left unanswered. And a
node server started by its script is named after its package."""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import mcp
import pytest
import trio

from tests.processes import read_until
from tests.record.test_reference_servers import EVERYTHING
from tests.record.upstreams import wt_record_stdio
from windtunnel.cli.record_main import parse_record_upstreams
from windtunnel.record import RecordingProxy
from windtunnel.universe import load_universe

EVERYTHING_HTTP = Path(__file__).parents[1] / "node" / "everything_http.mjs"

pytestmark = pytest.mark.node


@asynccontextmanager
async def everything_over_http() -> AsyncIterator[str]:
    """server-everything over the TS SDK's stateful Streamable HTTP on port 0: its URL."""
    if not EVERYTHING.is_file():
        pytest.fail(
            "server-everything missing: run scripts/test (it runs npm install in tests/node)"
        )
    process = await trio.lowlevel.open_process(
        ["node", str(EVERYTHING_HTTP)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        assert process.stdout is not None
        yield (await read_until(process.stdout, b"\n")).decode().strip()
    finally:
        process.kill()
        with trio.CancelScope(shield=True):
            await process.wait()


async def test_an_id_null_refusal_answers_the_probe_through_the_http_front() -> None:
    """HTTP agent in `auto` mode: the upstream's 400 `{"id": null, "error": ...}` to
    `server/discover` is forwarded as is, the client falls back to `initialize`, and the
    recording has no request left unanswered."""
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery, everything_over_http() as url:
            proxy = RecordingProxy(url, name="everything")
            proxy_url = await proxy.start(nursery)
            async with mcp.Client(proxy_url, mode="auto") as client:
                echoed = await client.call_tool("echo", {"message": "hi"})
            await proxy.stop()
    assert echoed.content[0].text == "Echo: hi"  # type: ignore[union-attr]
    refusals = [r.msg for r in proxy.tap.log if "error" in r.msg and r.msg["id"] is None]
    assert [m["error"]["message"] for m in refusals] == ["Bad Request: Server not initialized"]
    assert proxy.tap.unanswered() == []
    assert [call.tool_name for call in proxy.call_log()] == ["echo"]


async def test_an_id_null_refusal_answers_the_probe_through_wt_record_stdio(tmp_path: Path) -> None:
    """stdio agent in `auto` mode (`wt record --stdio`): the same, and the summary raises no
    alarm about `server/discover`."""
    out, errlog = tmp_path / "everything.universe.json", tmp_path / "err"
    with trio.fail_after(60):
        async with everything_over_http() as url:
            params = wt_record_stdio(errlog, "-o", str(out), url)
            async with mcp.Client(params, mode="auto") as client:
                await client.call_tool("echo", {"message": "hi"})
    report = errlog.read_text()
    assert "never answered" not in report
    assert "upstream: 1 call(s), 1 recording(s)" in report
    assert [r.tool_name for r in load_universe(out).recordings] == ["echo"]


def test_a_node_script_is_named_after_its_package(tmp_path: Path) -> None:
    """`node .../server-everything/dist/index.js` is `server-everything` (its package.json's
    name, scope dropped), as `npx @modelcontextprotocol/server-everything` is; a script with no
    package.json above it keeps its file's name."""
    _, (spec,) = parse_record_upstreams(["--", "node", str(EVERYTHING), "stdio"])
    assert spec.name == "server-everything"
    package = tmp_path / "billing"
    (package / "build").mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": "@acme/billing-mcp"}))
    (package / "build" / "main.mjs").write_text("")
    _, (spec,) = parse_record_upstreams(["--", "node", str(package / "build" / "main.mjs")])
    assert spec.name == "billing-mcp"
    _, (spec,) = parse_record_upstreams(["--", "node", "/nonexistent/dist/index.js"])
    assert spec.name == "index"
