"""A real MCP session whose tool sends the client messages while it works, traced by the real
instrumentation (issue 25).

    python server_message_sessions.py SOURCE OUT

The `refund` tool reports progress, logs, elicits a confirmation and samples the client's model.
SOURCE: `logfire` (runs in .venvs/traces-mcp1: `logfire.instrument_mcp()` on `mcp` 1.x, whose
spans hold each request sent, the server's included, with its response, and a log record per log
message the client received) or `mcp-sdk` (runs in .venvs/traces-mcp2: the `mcp` 2.x SDK's own
OpenTelemetry spans, one per request sent, the server's included, with no payload). The trace goes
to OUT as OTLP/JSON lines (the file exporter). Prints what the client received as one JSON object:
`{"asked": [[method, params]], "answers": [result], "logs": [params], "result": CallToolResult}`
(each as the SDK dumps it by alias).
"""

# No `from __future__ import annotations`: the SDKs read the tool's annotations at runtime, and
# its `Context` class is a local of `_server`.
import json
import sys
from typing import Any

import anyio

SOURCE, OUT = sys.argv[1], sys.argv[2]
seen: dict[str, Any] = {"asked": [], "answers": [], "logs": []}


def _dump(value: Any) -> Any:
    return value.model_dump(by_alias=True, exclude_none=True, mode="json")


def _callbacks(types: Any) -> dict[str, Any]:
    async def sampling(context: Any, params: Any) -> Any:
        seen["asked"].append(["sampling/createMessage", _dump(params)])
        answer = types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="fair"),
            model="scripted",
        )
        seen["answers"].append(_dump(answer))
        return answer

    async def elicitation(context: Any, params: Any) -> Any:
        seen["asked"].append(["elicitation/create", _dump(params)])
        answer = types.ElicitResult(action="accept", content={"ok": True})
        seen["answers"].append(_dump(answer))
        return answer

    async def logging(params: Any) -> None:
        seen["logs"].append(_dump(params))

    return {
        "sampling_callback": sampling,
        "elicitation_callback": elicitation,
        "logging_callback": logging,
    }


def _server(fastmcp_class: Any, context_class: Any, types: Any, pydantic: Any) -> Any:
    server = fastmcp_class("refunds")

    class Confirm(pydantic.BaseModel):
        ok: bool

    @server.tool()
    async def refund(reason: str, ctx: context_class) -> str:  # type: ignore[valid-type]
        await ctx.report_progress(1, 2)
        await ctx.info(f"refund for {reason} requested")
        confirmed = await ctx.elicit(f"Refund for {reason}?", Confirm)
        message = types.SamplingMessage(
            role="user", content=types.TextContent(type="text", text=f"Is {reason} fair?")
        )
        verdict = await ctx.session.create_message([message], max_tokens=20)
        await ctx.report_progress(2, 2)
        return f"refund for {reason}: {confirmed.action}, model said {verdict.content.text}"

    return server


async def logfire_run() -> None:
    import logfire
    import mcp.types as types
    import pydantic
    from mcp.server.fastmcp import Context, FastMCP
    from mcp.shared.memory import create_connected_server_and_client_session
    from opentelemetry.exporter.otlp.json.file.trace_exporter import FileSpanExporter
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    logfire.configure(
        send_to_logfire=False,
        console=False,
        service_name="refund-agent",
        additional_span_processors=[SimpleSpanProcessor(FileSpanExporter(OUT))],
    )
    logfire.instrument_mcp()
    server = _server(FastMCP, Context, types, pydantic)
    with logfire.span("agent run"):
        async with create_connected_server_and_client_session(
            server._mcp_server, **_callbacks(types)
        ) as client:
            await client.list_tools()
            result = await client.call_tool("refund", {"reason": "a broken kettle"})
    seen["result"] = _dump(result)
    logfire.shutdown()


async def mcp_sdk_run() -> None:
    import mcp
    import mcp_types as types
    import pydantic
    from mcp.server.mcpserver import Context, MCPServer
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.json.file.trace_exporter import FileSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "refund-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(OUT)))
    trace.set_tracer_provider(provider)
    server = _server(MCPServer, Context, types, pydantic)
    with trace.get_tracer("refund-agent").start_as_current_span("agent run"):
        async with mcp.Client(
            server, mode="legacy", log_level="debug", **_callbacks(types)
        ) as client:
            result = await client.call_tool("refund", {"reason": "a broken kettle"})
    seen["result"] = _dump(result)
    provider.shutdown()


anyio.run(logfire_run if SOURCE == "logfire" else mcp_sdk_run)
print(json.dumps(seen))
