"""The TypeScript SDK client and the MCP Inspector CLI against `wt serve` (Node 20).

`scripts/test` installs the pinned packages into tests/node; without them these tests fail loudly.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import mcp
import pytest
import trio

from tests.compat import (
    BLUEWING,
    CALLS,
    COMPAT_UNIVERSE,
    TOOL_NAMES,
    fail_call_payload,
)
from tests.mcp.fast_path_cases import calls_through_the_sdk
from tests.processes import WT, wt_serve
from tests.surface_world import (
    COMPLETIONS,
    PROMPT_GETS,
    RESOURCE_READS,
    reference_server,
)
from windtunnel.mcp import RecordedMCPServer
from windtunnel.mcp._http import serve_http
from windtunnel.universe import decode_universe

NODE_DIR = Path(__file__).parents[1] / "node"
INSPECTOR = NODE_DIR / "node_modules" / ".bin" / "mcp-inspector"

pytestmark = pytest.mark.node


@pytest.fixture(scope="module", autouse=True)
def _node_packages_installed() -> None:
    if not (NODE_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        pytest.fail("Node packages missing: run scripts/test (it runs npm ci in tests/node)")


async def run_node(*args: str) -> dict[str, Any]:
    return await run_node_script(NODE_DIR / "client.mjs", *args)


async def run_node_script(script: Path, *args: str) -> dict[str, Any]:
    result = await trio.run_process(
        ["node", str(script), *args],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode()
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def assert_ts_report(report: dict[str, Any]) -> None:
    assert [t["name"] for t in report["tools"]] == TOOL_NAMES
    assert report["tools"][0]["inputSchema"]["required"] == ["query"]
    exact, keyed, miss, recorded_error, unknown = report["calls"]
    assert exact["result"]["structuredContent"] == BLUEWING
    assert exact["result"]["isError"] is False
    assert keyed["result"]["structuredContent"] == BLUEWING
    assert miss["result"]["isError"] is True
    assert miss["result"]["structuredContent"] == fail_call_payload()
    assert recorded_error["result"] == {
        "content": [{"type": "text", "text": "card declined: insufficient funds"}],
        "isError": True,
    }
    assert unknown["error"]["code"] == -32602
    assert "Unknown tool: refund_card" in unknown["error"]["message"]


async def test_typescript_client_over_http() -> None:
    """The TS SDK client lists tools and gets every kind of answer from `wt serve`."""
    with trio.fail_after(90):
        async with wt_serve(str(COMPAT_UNIVERSE)) as (process, first):
            report = await run_node(first.decode().strip(), json.dumps(CALLS))
            process.send_signal(signal.SIGTERM)
            await process.wait()
            assert process.stderr is not None
            stderr = (await process.stderr.receive_some(1 << 20)).decode()
    assert report["protocolVersion"] == "2025-11-25"
    assert_ts_report(report)
    divergences = [json.loads(x) for x in stderr.splitlines() if "universe_divergence" in x]
    assert [d["reason"] for d in divergences] == ["no_recorded_result", "unknown_tool"]


async def test_the_fast_path_answers_every_call_of_the_typescript_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every call the TS SDK client makes for a declared tool is answered by the fast path (its
    requests have the shape it reads): only the call of an undeclared tool reaches the SDK."""
    through_sdk = calls_through_the_sdk(monkeypatch)
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    server.log_events = False
    with trio.fail_after(90):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            report = await run_node(url, json.dumps(CALLS))
            await server.stop()
    assert_ts_report(report)
    assert len(server.call_log()) == len(CALLS)
    assert through_sdk == ["refund_card"]


async def test_typescript_client_over_stdio() -> None:
    """The TS SDK stdio transport spawns `wt serve --stdio`."""
    with trio.fail_after(90):
        report = await run_node(
            "--stdio",
            sys.executable,
            *WT[1:],
            "serve",
            "--stdio",
            str(COMPAT_UNIVERSE),
            "--",
            json.dumps(CALLS),
        )
    assert_ts_report(report)


