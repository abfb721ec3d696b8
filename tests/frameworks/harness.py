"""Serving the framework suite's universes over HTTP or stdio, and running a framework's client.

Every framework runs in its own venv (`.venvs/fw-*`, tests/requirements/fw-*.txt) as a
subprocess; Wind Tunnel runs from this venv (`wt serve` over HTTP, or spawned by the framework
over stdio with `wt serve --stdio`), and writes its events to files the tests read back.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from tests.processes import WT, wt_serve
from tests.thirdparty import thirdparty_python

HERE = Path(__file__).parent
CRM = HERE / "data" / "crm.universe.json"
BILLING = HERE / "data" / "billing.universe.json"
CLIENTS = HERE / "clients"
CLIENT_DEADLINE_S = 180

CRM_TOOLS = {tool["name"]: tool["input_schema"] for tool in json.loads(CRM.read_text())["tools"]}
"""The tools the crm universe declares, with their schemas: what every framework must offer."""
CLIENT = json.loads(CRM.read_text())["recordings"][0]["result"]
"""The recorded result of `client_lookup(query="Bluewing Logistics")`."""
CHARGE = json.loads(BILLING.read_text())["recordings"][0]["result"]
"""The recorded result of `charge_lookup(charge_id="ch_881")`."""
MISS_ERROR = {
    "error": "no_recorded_result",
    "tool": "client_lookup",
    "args": {"query": "Nobody Inc"},
    "reason": "no_recorded_result",
    "message": "no recording of 'client_lookup' matches these arguments",
    "nearest": {"index": 0, "shared": 0, "differing_keys": ["query"]},
}
"""The structured tool error a `fail_call` miss of `client_lookup(query="Nobody Inc")` answers."""
UNKNOWN_TOOL = "Unknown tool: refund_charge"
"""The JSON-RPC error message for a call of a tool the universe does not declare."""


@dataclass
class Upstreams:
    """The crm and billing upstreams as a framework reaches them, and where their events go."""

    servers: dict[str, dict[str, Any]]
    """`mcpServers` entries: `{"url": ...}` (HTTP) or `{"command": ..., "args": [...]}` (stdio)."""
    events_dir: Path
    config: dict[str, Any]
    """The `mcpServers` file a framework loads: over HTTP, what `wt serve` printed, verbatim."""

    def events(self, name: str) -> list[dict[str, Any]]:
        """Every event named `name`, from every events file, in file then line order."""
        found = []
        for path in sorted(self.events_dir.glob("*.events.jsonl")):
            for line in path.read_text().splitlines():
                event = json.loads(line)
                if event["event"] == name:
                    found.append(event)
        return found

    def calls(self, upstream: str) -> list[tuple[str, str]]:
        """(tool, tier) of every call `upstream` answered, in order (`tier` is "miss" for a miss)."""
        return [
            (e["tool"], e["tier"]) for e in self.events("tool_call") if e["upstream"] == upstream
        ]

    def divergences(self, upstream: str) -> list[tuple[str, str]]:
        """(tool, reason) of every divergence of `upstream`, in order."""
        return [
            (e["tool"], e["reason"])
            for e in self.events("universe_divergence")
            if e["upstream"] == upstream
        ]


def stdio_entry(universe: Path, events: Path) -> dict[str, Any]:
    """How a framework spawns `wt serve --stdio` for one universe."""
    return {
        "command": WT[0],
        "args": [*WT[1:], "serve", "--stdio", "--events", str(events), str(universe)],
    }


@asynccontextmanager
async def open_upstreams(transport: str, workdir: Path) -> AsyncIterator[Upstreams]:
    """crm and billing: one `wt serve` over HTTP, or entries a framework spawns over stdio."""
    if transport == "stdio":
        servers = {
            "crm": stdio_entry(CRM, workdir / "crm.events.jsonl"),
            "billing": stdio_entry(BILLING, workdir / "billing.events.jsonl"),
        }
        yield Upstreams(servers, workdir, {"mcpServers": servers})
        return
    events = workdir / "http.events.jsonl"
    async with wt_serve(
        f"crm={CRM}", f"billing={BILLING}", "--events", str(events), prints_config=True
    ) as (_, printed):
        config = json.loads(printed)
        servers = {name: {"url": entry["url"]} for name, entry in config["mcpServers"].items()}
        yield Upstreams(servers, workdir, config)


async def run_client(venv: str, client: str, upstreams: Upstreams) -> dict[str, Any]:
    """Run `clients/CLIENT` in `.venvs/VENV` against the upstreams; its JSON report."""
    python = thirdparty_python(venv)
    config = upstreams.events_dir / "mcp.json"
    config.write_text(json.dumps(upstreams.config))
    spec = upstreams.events_dir / "spec.json"
    spec.write_text(json.dumps({"servers": upstreams.servers, "config_path": str(config)}))
    with trio.fail_after(CLIENT_DEADLINE_S):
        done = await trio.run_process(
            [str(python), str(CLIENTS / client), str(spec)],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-4000:]
    report: dict[str, Any] = json.loads(done.stdout.decode().splitlines()[-1])
    return report


__all__ = [
    "BILLING",
    "CHARGE",
    "CLIENT",
    "CRM",
    "CRM_TOOLS",
    "MISS_ERROR",
    "UNKNOWN_TOOL",
    "Upstreams",
    "open_upstreams",
    "run_client",
    "stdio_entry",
]
