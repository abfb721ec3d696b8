"""What a pydantic-ai agent's model is shown by one MCP server: the instructions, the tool
definitions, and the tool results, as the model function received them.

Run with the server's URL as the only argument; prints one JSON object. The toolset is opened with
`include_instructions=True` (pydantic-ai 2.68 leaves the server's instructions out of the prompt
unless asked) and `include_return_schema=True` (else each tool's `outputSchema` is dropped from
what the model is sent), so both parts of the server's surface reach the model.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_core import to_jsonable_python

PLAN: list[tuple[str, dict[str, Any]]] = [("test_simple_text", {}), ("test_tool_with_progress", {})]
"""The annotated tool (title, readOnlyHint) and the one with an `outputSchema`."""


class WatchingModel:
    """First turn: keeps what the model was given and calls PLAN; second: keeps the results."""

    def __init__(self) -> None:
        self.seen: dict[str, Any] = {}

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            request = messages[0]
            assert isinstance(request, ModelRequest)
            self.seen["instructions"] = info.instructions
            self.seen["request_instructions"] = request.instructions
            self.seen["tools"] = to_jsonable_python(info.function_tools)
            return ModelResponse(parts=[ToolCallPart(name, args) for name, args in PLAN])
        self.seen["results"] = {
            part.tool_name: {"outcome": part.outcome, "content": part.content}
            for part in messages[-1].parts
            if isinstance(part, ToolReturnPart)
        }
        return ModelResponse(parts=[TextPart("done")])


async def main(url: str) -> None:
    toolset = MCPToolset(url, include_instructions=True, include_return_schema=True)
    model = WatchingModel()
    result = await Agent(FunctionModel(model), toolsets=[toolset]).run("Run the checks.")
    model.seen["output"] = result.output
    print(json.dumps(model.seen, sort_keys=True))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
