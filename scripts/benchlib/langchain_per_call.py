"""langchain-mcp-adapters' default tools against `wt serve --stdio`: 8 calls, a session each.

Run by `stdio_startup` in `.venvs/fw-langchain` (the adapters need `mcp<2`, a venv of their own):
`python langchain_per_call.py SPEC`, where SPEC is a JSON file naming the server's command,
arguments, environment, tool, arguments and number of calls. Prints one JSON line: the wall
time of the calls (each spawns a server: the adapters' default tools open a session per call)
and the CPU of the processes it spawned, the listing session included.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import resource
import sys
import time
from typing import Any


async def main(spec: dict[str, Any]) -> None:
    server = {
        "transport": "stdio",
        "command": spec["command"],
        "args": spec["args"],
        "env": spec["env"],
    }
    # Imported by name: the adapters live only in `.venvs/fw-langchain`, not where this is typed.
    adapters = importlib.import_module("langchain_mcp_adapters.client")
    client = adapters.MultiServerMCPClient({"server": server})
    tools = {tool.name: tool for tool in await client.get_tools()}
    tool = tools[spec["tool"]]
    started = time.perf_counter()
    for _ in range(spec["calls"]):
        await tool.ainvoke(spec["arguments"])
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime}))


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as file:
        asyncio.run(main(json.load(file)))
