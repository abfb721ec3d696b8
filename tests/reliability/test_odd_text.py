"""Text UTF-8 cannot hold (lone surrogates) never breaks a write: it is kept as U+FFFD."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import httpx2
import trio

from tests.compat import COMPAT_UNIVERSE
from tests.reliability.test_endpoint_fuzz import META_2026, headers_for
from windtunnel.actors import JsonLinesSink, MemorySink, open_fleet
from windtunnel.agents import AgentContext
from windtunnel.api import Scenario, ScenarioPack, contains
from windtunnel.mcp import RecordedMCPServer
from windtunnel.runner import read_results
from windtunnel.runner.pack_run import PackRunOptions, run_pack


def surrogate_agent(ctx: AgentContext) -> str:
    return b"answer \xff\xfe junk".decode("utf-8", "surrogateescape") + ctx.scenario


async def test_agent_output_with_lone_surrogates_is_written_not_fatal(tmp_path: Path) -> None:
    """Agent output with lone surrogates is written as U+FFFD and the rest of the pack runs."""
    # A scorer that fails: the report shows failures in full, answer included.
    scenarios = [
        Scenario(
            name=f"s{i}", task="t", upstreams={"crm": COMPAT_UNIVERSE}, scorers=[contains("x!")]
        )
        for i in range(3)
    ]
    pack = ScenarioPack("odd", scenarios, concurrency=1)
    with trio.fail_after(30):
        summary = await run_pack(pack, PackRunOptions(run_dir=tmp_path, agent=surrogate_agent))
    assert summary.total == 3
    rows = read_results(tmp_path, with_calls=False)
    assert [r.output for r in rows] == [f"answer \ufffd\ufffd junk{s.name}" for s in scenarios]
    assert "answer \ufffd\ufffd junks0" in (tmp_path / "report.html").read_text()


async def test_call_args_with_lone_surrogates_reach_every_sink() -> None:
    """Call args with an escaped lone surrogate are answered, logged and written as U+FFFD."""
    body: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "client_lookup", "arguments": {"query": "X"}, "_meta": META_2026},
    }
    raw = json.dumps(body).replace('"X"', '"\\ud800 lone"').encode()
    lines, memory = io.StringIO(), MemorySink()
    with trio.fail_after(30):
        async with open_fleet(sinks=[JsonLinesSink(lines), memory], call_events=True) as fleet:
            async with fleet.scenario("s", {"crm": RecordedMCPServer(COMPAT_UNIVERSE)}) as run:
                async with httpx2.AsyncClient(timeout=10) as http:
                    odd = await http.post(
                        run.urls["crm"],
                        content=raw,
                        headers=headers_for("2026-07-28", name="client_lookup"),
                    )
                    good = await http.post(
                        run.urls["crm"],
                        json={
                            **body,
                            "params": {
                                **body["params"],
                                "arguments": {"query": "Bluewing Logistics"},
                            },
                        },
                        headers=headers_for("2026-07-28", name="client_lookup"),
                    )
    assert odd.status_code == 200, odd.text
    assert good.json()["result"]["structuredContent"]["email"] == "ops@bluewing.example"
    assert [c.args for c in run.call_log()] == [
        {"query": "\ud800 lone"},
        {"query": "Bluewing Logistics"},
    ]
    written = [json.loads(line) for line in lines.getvalue().splitlines()]
    assert [e["args"] for e in written if e["event"] == "universe_divergence"] == [
        {"query": "\ufffd lone"}
    ]
    assert len(written) == len(memory.events)
