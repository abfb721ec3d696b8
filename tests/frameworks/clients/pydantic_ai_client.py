"""pydantic-ai (`MCPToolset`, `load_mcp_toolsets`) against Wind Tunnel, driven by a `FunctionModel`."""

from __future__ import annotations

import asyncio
from typing import Any

from _spec import CHARGE, HIT, MISS, read_spec, report
from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset, load_mcp_toolsets
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel


class ScriptedModel:
    """Calls the planned tools in one turn, keeps what came back, then answers."""

    def __init__(self, plan: list[tuple[str, dict[str, Any]]]) -> None:
        self.plan = plan
        self.offered: dict[str, Any] = {}
        self.returned: list[dict[str, Any]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            self.offered = {tool.name: tool.parameters_json_schema for tool in info.function_tools}
            return ModelResponse(parts=[ToolCallPart(name, args) for name, args in self.plan])
        for part in messages[-1].parts:
            if isinstance(part, ToolReturnPart):
                self.returned.append({"outcome": part.outcome, "content": part.content})
            elif isinstance(part, RetryPromptPart):
                self.returned.append({"outcome": "retry", "content": part.model_response()})
        return ModelResponse(parts=[TextPart("done")])


STDIO_INIT_TIMEOUT_S = 60
"""pydantic-ai gives a stdio server 5 s to start and answer `initialize` (`load_mcp_toolsets`
too); a loaded machine can take longer to start a Python process."""


def connect(entry: dict[str, Any]) -> MCPToolset[Any]:
    """One `mcpServers` entry as a toolset."""
    if "url" in entry:
        return MCPToolset(entry["url"])
    transport = StdioTransport(entry["command"], entry["args"])
    return MCPToolset(transport, init_timeout=STDIO_INIT_TIMEOUT_S)


async def main() -> None:
    spec = read_spec()
    toolset = connect(spec["servers"]["crm"])
    script = ScriptedModel([("client_lookup", HIT), ("client_lookup", MISS)])
    await Agent(FunctionModel(script), toolsets=[toolset]).run("Who is Bluewing Logistics?")
    async with toolset:
        try:
            await toolset.direct_call_tool("refund_charge", {})
            undeclared = "no error"
        except Exception as exc:
            undeclared = f"{type(exc).__name__}: {exc}"
    multi = ScriptedModel([("crm_client_lookup", HIT), ("billing_charge_lookup", CHARGE)])
    servers = spec["config"]["mcpServers"]
    if all("url" in entry for entry in servers.values()):
        toolsets = load_mcp_toolsets(spec["config_path"])  # the file `wt serve` printed
    else:
        toolsets = [connect(entry).prefixed(name) for name, entry in servers.items()]
    await Agent(FunctionModel(multi), toolsets=toolsets).run("Was ch_881 refunded?")
    report(
        tools=script.offered,
        hit=script.returned[0],
        miss=script.returned[1],
        undeclared=undeclared,
        multi_tools=sorted(multi.offered),
        multi=multi.returned,
    )


asyncio.run(main())
