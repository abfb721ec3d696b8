"""`ScriptedAgent`: a fixed plan of tool calls made through the official MCP client."""

from __future__ import annotations

import contextlib
import functools
import json
import ssl
from dataclasses import dataclass, field
from typing import Any

import httpx2
import mcp
import mcp_types as types
from mcp.client.streamable_http import streamable_http_client

from .base import AgentContext, AgentError, AgentResult

__all__ = ["PlannedCall", "ScriptedAgent"]


# The SDK's default timeouts for its own HTTP clients (`create_mcp_http_client`).
_HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One default TLS context for every client this process makes.

    Left to itself, each SDK client builds its own, and loading the CA bundle is most of a connect
    (docs/benchmarks.md), even to a plain http:// replay server, twice per two-upstream scenario.
    The context is the same default one; it is only built once.
    """
    return ssl.create_default_context()


@dataclass(frozen=True)
class PlannedCall:
    """One step: call `tool` on `upstream` (optional when the run has one upstream)."""

    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    upstream: str | None = None


def _result_json(result: types.CallToolResult) -> dict[str, Any]:
    dumped: dict[str, Any] = result.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped


class ScriptedAgent:
    """Performs its plan in order over Streamable HTTP and answers `final_answer`.

    Each upstream gets one client session for the whole run. A JSON-RPC error (an unknown tool)
    is recorded in the transcript and the plan goes on, as a real agent would see it fail.
    `transcript` holds, per step, the tool, args and what came back.
    """

    def __init__(
        self,
        plan: list[PlannedCall],
        *,
        final_answer: str = "",
        mode: str = "auto",
        name: str = "scripted",
    ) -> None:
        self.plan = plan
        self.final_answer = final_answer
        self.mode = mode
        self.name = name

    async def run(self, ctx: AgentContext) -> AgentResult:
        transcript: list[dict[str, Any]] = []
        clients: dict[str, mcp.Client] = {}
        async with contextlib.AsyncExitStack() as stack:
            for step in self.plan:
                upstream = self._upstream_of(step, ctx)
                client = clients.get(upstream)
                if client is None:
                    http = await stack.enter_async_context(
                        httpx2.AsyncClient(timeout=_HTTP_TIMEOUT, verify=_tls_context())
                    )
                    transport = streamable_http_client(ctx.servers[upstream], http_client=http)
                    client = mcp.Client(transport, mode=self.mode)
                    clients[upstream] = await stack.enter_async_context(client)
                try:
                    result = await client.call_tool(step.tool, step.args)
                    transcript.append({"tool": step.tool, "result": _result_json(result)})
                except mcp.MCPError as exc:
                    transcript.append(
                        {"tool": step.tool, "error": {"code": exc.code, "message": exc.message}}
                    )
        (ctx.workdir / "transcript.json").write_text(json.dumps(transcript, indent=2))
        return AgentResult(output=self.final_answer)

    @staticmethod
    def _upstream_of(step: PlannedCall, ctx: AgentContext) -> str:
        if step.upstream is not None:
            if step.upstream not in ctx.servers:
                raise AgentError(
                    f"plan step {step.tool!r} names upstream {step.upstream!r}; this run has "
                    f"{', '.join(sorted(ctx.servers)) or 'none'}"
                )
            return step.upstream
        if len(ctx.servers) != 1:
            raise AgentError(
                f"plan step {step.tool!r} needs `upstream`: "
                f"this run has {len(ctx.servers)} upstreams"
            )
        return next(iter(ctx.servers))