async def inspector(url: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    return await trio.run_process(
        [str(INSPECTOR), "--cli", url, "--transport", "http", *args],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )


async def test_inspector_cli_lists_and_calls() -> None:
    """The MCP Inspector CLI lists tools, gets a hit, a tool error and a miss."""
    with trio.fail_after(120):
        async with wt_serve(str(COMPAT_UNIVERSE)) as (process, first):
            url = first.decode().strip()
            listed = await inspector(url, "--method", "tools/list")
            hit = await inspector(
                url,
                "--method",
                "tools/call",
                "--tool-name",
                "client_lookup",
                "--tool-arg",
                "query=Bluewing Logistics",
            )
            miss = await inspector(
                url,
                "--method",
                "tools/call",
                "--tool-name",
                "client_lookup",
                "--tool-arg",
                "query=Nobody",
            )
            declined = await inspector(
                url,
                "--method",
                "tools/call",
                "--tool-name",
                "charge_card",
                "--tool-arg",
                "amount=120",
            )
            process.send_signal(signal.SIGTERM)
            await process.wait()
    assert listed.returncode == 0, listed.stderr.decode()
    assert [t["name"] for t in json.loads(listed.stdout)["tools"]] == TOOL_NAMES
    assert hit.returncode == 0, hit.stderr.decode()
    assert json.loads(hit.stdout)["structuredContent"] == BLUEWING
    # The Inspector exits 5 on isError results and still prints them.
    assert miss.returncode == 5
    assert json.loads(miss.stdout)["structuredContent"]["error"] == "no_recorded_result"
    assert declined.returncode == 5
    assert json.loads(declined.stdout)["content"][0]["text"] == "card declined: insufficient funds"


async def test_inspector_cli_over_stdio() -> None:
    """The MCP Inspector CLI spawns `wt serve --stdio`: lists tools, gets a hit and a miss."""
    server = [sys.executable, *WT[1:], "serve", "--stdio", str(COMPAT_UNIVERSE)]

    async def run(*args: str) -> subprocess.CompletedProcess[bytes]:
        return await trio.run_process(
            [str(INSPECTOR), "--cli", *server, *args],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )

    with trio.fail_after(120):
        listed = await run("--method", "tools/list")
        call = ("--method", "tools/call", "--tool-name", "client_lookup", "--tool-arg")
        hit = await run(*call, "query=Bluewing Logistics")
        miss = await run(*call, "query=Nobody")
    assert listed.returncode == 0, listed.stderr.decode()
    assert [t["name"] for t in json.loads(listed.stdout)["tools"]] == TOOL_NAMES
    assert hit.returncode == 0, hit.stderr.decode()
    assert json.loads(hit.stdout)["structuredContent"] == BLUEWING
    assert miss.returncode == 5  # an isError result, printed all the same
    assert json.loads(miss.stdout)["structuredContent"]["error"] == "no_recorded_result"


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_typescript_client_sees_the_recorded_world_as_live() -> None:
    """The TS SDK client sees on replay the same serverInfo, capabilities, instructions, tools
    (title, annotations, output schema, icons, execution, _meta), resources, templates, reads,
    prompts, prompt gets and completions as from the real SDK server it was recorded from, and
    the same answers to unrecorded requests' codes aside (a replay's are divergences)."""

    from tests.mcp.test_surface_replay import observe, recorded_from

    plan = {
        "reads": [read["uri"] for read in RESOURCE_READS],
        "gets": [{"name": g["name"], "arguments": g["arguments"]} for g in PROMPT_GETS],
        "completions": [{"ref": c["ref"], "argument": c["argument"]} for c in COMPLETIONS],
    }
    with trio.fail_after(90):
        async with mcp.Client(reference_server(), mode="legacy") as client:
            recorded = recorded_from(await observe(client))
        async with trio.open_nursery() as nursery:
            live_serving = await nursery.start(
                lambda task_status: serve_http(reference_server(), task_status=task_status)
            )
            live = await run_node_script(
                NODE_DIR / "surface.mjs", live_serving.url, json.dumps(plan)
            )
            await live_serving.stop()
            server = RecordedMCPServer(decode_universe(json.dumps(recorded)))
            url = await server.start(nursery)
            replayed = await run_node_script(NODE_DIR / "surface.mjs", url, json.dumps(plan))
            await server.stop()
    assert "fatal" not in live, live
    assert live["serverVersion"]["title"] == "Everything (reference)"
    assert live["tools"][0]["annotations"]["readOnlyHint"] is True
    assert live["logging"] == {} and live["subscribe"] == {}
    assert replayed == live
    assert all(call.divergence is None for call in server.call_log())
