"""Through `wt record`, a real client sees what it sees talking to the upstream directly, message
by message; the recording then replays the same tool results with no divergence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp
import pytest
import trio

from tests.record.upstreams import (
    SCRIPT,
    SDK_UPSTREAM,
    run_script,
    sdk_http_upstream,
    sdk_stdio_upstream,
    tool_view,
    wt_record_stdio,
)
from windtunnel.mcp import RecordedMCPServer
from windtunnel.record import RecordingProxy
from windtunnel.universe import load_universe

MODES = ["auto", "legacy"]


async def replay_views(path: Path) -> list[dict[str, Any]]:
    """Each SCRIPT call's tool result from `wt serve`'s server for the recorded file."""
    server = RecordedMCPServer(path)
    async with trio.open_nursery() as nursery:
        url = await server.start(nursery)
        async with mcp.Client(url, mode="legacy") as client:
            views = [tool_view(await client.call_tool(name, args)) for name, args in SCRIPT]
        await server.stop()
    assert [call.divergence for call in server.call_log()] == [None] * len(SCRIPT)
    return views


def assert_recorded(path: Path) -> None:
    """The universe holds the live tool list and the script's calls, the counter in sequence."""
    universe = load_universe(path)
    assert [t.name for t in universe.tools] == [
        "lookup",
        "counter",
        "fail",
        "issue_token",
        "use_token",
        "slow",
        "blob",
        "crash",
    ]
    assert [t.name for t in universe.tools if t.mode == "sequence"] == ["counter"]
    assert [r.tool_name for r in universe.recordings] == [
        "lookup",
        "counter",
        "counter",
        "fail",
        "issue_token",
        "use_token",
    ]
    assert universe.recordings[3].result["isError"] is True
    assert universe.meta["upstream"]["name"] == "sdk"


@pytest.mark.parametrize("mode", MODES)
async def test_http_upstream_through_the_proxy_equals_direct(mode: str, tmp_path: Path) -> None:
    """HTTP agent, HTTP upstream (stateful, event streams): the same answers; the file replays."""
    with trio.fail_after(60):
        async with sdk_http_upstream() as upstream, mcp.Client(upstream, mode=mode) as client:
            direct = await run_script(client)
        async with sdk_http_upstream() as upstream, trio.open_nursery() as nursery:
            proxy = RecordingProxy(upstream, name="sdk")
            url = await proxy.start(nursery)
            async with mcp.Client(url, mode=mode) as client:
                through = await run_script(client)
            await proxy.stop()
        proxy.save(tmp_path / "sdk.universe.json")
        replayed = await replay_views(tmp_path / "sdk.universe.json")
    assert through == direct
    assert_recorded(tmp_path / "sdk.universe.json")
    assert replayed == [tool_view_of(answer) for answer in direct[1:]]


def tool_view_of(answer: dict[str, Any]) -> dict[str, Any]:
    return {k: answer[k] for k in ("content", "structuredContent", "isError") if k in answer}


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_upstream_served_over_http_equals_direct(mode: str, tmp_path: Path) -> None:
    """HTTP agent, stdio upstream the proxy spawns: the same answers as over stdio directly."""
    with trio.fail_after(60):
        async with mcp.Client(sdk_stdio_upstream(), mode=mode) as client:
            direct = await run_script(client)
        async with trio.open_nursery() as nursery:
            proxy = RecordingProxy(SDK_UPSTREAM, name="sdk")
            url = await proxy.start(nursery)
            async with mcp.Client(url, mode=mode) as client:
                through = await run_script(client)
            await proxy.stop()
        proxy.save(tmp_path / "sdk.universe.json")
        replayed = await replay_views(tmp_path / "sdk.universe.json")
    assert through == direct
    assert_recorded(tmp_path / "sdk.universe.json")
    assert replayed == [tool_view_of(answer) for answer in direct[1:]]


@pytest.mark.parametrize("upstream_kind", ["stdio", "http"])
@pytest.mark.parametrize("mode", MODES)
async def test_agent_spawns_wt_record_stdio(mode: str, upstream_kind: str, tmp_path: Path) -> None:
    """The SDK's stdio client spawns `wt record --stdio` in place of the server (stdio or HTTP
    upstream): the same answers; closing stdin writes the universe and the capture log."""
    out, log, errlog = tmp_path / "sdk.universe.json", tmp_path / "sdk.jsonl", tmp_path / "err"
    with trio.fail_after(90):
        if upstream_kind == "stdio":
            async with mcp.Client(sdk_stdio_upstream(), mode=mode) as client:
                direct = await run_script(client)
            params = wt_record_stdio(
                errlog, "-o", str(out), "--log", str(log), "sdk=--", *SDK_UPSTREAM
            )
            async with mcp.Client(params, mode=mode) as client:
                through = await run_script(client)
        else:
            async with sdk_http_upstream() as upstream, mcp.Client(upstream, mode=mode) as client:
                direct = await run_script(client)
            async with sdk_http_upstream() as upstream:
                params = wt_record_stdio(
                    errlog, "-o", str(out), "--log", str(log), f"sdk={upstream}"
                )
                async with mcp.Client(params, mode=mode) as client:
                    through = await run_script(client)
        replayed = await replay_views(out)
    assert through == direct, errlog.read_text()
    assert_recorded(out)
    assert replayed == [tool_view_of(answer) for answer in direct[1:]]
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert {r["conn"] for r in records} == {"sdk"}
    calls = [r["msg"] for r in records if r["msg"].get("method") == "tools/call"]
    assert [c["params"]["name"] for c in calls] == [name for name, _ in SCRIPT]
    report = errlog.read_text()
    assert "sdk: 7 call(s), 6 recording(s), 8 tool(s)" in report
    assert (
        "at $.recordings[4].result.structuredContent.api_key: looks like an API key; "
        "redact it" in report
    )
