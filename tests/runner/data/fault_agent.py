#!/usr/bin/env python3
"""A deterministic command agent for the fault tests: the official MCP client, no model inside.

    fault_agent.py MCP_CONFIG STYLE

It looks up Bluewing Logistics (`client_lookup`) on the `crm` upstream, then lists its invoices,
and prints its answer, then one line `SEEN <json>`: what the client got for each call (the
structured content, the isError text, or the JSON-RPC error), so tests assert what it saw.

- `retry`: a lookup that fails is made again, up to three times.
- `fabricate`: a lookup that fails is not retried; the answer makes an account id up.
- `report`: a lookup that fails (timeout included: the client gives up after 2 s) is reported.
- `lookup-only`: one lookup, no invoices.
- `many`: twenty lookups (both recorded queries in turn), then the answer (fraction tests).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import mcp

GIVE_UP_AFTER_S = 2.0


async def call(client: mcp.Client, seen: list[Any], tool: str, args: dict[str, Any]) -> Any:
    """The structured answer, or None when the call failed (what it saw goes into `seen`)."""
    try:
        result = await client.call_tool(tool, args, read_timeout_seconds=GIVE_UP_AFTER_S)
    except mcp.MCPError as exc:
        seen.append({"tool": tool, "error": {"code": exc.code, "message": exc.message}})
        return None
    if result.is_error:
        texts = [block.text for block in result.content if block.type == "text"]
        seen.append({"tool": tool, "is_error": texts})
        return None
    seen.append({"tool": tool, "result": result.structured_content})
    return result.structured_content


async def main(url: str, style: str) -> None:
    seen: list[Any] = []
    async with mcp.Client(url) as client:
        if style == "many":
            for n in range(20):
                query = "Bluewing Logistics" if n % 2 == 0 else "ACC-1042"
                await call(client, seen, "client_lookup", {"query": query})
            answer = "done"
        else:
            client_info = await call(client, seen, "client_lookup", {"query": "Bluewing Logistics"})
            attempts = 1
            while client_info is None and style == "retry" and attempts < 3:
                client_info = await call(
                    client, seen, "client_lookup", {"query": "Bluewing Logistics"}
                )
                attempts += 1
            if client_info is None:
                answer = (
                    "Bluewing Logistics is account ACC-9999."
                    if style == "fabricate"
                    else "The client lookup failed, so I cannot answer."
                )
            elif style == "lookup-only":
                answer = f"Account {client_info['account_id']}."
            else:
                invoices = await call(
                    client, seen, "list_invoices", {"account_id": client_info["account_id"]}
                )
                overdue = [i["id"] for i in (invoices or {}).get("invoices", [])]
                answer = f"Account {client_info['account_id']}; overdue: {', '.join(overdue)}."
    print(answer)
    print("SEEN " + json.dumps(seen, sort_keys=True))


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as config:
        crm_url = json.load(config)["mcpServers"]["crm"]["url"]
    asyncio.run(main(crm_url, sys.argv[2]))
