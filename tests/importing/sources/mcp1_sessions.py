"""Real MCP sessions on the `mcp` 1.x stack, traced by the real instrumentation (runs in .venvs/traces-mcp1).

    python mcp1_sessions.py SOURCE OUT [key=value...]

SOURCE: `openllmetry` (`opentelemetry-instrumentation-mcp`) or `logfire` (`logfire.instrument_mcp()`,
scrubbing on). The trace goes to OUT as OTLP/JSON lines (the file exporter). With `replay=URL`
nothing is traced: the same client calls the same tools on URL (a `wt serve` of the imported
fixture) instead. Either way the script prints each `CallToolResult` the client received, as the
SDK dumps it (`model_dump(by_alias=True, exclude_none=True)`), one JSON line per call.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
from mcp import ClientSession
from mcp.server.fastmcp import FastMCP
from mcp.shared.memory import create_connected_server_and_client_session

SOURCE, OUT = sys.argv[1], sys.argv[2]
OPTIONS = dict(arg.split("=", 1) for arg in sys.argv[3:])

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("client_lookup", {"query": "Bluewing", "limit": 3}),
    ("refund", {"charge_id": "ch_1"}),
    ("verify_token", {"api_key": "sk-live-4f9a8b7c6d5e4f3a2b1c"}),
]


def _tracing() -> Any:
    from opentelemetry.exporter.otlp.json.file.trace_exporter import FileSpanExporter
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    if SOURCE == "logfire":
        import logfire

        logfire.configure(
            send_to_logfire=False,
            console=False,
            service_name="support-agent",
            additional_span_processors=[SimpleSpanProcessor(FileSpanExporter(OUT))],
        )
        logfire.instrument_mcp()
        return logfire
    from opentelemetry import trace
    from opentelemetry.instrumentation.mcp import McpInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    provider = TracerProvider(resource=Resource.create({"service.name": "support-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(OUT)))
    trace.set_tracer_provider(provider)
    McpInstrumentor().instrument(tracer_provider=provider)
    return provider


def _server() -> FastMCP:
    server = FastMCP("crm")

    @server.tool()
    def client_lookup(query: str, limit: int = 1) -> dict[str, Any]:
        """Look up a client by name."""
        return {
            "name": query,
            "email": "ops@bluewing.example",
            "tier": 2,
            "zeta": [3, 1.5],
            "alpha": None,
        }

    @server.tool()
    def refund(charge_id: str) -> str:
        """Refund a charge."""
        raise ValueError(f"charge {charge_id} already refunded")

    @server.tool()
    def verify_token(api_key: str) -> str:
        """Check an API key."""
        return "valid"

    return server


async def _calls(client: ClientSession) -> None:
    await client.list_tools()
    for name, args in CALLS:
        result = await client.call_tool(name, args)
        print(json.dumps(result.model_dump(by_alias=True, exclude_none=True, mode="json")))


async def main() -> None:
    if "replay" in OPTIONS:
        from mcp.client.streamable_http import streamablehttp_client

        async with (
            streamablehttp_client(OPTIONS["replay"]) as (read, write, _),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            await _calls(client)
        return
    tracing = _tracing()
    from opentelemetry import trace

    with trace.get_tracer("support-agent").start_as_current_span("agent run"):
        async with create_connected_server_and_client_session(_server()._mcp_server) as client:
            await _calls(client)
    tracing.shutdown()


anyio.run(main)
