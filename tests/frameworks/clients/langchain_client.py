"""langchain-mcp-adapters with LangChain's agent (a LangGraph graph, `create_agent`) against Wind
Tunnel, driven by a scripted chat model (langchain-core's fake model, taught to accept tools)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from _spec import CHARGE, HIT, MISS, TICKETS, read_spec, report
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools


class ScriptedChatModel(FakeMessagesListChatModel):
    """Answers with its scripted messages in turn; accepts whatever tools it is bound to."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        return self


def scripted(*calls: tuple[str, dict[str, Any]]) -> ScriptedChatModel:
    """One turn calling every tool in `calls`, then a final answer."""
    tool_calls = [
        {"name": name, "args": args, "id": f"call-{i}"} for i, (name, args) in enumerate(calls)
    ]
    return ScriptedChatModel(
        responses=[AIMessage(content="", tool_calls=tool_calls), AIMessage(content="done")]
    )


async def run_agent(tools: list[BaseTool], *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    """The tool messages the model got back, in call order."""
    agent = create_agent(scripted(*calls), tools)
    state = await agent.ainvoke({"messages": [("user", "Who is Bluewing Logistics?")]})
    return [
        {
            "status": message.status,
            "text": [block["text"] for block in message.content],
            "artifact": message.artifact,
        }
        for message in state["messages"]
        if isinstance(message, ToolMessage)
    ]


async def page(tool: BaseTool) -> list[str]:
    """One call of the sequence-mode `list_tickets`, as the text the model would get."""
    message = await tool.ainvoke(
        {"type": "tool_call", "name": tool.name, "args": TICKETS, "id": "1"}
    )
    return [block["text"] for block in message.content]


def connection(entry: dict[str, Any]) -> dict[str, Any]:
    """An `mcpServers` entry as langchain-mcp-adapters spells a connection."""
    if "url" in entry:
        return {"transport": "streamable_http", "url": entry["url"]}
    return {"transport": "stdio", "command": entry["command"], "args": entry["args"]}


async def main() -> None:
    spec = read_spec()
    crm = {"crm": connection(spec["servers"]["crm"])}
    client = MultiServerMCPClient(crm)
    async with client.session("crm") as session:
        tools = await load_mcp_tools(session)
        hit, miss = await run_agent(tools, ("client_lookup", HIT), ("client_lookup", MISS))
        offered = {tool.name: tool.args_schema for tool in tools}
        try:
            result = await session.call_tool("refund_charge", {})
            undeclared = f"result: {result.model_dump(exclude_none=True)}"
        except Exception as exc:
            undeclared = f"{type(exc).__name__}: {exc}"
    config = spec["config"]["mcpServers"]
    everything = MultiServerMCPClient({name: connection(e) for name, e in config.items()})
    all_tools = await everything.get_tools()
    multi = await run_agent(all_tools, ("client_lookup", HIT), ("charge_lookup", CHARGE))
    pages: dict[str, Any] = {}
    if "command" in spec["servers"]["crm"]:
        # Over stdio each call of a default tool starts a new server; a held session does not.
        (default_tool,) = [t for t in await client.get_tools() if t.name == "list_tickets"]
        pages["default"] = [await page(default_tool), await page(default_tool)]
        async with client.session("crm") as session:
            (held_tool,) = [t for t in await load_mcp_tools(session) if t.name == "list_tickets"]
            pages["session"] = [await page(held_tool), await page(held_tool)]
    report(
        tools=offered,
        hit=hit,
        miss=miss,
        undeclared=undeclared,
        multi_tools=sorted(tool.name for tool in all_tools),
        multi=multi,
        pages=pages,
    )


asyncio.run(main())
