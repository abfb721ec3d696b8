"""Real MCP sessions that use resources, prompts and completions besides a tool, traced by the real
instrumentation (issue 25).

    python surface_sessions.py SOURCE OUT

SOURCE: `logfire` (runs in .venvs/traces-mcp1: `logfire.instrument_mcp()` on `mcp` 1.x, which
records each request and its response) or `mcp-sdk` (runs in .venvs/traces-mcp2: the `mcp` 2.x
SDK's own OpenTelemetry spans, which record the method and its target but no answer). The trace
goes to OUT as OTLP/JSON lines (the file exporter). Prints what the client received, one JSON line
per request: `{"method", "request", "result"}` (results as the SDK dumps them by alias).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio

SOURCE, OUT = sys.argv[1], sys.argv[2]


def _dump(value: Any) -> Any:
    return value.model_dump(by_alias=True, exclude_none=True, mode="json")


def _report(method: str, request: dict[str, Any], result: Any) -> None:
    print(json.dumps({"method": method, "request": request, "result": _dump(result)}))


def _server(fastmcp_class: Any) -> Any:
    server = fastmcp_class("docs", instructions="Read docs://readme before answering.")

    @server.resource("docs://readme", mime_type="text/markdown")
    def readme() -> str:
        """The project's readme."""
        return "# Docs\nUse search."

    @server.prompt()
    def summarize(topic: str) -> str:
        """Summarize a topic."""
        return f"Summarize {topic} in one line."

    @server.tool()
    def search(query: str) -> str:
        """Search the docs."""
        return f"2 hits for {query}"

    return server


async def _session(client: Any, types: Any) -> None:
    _report("resources/list", {}, await client.list_resources())
    _report("prompts/list", {}, await client.list_prompts())
    read = {"uri": "docs://readme"}
    _report("resources/read", read, await client.read_resource("docs://readme"))
    get = {"name": "summarize", "arguments": {"topic": "wind"}}
    _report("prompts/get", get, await client.get_prompt("summarize", {"topic": "wind"}))
    call = {"name": "search", "arguments": {"query": "wind"}}
    _report("tools/call", call, await client.call_tool("search", {"query": "wind"}))


async def logfire_run() -> None:
    import logfire
    import mcp.types as types
    from mcp.server.fastmcp import FastMCP
    from mcp.shared.memory import create_connected_server_and_client_session
    from opentelemetry.exporter.otlp.json.file.trace_exporter import FileSpanExporter
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    logfire.configure(
        send_to_logfire=False,
        console=False,
        service_name="docs-agent",
        additional_span_processors=[SimpleSpanProcessor(FileSpanExporter(OUT))],
    )
    logfire.instrument_mcp()
    server = _server(FastMCP)
    with logfire.span("agent run"):
        async with create_connected_server_and_client_session(server._mcp_server) as client:
            await client.list_tools()
            await _session(client, types)
    logfire.shutdown()


async def mcp_sdk_run() -> None:
    import mcp
    import mcp_types as types
    from mcp.server.mcpserver import MCPServer
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.json.file.trace_exporter import FileSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "docs-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(OUT)))
    trace.set_tracer_provider(provider)
    server = _server(MCPServer)
    with trace.get_tracer("docs-agent").start_as_current_span("agent run"):
        async with mcp.Client(server) as client:
            await _session(client, types)
    provider.shutdown()


anyio.run(logfire_run if SOURCE == "logfire" else mcp_sdk_run)
