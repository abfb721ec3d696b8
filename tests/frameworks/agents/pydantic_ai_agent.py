"""A support agent built on pydantic-ai, run by `wt run` both ways a pack can name it.

- `command` agent: `python pydantic_ai_agent.py` reads the task on stdin and the upstreams from
  `$WT_MCP_CONFIG` (the `mcpServers` file Wind Tunnel writes), prints its answer.
- `python` agent: `pydantic_ai_agent:support_agent`, an asyncio callable given the run's context.

Its model is a pydantic-ai `FunctionModel`: it looks the client up in the crm upstream and the
charge in the billing upstream, then answers with what the tools returned.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.mcp import load_mcp_toolsets
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel


def support_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """First turn: both lookups; second turn: the answer from their results."""
    if len(messages) == 1:
        return ModelResponse(
            parts=[
                ToolCallPart("crm_client_lookup", {"query": "Bluewing Logistics"}),
                ToolCallPart("billing_charge_lookup", {"charge_id": "ch_881"}),
            ]
        )
    returned: dict[str, Any] = {}
    for part in messages[-1].parts:
        if isinstance(part, ToolReturnPart):
            returned[part.tool_name] = part.content
    client, charge = returned["crm_client_lookup"], returned["billing_charge_lookup"]
    return ModelResponse(parts=[TextPart(f"{client['email']}: charge {charge['status']}")])


async def answer(task: str, mcp_config: str) -> str:
    agent = Agent(FunctionModel(support_model), toolsets=load_mcp_toolsets(mcp_config))
    result = await agent.run(task)
    return result.output


async def support_agent(ctx: Any) -> str:
    """The `python` agent: Wind Tunnel hands it the run's context (`ctx.mcp_config_path`)."""
    return await answer(ctx.task, str(ctx.mcp_config_path))


if __name__ == "__main__":
    print(asyncio.run(answer(sys.stdin.read(), os.environ["WT_MCP_CONFIG"])))
