#!/usr/bin/env python3
"""A small, deterministic support agent for the Wind Tunnel demo (no language model inside).

It is an ordinary MCP client program, run exactly as Wind Tunnel runs any agent under test:

    support_agent.py --mcp-config mcp.json [--style careful|wandering]  < task.txt

It reads the standard `mcpServers` config, picks a plan from the task's wording, calls the tools
over Streamable HTTP with the official MCP Python SDK, and prints its final answer on stdout.

- `careful` (version 1) asks exactly what the recorded incident asked (with harmless extra
  arguments, which `arg_keys` tolerate): it stays inside the recording.
- `wandering` (version 2) rephrases lookups, forgets an argument, calls a tool the upstream never
  had, and pages once too often: every one of those is caught as a divergence.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import sys
from typing import Any

import mcp


class Upstreams:
    """One MCP client session per upstream named in the config."""

    def __init__(self, config: dict[str, Any], stack: contextlib.AsyncExitStack) -> None:
        self.urls = {name: entry["url"] for name, entry in config["mcpServers"].items()}
        self.clients: dict[str, mcp.Client] = {}
        self.stack = stack

    async def call(self, upstream: str, tool: str, args: dict[str, Any]) -> Any:
        client = self.clients.get(upstream)
        if client is None:
            client = await self.stack.enter_async_context(mcp.Client(self.urls[upstream]))
            self.clients[upstream] = client
        try:
            result = await client.call_tool(tool, args)
        except mcp.MCPError as exc:
            return {"error": exc.message}
        if result.is_error:
            return {"error": result.structured_content or result.content[0].text}
        return result.structured_content


def company_in(task: str) -> str:
    match = re.search(r"\b([A-Z][a-z]+ [A-Z][a-z]+(?: [A-Z][a-z]+)?)\b", task)
    return match.group(1) if match else task


async def contact_lookup(up: Upstreams, task: str, careful: bool) -> str:
    company = company_in(task)
    query = company if careful else company.split()[0]
    client = await up.call("crm", "client_lookup", {"query": query, "verbose": True})
    if "error" in client:
        return f"I could not find {company}."
    return f"{client['name']}: account {client['account_id']}, contact {client['email']}."


async def refund_duplicate(up: Upstreams, task: str, careful: bool) -> str:
    client = await up.call("crm", "client_lookup", {"query": company_in(task)})
    if "error" in client:
        return "I could not find the client."
    invoice = re.search(r"INV-\d+", task)
    args = {"account_id": client["account_id"]}
    if careful and invoice:
        args["invoice_id"] = invoice.group(0)
    listed = await up.call("billing", "list_charges", args)
    if "error" in listed:
        # Version 2 improvises: refund the whole invoice with a tool the billing API never had.
        await up.call(
            "billing", "refund_invoice", {"invoice_id": invoice.group(0) if invoice else ""}
        )
        await up.call(
            "email",
            "send_email",
            {
                "to": client["email"],
                "subject": "About your invoice",
                "body": "We are looking into it.",
            },
        )
        return "I tried to refund the invoice; please check."
    duplicate = sorted(listed["charges"], key=lambda c: c["created"])[-1]
    refund = await up.call(
        "billing", "refund_charge", {"charge_id": duplicate["charge_id"], "reason": "duplicate"}
    )
    if "error" in refund:
        return f"The refund failed: {refund['error']}"
    await up.call(
        "email",
        "send_email",
        {
            "to": client["email"],
            "subject": f"Refund of duplicate charge {duplicate['charge_id']}",
            "body": f"Dear {client['name']}, the duplicate charge {duplicate['charge_id']} "
            f"({duplicate['amount']}) was refunded as {refund['refund_id']}.",
        },
    )
    return (
        f"Refunded {duplicate['charge_id']} ({refund['refund_id']}) and emailed {client['email']}."
    )


async def ticket_history(up: Upstreams, task: str, careful: bool) -> str:
    client = await up.call("crm", "client_lookup", {"query": company_in(task)})
    if "error" in client:
        return "I could not find the client."
    tickets: list[dict[str, Any]] = []
    while True:
        batch = await up.call("tickets", "next_ticket_batch", {"account_id": client["account_id"]})
        if "error" in batch or not batch["tickets"]:
            break
        tickets.extend(batch["tickets"])
    if not careful:
        # Version 2 "double-checks" the cursor after it already said it was done.
        await up.call("tickets", "next_ticket_batch", {"account_id": client["account_id"]})
    ids = ", ".join(t["id"] for t in tickets)
    return f"{client['name']} opened {len(tickets)} tickets: {ids}."


async def answer(config: dict[str, Any], task: str, careful: bool) -> str:
    async with contextlib.AsyncExitStack() as stack:
        up = Upstreams(config, stack)
        if "refund" in task.lower() or "double" in task.lower():
            return await refund_duplicate(up, task, careful)
        if "ticket" in task.lower():
            return await ticket_history(up, task, careful)
        return await contact_lookup(up, task, careful)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mcp-config", required=True)
    parser.add_argument("--style", choices=["careful", "wandering"], default="careful")
    args = parser.parse_args()
    with open(args.mcp_config, encoding="utf-8") as f:
        config = json.load(f)
    task = sys.stdin.read()
    print(asyncio.run(answer(config, task, careful=args.style == "careful")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
