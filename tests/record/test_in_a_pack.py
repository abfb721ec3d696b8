"""`RecordingProxy` under the `MCPServer` SPI: a pack's `mcp_factory` returns one, the scenario
runs against the live upstream, and `freeze_universe` turns its call log into a fixture that the
same scenario then passes against with no divergence."""

from __future__ import annotations

from pathlib import Path

import mcp
import trio

from tests.record.upstreams import SDK_UPSTREAM
from windtunnel.agents import AgentContext, PythonAgent
from windtunnel.api import Scenario, ScenarioPack, freeze_universe, no_divergence
from windtunnel.mcp import RecordedMCPServer
from windtunnel.record import RecordingProxy
from windtunnel.record.redact import parse_rule
from windtunnel.runner.execute import run_scenario_async


async def agent(ctx: AgentContext) -> str:
    """Looks a client up, counts twice, and passes an issued token on."""
    async with mcp.Client(ctx.servers["sdk"], mode="legacy") as client:
        found = await client.call_tool("lookup", {"query": ctx.task})
        await client.call_tool("counter", {})
        last = await client.call_tool("counter", {})
        issued = await client.call_tool("issue_token", {"user": "ana"})
        used = await client.call_tool(
            "use_token", {"api_key": issued.structured_content["api_key"]}
        )
    return f"{found.structured_content['name']} {last.content[0].text} {used.content[0].text}"


async def test_a_pack_records_through_the_proxy_and_replays_the_frozen_log(
    tmp_path: Path,
) -> None:
    """Live: the upstream answers; frozen and replayed: the same output, no divergence."""
    scenario = Scenario(name="lookup", task="bluewing", policies=[no_divergence()])
    proxies: list[RecordingProxy] = []

    def live(_: Scenario) -> dict[str, RecordingProxy]:
        proxies.append(RecordingProxy(SDK_UPSTREAM, redact=parse_rule("key:api_key")))
        return {"sdk": proxies[-1]}

    pack = ScenarioPack("live", [scenario], mcp_factory=live)
    with trio.fail_after(60):
        recorded = await run_scenario_async(
            scenario, agent=PythonAgent(agent, flavor="trio"), mcps=pack.servers_for(scenario)
        )
        (proxy,) = proxies
        fixture = tmp_path / "sdk.universe.json"
        freeze_universe(recorded.mcp_calls, tools=proxy.universe_tools(), path=fixture)
        replayed = await run_scenario_async(
            scenario,
            agent=PythonAgent(agent, flavor="trio"),
            mcps={"sdk": RecordedMCPServer(fixture)},
        )
    assert recorded.status == "passed", recorded.error
    assert recorded.output == "Bluewing 2 accepted"
    assert [c.upstream for c in recorded.mcp_calls] == ["sdk"] * 5
    assert "sk-live" not in fixture.read_text()
    assert replayed.output == recorded.output
    assert replayed.status == "passed"
    assert replayed.warnings == []
