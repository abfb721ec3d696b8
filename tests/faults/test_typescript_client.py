"""The TypeScript SDK client meeting error, is_error, timeout and drop faults, over Streamable
HTTP (a server in process) and stdio (`wt serve --stdio --fault`). Timeouts are the client's own
request timeout, never a sleep."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from tests.faults.world import DOC, world
from tests.processes import WT
from windtunnel.mcp import RecordedMCPServer

NODE_DIR = Path(__file__).parents[1] / "node"
pytestmark = [pytest.mark.node, pytest.mark.timeout(180)]

PLAN = [
    {"tool": "get_order", "args": {"id": "A1"}},  # error
    {"tool": "search", "args": {"q": "x"}},  # is_error
    {"tool": "search", "args": {"q": "x"}, "timeout": 1000},  # timeout
    {"tool": "search", "args": {"q": "x"}},  # drop
]
FAULTS = [
    "get_order=error:-32000:busy",
    "search#1=is_error:upstream down",
    "search#2=timeout",
    "search#3=drop",
]


@pytest.fixture(scope="module", autouse=True)
def _node_packages_installed() -> None:
    if not (NODE_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        pytest.fail("Node packages missing: run scripts/test (it runs npm ci in tests/node)")


async def run_node(*args: str) -> dict[str, Any]:
    result = await trio.run_process(
        ["node", str(NODE_DIR / "faults.mjs"), *args],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode()
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def assert_first_three(calls: list[dict[str, Any]]) -> None:
    error, is_error, timeout = calls[:3]
    assert error == {"error": {"code": -32000, "message": "MCP error -32000: busy"}}
    assert is_error["result"]["isError"] is True
    assert is_error["result"]["content"] == [{"type": "text", "text": "upstream down"}]
    assert timeout["error"]["code"] == -32001
    assert timeout["error"]["message"] == "MCP error -32001: Request timed out"


async def test_typescript_client_over_http() -> None:
    """Error, isError, timeout, then a dropped connection, as the TS client reports them."""
    server = RecordedMCPServer(world(), faults=FAULTS)
    server.log_events = False
    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            report = await run_node(url, json.dumps(PLAN))
            await server.stop()
    assert "fatal" not in report
    assert_first_three(report["calls"])
    # Node's fetch: the socket closed before any response (undici's "fetch failed").
    assert report["calls"][3] == {"error": {"code": None, "message": "fetch failed"}}
    assert [c.extra["injected_fault"]["kind"] for c in server.call_log()] == [
        "error",
        "is_error",
        "timeout",
        "drop",
    ]


async def test_typescript_client_over_stdio(tmp_path: Path) -> None:
    """The same faults over stdio: the drop is the process going away (connection closed)."""
    universe = tmp_path / "shop.universe.json"
    universe.write_text(json.dumps(DOC))
    faults = [arg for fault in FAULTS for arg in ("--fault", fault)]
    with trio.fail_after(120):
        report = await run_node(
            "--stdio",
            sys.executable,
            *WT[1:],
            "serve",
            "--stdio",
            *faults,
            str(universe),
            "--",
            json.dumps(PLAN),
        )
    assert "fatal" not in report
    assert_first_three(report["calls"])
    assert report["calls"][3] == {
        "error": {"code": -32000, "message": "MCP error -32000: Connection closed"}
    }
