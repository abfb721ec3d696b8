"""A TOML pack whose scenarios misbehave on purpose, for the fault tests."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

from tests.compat import COMPAT_UNIVERSE

__all__ = ["FLOOD_CALLS", "JUNK", "write_faulty_pack"]

FLOOD_CALLS = 2000
JUNK = bytes(range(256)) * 4 + b"\xff\xfe\xc3(\xed\xa0\x80"

FLOOD_AGENT = f"""
import asyncio
import mcp


async def flood(ctx):
    async def client():
        async with mcp.Client(ctx.servers["crm"]) as session:
            for _ in range({FLOOD_CALLS} // 10):
                await session.call_tool("motd", {{}})

    await asyncio.gather(*(client() for _ in range(10)))
    return "flooded"
"""

AGENTS = {
    "ok": "print('answer ok')",
    "crash": "import sys; sys.stderr.write('kaput\\n'); sys.exit(3)",
    "hang": "import time; time.sleep(600)",
    "junk": f"import os; os.write(1, {JUNK!r}); os.write(2, {JUNK!r})",
    "junk_crash": "import os, sys; os.write(2, b'\\xff\\xfe\\x00garbage\\xc3(\\n'); sys.exit(1)",
}


def scenario(name: str, agent: str, marker: str, extra: str = "") -> str:
    code = json.dumps(AGENTS[agent])
    return textwrap.dedent(
        f"""
        [[scenario]]
        name = "{name}"
        task = "t"
        upstreams = {{ crm = "crm.universe.json" }}
        {extra}
        [scenario.agent]
        kind = "command"
        command = ["{{python}}", "-c", {code}, "{marker}"]
        [[scenario.scorers]]
        kind = "contains"
        text = "answer"
        """
    )


def write_faulty_pack(root: Path, marker: str, *, good: int = 3, concurrency: int = 6) -> Path:
    """`root/pack.toml`: `good` passing scenarios plus one of each fault."""
    shutil.copy(COMPAT_UNIVERSE, root / "crm.universe.json")
    (root / "flood_agent.py").write_text(FLOOD_AGENT)
    parts = [
        textwrap.dedent(
            f"""
            [pack]
            name = "faults"
            concurrency = {concurrency}
            timeout_s = 60
            """
        )
    ]
    parts += [scenario(f"ok{i}", "ok", marker) for i in range(good)]
    parts.append(scenario("crash", "crash", marker))
    parts.append(scenario("hang", "hang", marker, "timeout_s = 1"))
    parts.append(scenario("junk", "junk", marker))
    parts.append(scenario("junk_crash", "junk_crash", marker))
    parts.append(
        textwrap.dedent(
            """
            [[scenario]]
            name = "flood"
            task = "t"
            upstreams = { crm = "crm.universe.json" }
            [scenario.agent]
            kind = "python"
            callable = "flood_agent:flood"
            [[scenario.policies]]
            kind = "call_budget"
            max_calls = 100
            """
        )
    )
    pack = root / "pack.toml"
    pack.write_text("".join(parts))
    return pack
