"""A pydantic-ai agent for the fault tests, run by `wt run` as a `command` agent.

Its `FunctionModel` looks Bluewing Logistics up (`client_lookup` on the crm upstream); while what
comes back is not the lookup's result, it asks again (three attempts at most). Its final answer
is the JSON list of what pydantic-ai put before the model after each call: a tool return
(`outcome`, `content`) or a retry prompt (the text the model is asked to retry with). The
upstreams come from `$WT_MCP_CONFIG`; the client gives up on a call after `READ_TIMEOUT_S`.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

READ_TIMEOUT_S = 2.0
ATTEMPTS = 3
LOOKUP = ("client_lookup", {"query": "Bluewing Logistics"})


class RetryingModel:
    """Calls the lookup until it returns (or three attempts), keeping what each call gave."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        succeeded = False
        if len(messages) > 1:
            for part in messages[-1].parts:
                if isinstance(part, ToolReturnPart):
                    self.seen.append({"outcome": part.outcome, "content": part.content})
                    succeeded = part.outcome == "success"
                elif isinstance(part, RetryPromptPart):
                    self.seen.append({"outcome": "retry", "content": part.model_response()})
        if succeeded or len(self.seen) >= ATTEMPTS:
            return ModelResponse(parts=[TextPart(json.dumps(self.seen, sort_keys=True))])
        return ModelResponse(parts=[ToolCallPart(*LOOKUP)])


def crm_url() -> str:
    """The crm upstream's URL, from the `mcpServers` file Wind Tunnel wrote."""
    with open(os.environ["WT_MCP_CONFIG"], encoding="utf-8") as config:
        url: str = json.load(config)["mcpServers"]["crm"]["url"]
    return url


async def main(url: str) -> None:
    toolset = MCPToolset(url, read_timeout=READ_TIMEOUT_S, max_retries=ATTEMPTS)
    model = RetryingModel()
    result = await Agent(FunctionModel(model), toolsets=[toolset]).run("Who is Bluewing?")
    print(result.output)


if __name__ == "__main__":
    asyncio.run(main(crm_url()))
