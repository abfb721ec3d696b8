"""fastmcp's `Client` (a URL, a stdio transport, an `mcpServers` config) against Wind Tunnel.
fastmcp has no model of its own: the client is what agents built on it (pydantic-ai) call."""

from __future__ import annotations

import asyncio
from typing import Any

from _spec import CHARGE, HIT, MISS, read_spec, report
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from fastmcp.exceptions import ToolError


def seen(result: Any) -> dict[str, Any]:
    """What a fastmcp caller gets from a call: `.data`, `.is_error` and the text blocks."""
    return {
        "data": result.data,
        "is_error": result.is_error,
        "text": [block.text for block in result.content],
    }


async def main() -> None:
    spec = read_spec()
    crm = spec["servers"]["crm"]
    source = crm["url"] if "url" in crm else StdioTransport(crm["command"], crm["args"])
    async with Client(source) as client:
        offered = {tool.name: tool.input_schema for tool in await client.list_tools()}
        hit = seen(await client.call_tool("client_lookup", HIT))
        miss = seen(await client.call_tool("client_lookup", MISS, raise_on_error=False))
        try:
            await client.call_tool("client_lookup", MISS)
            raised = "no error"
        except ToolError as exc:
            raised = f"{type(exc).__name__}: {exc}"
        try:
            await client.call_tool("refund_charge", {})
            undeclared = "no error"
        except Exception as exc:
            undeclared = f"{type(exc).__name__}: {exc}"
    async with Client(spec["config"]) as client:
        multi_tools = sorted(tool.name for tool in await client.list_tools())
        multi = [
            seen(await client.call_tool("crm_client_lookup", HIT)),
            seen(await client.call_tool("billing_charge_lookup", CHARGE)),
        ]
    report(
        tools=offered,
        hit=hit,
        miss=miss,
        miss_raised=raised,
        undeclared=undeclared,
        multi_tools=multi_tools,
        multi=multi,
    )


asyncio.run(main())
