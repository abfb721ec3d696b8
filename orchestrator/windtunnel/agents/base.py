"""What every agent adapter receives and returns."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..errors import WindtunnelError

__all__ = ["Agent", "AgentContext", "AgentError", "AgentResult", "mcp_config", "write_mcp_config"]


class AgentError(WindtunnelError):
    """The agent crashed or misbehaved; the message is the reason shown in results."""


@dataclass(frozen=True)
class AgentContext:
    """One scenario run, as the agent sees it."""

    scenario: str
    task: str
    servers: dict[str, str]
    """Upstream name → Streamable HTTP URL."""
    workdir: Path
    """A private directory for this run (config file, task file, scratch)."""
    seed: int = 0
    unit_id: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    traceparent: str | None = None
    """The W3C trace context of this run's span when Wind Tunnel exports OpenTelemetry: an
    agent that starts its own spans under it puts the replay's spans in its trace (a command
    agent gets it as `TRACEPARENT`)."""

    @property
    def mcp_config_path(self) -> Path:
        return self.workdir / "mcp.json"


@dataclass(frozen=True)
class AgentResult:
    """What the agent answered; `stderr` is kept (tail) for the report."""

    output: str | None
    stderr: str = ""
    exit_code: int | None = None


class Agent(Protocol):
    """Runs once per scenario run; raise `AgentError` to fail the run with a reason."""

    name: str

    async def run(self, ctx: AgentContext) -> AgentResult: ...


def mcp_config(servers: dict[str, str]) -> dict[str, Any]:
    """The standard `mcpServers` client config (Claude Code, Claude Desktop, Cursor, ...)."""
    return {"mcpServers": {name: {"type": "http", "url": url} for name, url in servers.items()}}


def write_mcp_config(ctx: AgentContext) -> Path:
    path = ctx.mcp_config_path
    path.write_text(json.dumps(mcp_config(ctx.servers), indent=2) + "\n")
    return path


def env_name(upstream: str) -> str:
    """`WT_MCP_URL_<NAME>`: upper case, anything not alphanumeric becomes `_`."""
    return "WT_MCP_URL_" + re.sub(r"[^A-Za-z0-9]", "_", upstream).upper()


def agent_env(ctx: AgentContext) -> dict[str, str]:
    """Environment variables every subprocess agent gets."""
    env = {
        "WT_MCP_CONFIG": str(ctx.mcp_config_path),
        "WT_SCENARIO": ctx.scenario,
        "WT_UNIT_ID": ctx.unit_id,
        "WT_SEED": str(ctx.seed),
        "WT_TASK": ctx.task,
    }
    for upstream, url in ctx.servers.items():
        env[env_name(upstream)] = url
    if len(ctx.servers) == 1:
        env["WT_MCP_URL"] = next(iter(ctx.servers.values()))
    if ctx.traceparent is not None:
        env["TRACEPARENT"] = ctx.traceparent
    return env
