"""An OpenAI Agents SDK agent for the fault tests, run by `wt run` as a `command` agent.

Its `agents.testing.ScriptedModel` looks Bluewing Logistics up (`client_lookup` on the crm
upstream), looks it up again in a second turn (a retry, whatever the first call gave), then
answers. Its final answer is the JSON list of what the SDK handed the model for each call
(`function_call_output`). The upstreams come from `$WT_MCP_CONFIG`; the client gives up on a call
after `TIMEOUT_S`.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from agents import Agent, Runner, set_tracing_disabled
from agents.mcp import MCPServerStreamableHttp
from agents.testing import ScriptedModel, assistant_message, function_call

TIMEOUT_S = 2.0
LOOKUP = {"query": "Bluewing Logistics"}


def outputs(model: ScriptedModel) -> list[Any]:
    """Every `function_call_output` the model was given, in the order it got them."""
    last = model.calls[-1].input
    return [item["output"] for item in last if item.get("type") == "function_call_output"]


def crm_url() -> str:
    """The crm upstream's URL, from the `mcpServers` file Wind Tunnel wrote."""
    with open(os.environ["WT_MCP_CONFIG"], encoding="utf-8") as config:
        url: str = json.load(config)["mcpServers"]["crm"]["url"]
    return url


async def main(url: str) -> None:
    set_tracing_disabled(True)  # offline: no trace export to OpenAI
    model = ScriptedModel(
        [
            [function_call("client_lookup", LOOKUP, call_id="call-1")],
            [function_call("client_lookup", LOOKUP, call_id="call-2")],
            [assistant_message("done")],
        ]
    )
    crm = MCPServerStreamableHttp(
        {"url": url}, name="crm", client_session_timeout_seconds=TIMEOUT_S
    )
    async with crm:
        await Runner.run(Agent(name="support", model=model, mcp_servers=[crm]), "Who?")
    print(json.dumps(outputs(model), sort_keys=True))


if __name__ == "__main__":
    asyncio.run(main(crm_url()))
