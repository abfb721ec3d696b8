"""inspect-ai's MCP tools against Wind Tunnel, in an `eval` driven by its own scripted model
(`mockllm/model`): a `react()` agent, which holds one connection per server for the sample, and
`use_tools()` + `generate()`, which connects per tool call."""

from __future__ import annotations

import tempfile
from typing import Any

from _spec import HIT, MISS, TICKETS, read_spec, report
from inspect_ai import Task, eval
from inspect_ai.agent import react
from inspect_ai.dataset import Sample
from inspect_ai.event import ModelEvent
from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import MCPServer, mcp_server_http, mcp_server_stdio


def turn(*calls: tuple[str, dict[str, Any]]) -> ModelOutput:
    """One scripted model turn: the tool calls, or a final answer without any. Each carries
    `usage`, else mockllm counts tokens with tiktoken, which downloads its encoding."""
    if calls:
        output = ModelOutput.for_tool_call("mockllm/model", *calls[0], tool_call_id="call-0")
        message = output.choices[0].message
        for i, (name, args) in enumerate(calls[1:], start=1):
            extra = ModelOutput.for_tool_call("mockllm/model", name, args, tool_call_id=f"call-{i}")
            assert message.tool_calls is not None and extra.choices[0].message.tool_calls
            message.tool_calls.extend(extra.choices[0].message.tool_calls)
    else:
        output = ModelOutput.from_content("mockllm/model", "done")
    output.usage = ModelUsage()
    return output


def run(solver: Any, logs: str, *turns: ModelOutput) -> Any:
    """One sample of an eval with the scripted `turns`, logged under `logs`; its log's sample."""
    model = get_model("mockllm/model", custom_outputs=list(turns))
    task = Task(dataset=[Sample(input="Who is Bluewing Logistics?")], solver=solver)
    (log,) = eval(task, model=model, display="none", log_dir=logs)
    assert log.status == "success", log.error
    return log.samples[0]


def tool_messages(sample: Any) -> list[dict[str, Any]]:
    """What the model got back from each tool call: the text, and the error if any."""
    return [
        {
            "text": message.text,
            "error": [message.error.type, message.error.message] if message.error else None,
        }
        for message in sample.messages
        if isinstance(message, ChatMessageTool)
    ]


def server(entry: dict[str, Any]) -> MCPServer:
    """An `mcpServers` entry as an inspect-ai MCP server."""
    if "url" in entry:
        return mcp_server_http(name="crm", url=entry["url"])
    return mcp_server_stdio(name="crm", command=entry["command"], args=entry["args"])


def main(logs: str) -> None:
    spec = read_spec()
    crm = spec["servers"]["crm"]
    held = run(
        react(tools=[server(crm)], submit=False),
        logs,
        turn(("client_lookup", HIT), ("client_lookup", MISS)),
        turn(("list_tickets", TICKETS)),
        turn(("list_tickets", TICKETS)),
        turn(),
    )
    (first_model_call, *_) = [e for e in held.events if isinstance(e, ModelEvent)]
    offered = {
        tool.name: tool.parameters.model_dump(exclude_none=True) for tool in first_model_call.tools
    }
    hit, miss, *pages = tool_messages(held)
    per_call = run(
        [use_tools(server(crm)), generate()],
        logs,
        turn(("list_tickets", TICKETS)),
        turn(("list_tickets", TICKETS)),
        turn(),
    )
    report(
        tools=offered,
        hit=hit,
        miss=miss,
        pages={
            "held": [page["text"] for page in pages],
            "per_call": [page["text"] for page in tool_messages(per_call)],
        },
    )


with tempfile.TemporaryDirectory() as logs:
    main(logs)
