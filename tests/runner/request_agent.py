#!/usr/bin/env python3
"""A pack agent that leaves the recording with requests, not only tool calls (issue 25).

    request_agent.py --mcp-config mcp.json [--style stays|leaves]

An ordinary MCP client program (the official Python SDK over Streamable HTTP), run by `wt run`
as any command agent. Against the `world` upstream it reads a resource, gets a prompt, asks a
completion and calls `echo`, whose recording makes the server ask for an elicitation and a
sampling. `stays` asks exactly what was recorded and answers the elicitation as the recording
client did; `leaves` reads a URI, gets a prompt and asks a completion that were never recorded,
and declines the elicitation. It prints one line per step on stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import anyio
import mcp
import mcp_types as types

SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "scripted"}


def _requests(style: str) -> tuple[str, str, dict[str, str], dict[str, str]]:
    """The resource URI, prompt name, prompt arguments and completion argument to ask for."""
    if style == "stays":
        return "test://static-text", "with_args", {"arg1": "a", "arg2": "b"}, {"arg1": "a"}
    return "test://<never>&recorded", "with_args", {"arg1": "<z>"}, {"arg1": "zz"}


async def run(url: str, style: str) -> list[str]:
    lines: list[str] = []

    async def on_sample(context: Any, params: types.CreateMessageRequestParams) -> Any:
        return types.CreateMessageResult.model_validate(SAMPLED)

    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> Any:
        if style == "stays":
            return types.ElicitResult(action="accept", content={})
        return types.ElicitResult(action="decline")

    uri, prompt, arguments, completion = _requests(style)
    async with mcp.Client(
        url, mode="legacy", sampling_callback=on_sample, elicitation_callback=on_elicit
    ) as client:
        try:
            read = await client.read_resource(uri)
            lines.append(f"read: {read.contents[0].text}")  # type: ignore[union-attr]
        except mcp.MCPError as exc:
            lines.append(f"read error {exc.code}: {exc.message}")
        try:
            got = await client.get_prompt(prompt, arguments)
            lines.append(f"prompt: {got.messages[0].content.text}")  # type: ignore[union-attr]
        except mcp.MCPError as exc:
            lines.append(f"prompt error {exc.code}: {exc.message}")
        [(name, value)] = completion.items()
        try:
            completed = await client.complete(
                types.PromptReference(type="ref/prompt", name="with_args"),
                {"name": name, "value": value},
            )
            lines.append(f"complete: {completed.completion.values}")
        except mcp.MCPError as exc:
            lines.append(f"complete error {exc.code}: {exc.message}")
        echoed = await client.call_tool("echo", {"text": "hi"})
        lines.append(f"echo error: {echoed.is_error}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mcp-config", required=True)
    parser.add_argument("--style", choices=("stays", "leaves"), default="leaves")
    args = parser.parse_args()
    with open(args.mcp_config, encoding="utf-8") as f:
        url = json.load(f)["mcpServers"]["world"]["url"]
    sys.stdin.read()
    for line in anyio.run(run, url, args.style):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
