"""The OpenAI Agents SDK (`MCPServerStreamableHttp`, `MCPServerStdio`) against Wind Tunnel, driven
by its own `agents.testing.ScriptedModel`."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from typing import Any

from _spec import CHARGE, HIT, MISS, read_spec, report
from agents import Agent, Runner, set_tracing_disabled
from agents.mcp import MCPServer, MCPServerStdio, MCPServerStreamableHttp
from agents.testing import ScriptedModel, assistant_message, function_call

STDIO_TIMEOUT_S = 60
"""Seconds a stdio server may take to answer, start-up included (the SDK's default is 5)."""


def connect(name: str, entry: dict[str, Any]) -> MCPServer:
    """One `mcpServers` entry as the SDK's server object (the SDK reads no config file)."""
    if "url" in entry:
        return MCPServerStreamableHttp({"url": entry["url"]}, name=name)
    return MCPServerStdio(
        {"command": entry["command"], "args": entry["args"]},
        name=name,
        client_session_timeout_seconds=STDIO_TIMEOUT_S,
    )


def script(*calls: tuple[str, dict[str, Any]]) -> ScriptedModel:
    """One turn calling every tool in `calls`, then a final answer."""
    turn = [function_call(name, args, call_id=f"call-{i}") for i, (name, args) in enumerate(calls)]
    return ScriptedModel([turn, [assistant_message("done")]])


def tool_outputs(model: ScriptedModel) -> list[Any]:
    """What the model was given back for each call of its first turn, in order."""
    second = model.calls[1].input
    return [item["output"] for item in second if item.get("type") == "function_call_output"]


async def main() -> None:
    set_tracing_disabled(True)  # offline: no trace export to OpenAI
    spec = read_spec()
    servers = spec["servers"]
    async with connect("crm", servers["crm"]) as crm:
        model = script(("client_lookup", HIT), ("client_lookup", MISS))
        agent = Agent(name="support", model=model, mcp_servers=[crm])
        await Runner.run(agent, "Who is Bluewing Logistics?")
        offered = {tool.name: tool.params_json_schema for tool in model.calls[0].tools}
        try:
            result = await crm.call_tool("refund_charge", {})
            undeclared = f"result: {result.model_dump(exclude_none=True)}"
        except Exception as exc:
            undeclared = f"{type(exc).__name__}: {exc}"
    config = spec["config"]["mcpServers"]
    async with AsyncExitStack() as stack:
        connected = [
            await stack.enter_async_context(connect(name, entry)) for name, entry in config.items()
        ]
        multi = script(("client_lookup", HIT), ("charge_lookup", CHARGE))
        agent = Agent(name="support", model=multi, mcp_servers=connected)
        await Runner.run(agent, "Was ch_881 refunded?")
    hit, miss = tool_outputs(model)
    report(
        tools=offered,
        hit=hit,
        miss=miss,
        undeclared=undeclared,
        multi_tools=sorted(tool.name for tool in multi.calls[0].tools),
        multi=tool_outputs(multi),
    )


asyncio.run(main())
