"""Real agent runs on the `mcp` 2.x stack, traced by the real instrumentation (runs in .venvs/traces-mcp2).

    python mcp2_agents.py SOURCE OUT [key=value...]

SOURCE: `pydantic-ai` (pydantic-ai's own OpenTelemetry instrumentation; `version=2..6`,
`content=0|1`), `logfire` (the same run through logfire, scrubbing on), `fastmcp` (a fastmcp
client alone: the `mcp` SDK's and fastmcp's own spans), `mcp-sdk` (the `mcp` SDK's `Client` and
`MCPServer` alone, in process: the SDK's server spans), `openai-agents` (openai-agents' own
tracing, written by a `TracingProcessor` as JSON lines; `server=mcp-sdk` serves its tools with the
`mcp` SDK's `MCPServer` instead of fastmcp), `serve` (the MCP server on stdio, for
openai-agents; `server=mcp-sdk` as above). `exporter=protobuf` writes protobuf's stock JSON instead of OTLP/JSON lines.
With `replay=URL` (pydantic-ai) nothing is traced: the same agent runs against URL (a `wt serve`
of the imported fixture) instead of the server.
Every model is scripted (pydantic-ai's `FunctionModel`, openai-agents' `ScriptedModel`): offline.
Prints the agent's final answer, then the tool results the agent's framework received, one JSON
line each (`{"tool", "args", "view"}`), for the tests to compare with the replay.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from opentelemetry import trace
from opentelemetry.exporter.otlp.json.file.trace_exporter import FileSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

SOURCE, OUT = sys.argv[1], sys.argv[2]
OPTIONS = dict(arg.split("=", 1) for arg in sys.argv[3:])
TASK = "Refund Bluewing's duplicate charge."
ANSWER = "Bluewing's duplicate charge was already refunded."

server = FastMCP("crm")


@server.tool
def client_lookup(query: str, limit: int = 1) -> dict[str, Any]:
    """Look up a client by name."""
    # Keys out of alphabetical order, a float, a null: what fidelity is checked on.
    return {
        "name": query,
        "email": "ops@bluewing.example",
        "tier": 2,
        "zeta": [3, 1.5],
        "alpha": None,
    }


@server.tool
def refund(charge_id: str) -> str:
    """Refund a charge."""
    raise ToolError(f"charge {charge_id} already refunded")


@server.tool
def verify_token(api_key: str) -> str:
    """Check an API key."""
    return "valid"


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("client_lookup", {"query": "Bluewing", "limit": 3}),
    ("refund", {"charge_id": "ch_1"}),
]
if OPTIONS.get("secret") == "1":
    CALLS.append(("verify_token", {"api_key": "sk-live-4f9a8b7c6d5e4f3a2b1c"}))

memory = InMemorySpanExporter()
provider = TracerProvider(resource=Resource.create({"service.name": "support-agent"}))


def _tracing() -> None:
    exporter = memory if OPTIONS.get("exporter") == "protobuf" else FileSpanExporter(OUT)
    if SOURCE == "logfire":
        import logfire

        logfire.configure(
            send_to_logfire=False,
            console=False,
            service_name="support-agent",
            additional_span_processors=[SimpleSpanProcessor(exporter)],
        )
        logfire.instrument_pydantic_ai()
    else:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)


def _write_protobuf_json() -> None:
    from google.protobuf.json_format import MessageToJson
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    with open(OUT, "w") as file:
        file.write(MessageToJson(encode_spans(memory.get_finished_spans())))


def _report(seen: list[dict[str, Any]]) -> None:
    print(json.dumps({"answer": ANSWER}))
    for item in seen:
        print(json.dumps(item))


async def pydantic_ai_run() -> None:
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.messages import (
        ModelMessage,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        step = sum(1 for message in messages if isinstance(message, ModelResponse))
        if step < len(CALLS):
            name, args = CALLS[step]
            return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=f"call_{step}")])
        return ModelResponse(parts=[TextPart(ANSWER)])

    if SOURCE != "logfire" and "replay" not in OPTIONS:
        Agent.instrument_all(
            InstrumentationSettings(
                tracer_provider=provider,
                include_content=OPTIONS.get("content", "1") == "1",
                version=int(OPTIONS.get("version", "5")),  # type: ignore[arg-type]
            )
        )
    toolset = MCPToolset(OPTIONS.get("replay", server), tool_error_behavior="failed")
    agent = Agent(
        FunctionModel(script), toolsets=[toolset], instructions="You are a support agent."
    )
    result = await agent.run(TASK)
    seen = [
        {"tool": part.tool_name, "view": part.model_response_str()}
        for message in result.all_messages()
        for part in getattr(message, "parts", [])
        if isinstance(part, ToolReturnPart)
    ]
    _report(seen)


def sdk_crm_server() -> Any:
    """The crm tools on the `mcp` SDK's own `MCPServer`: a tool that fails is answered with the
    SDK's `Error executing tool <name>: <detail>` text (and `isError`)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError as SDKToolError

    sdk_server = MCPServer("crm")

    @sdk_server.tool()
    def client_lookup(query: str, limit: int = 1) -> dict[str, Any]:
        """Look up a client by name."""
        return {"name": query, "email": "ops@bluewing.example"}

    @sdk_server.tool()
    def refund(charge_id: str) -> str:
        """Refund a charge."""
        raise SDKToolError(f"charge {charge_id} already refunded")

    return sdk_server


async def mcp_sdk_run() -> None:
    import mcp

    sdk_server = sdk_crm_server()
    seen = []
    with trace.get_tracer("support-agent").start_as_current_span("agent run"):
        async with mcp.Client(sdk_server) as client:
            for name, args in CALLS:
                result = await client.call_tool(name, args)
                seen.append({"tool": name, "view": result.structured_content})
    _report(seen)


async def fastmcp_run() -> None:
    from fastmcp import Client

    tracer = trace.get_tracer("support-agent")
    seen = []
    with tracer.start_as_current_span("agent run"):
        async with Client(server) as client:
            await client.list_tools()
            for name, args in CALLS:
                result = await client.call_tool(name, args, raise_on_error=False)
                seen.append({"tool": name, "view": result.structured_content})
    _report(seen)


async def openai_agents_run() -> None:
    from agents import Agent, Runner, set_trace_processors
    from agents.mcp import MCPServerStdio
    from agents.testing import ScriptedModel, assistant_message, function_call
    from agents.tracing import Span, Trace, TracingProcessor

    class JsonLines(TracingProcessor):
        """What a user's processor does: every trace and finished span, exported, one line each."""

        def __init__(self, path: str) -> None:
            self.file = open(path, "w")  # noqa: SIM115 - closed in shutdown()

        def _write(self, item: Trace | Span[Any]) -> None:
            data = item.export()
            if data is not None:
                self.file.write(json.dumps(data) + "\n")

        def on_trace_start(self, trace: Trace) -> None:
            self._write(trace)

        def on_trace_end(self, trace: Trace) -> None:
            pass

        def on_span_start(self, span: Span[Any]) -> None:
            pass

        def on_span_end(self, span: Span[Any]) -> None:
            self._write(span)

        def shutdown(self) -> None:
            self.file.close()

        def force_flush(self) -> None:
            self.file.flush()

    processor = JsonLines(OUT)
    set_trace_processors([processor])
    steps = [
        [function_call(name, args, call_id=f"call_{i}")] for i, (name, args) in enumerate(CALLS)
    ]
    model = ScriptedModel([*steps, [assistant_message(ANSWER)]])
    serve_options = [f"server={OPTIONS['server']}"] if "server" in OPTIONS else []
    params = {"command": sys.executable, "args": [__file__, "serve", "-", *serve_options]}
    async with MCPServerStdio(params, name="crm", cache_tools_list=True) as mcp_server:
        agent = Agent(
            name="support",
            instructions="You are a support agent.",
            model=model,
            mcp_servers=[mcp_server],
        )
        result = await Runner.run(agent, TASK)
    seen = [
        {"tool": item.raw_item["call_id"], "view": item.output}
        for item in result.new_items
        if item.type == "tool_call_output_item"
    ]
    processor.shutdown()
    _report(seen)


RUNS = {
    "pydantic-ai": pydantic_ai_run,
    "logfire": pydantic_ai_run,
    "mcp-sdk": mcp_sdk_run,
    "fastmcp": fastmcp_run,
    "openai-agents": openai_agents_run,
}

if SOURCE == "serve" and OPTIONS.get("server") == "mcp-sdk":
    sdk_crm_server().run("stdio")
elif SOURCE == "serve":
    server.run(show_banner=False)
elif "replay" in OPTIONS:
    asyncio.run(RUNS[SOURCE]())
else:
    if SOURCE != "openai-agents":
        # openai-agents writes OUT through its own processor: an OTel exporter on the same file
        # would write over its lines (the `mcp` SDK's client spans) from another offset.
        _tracing()
    asyncio.run(RUNS[SOURCE]())
    provider.shutdown()
    if SOURCE == "logfire":
        import logfire

        logfire.shutdown()
    if OPTIONS.get("exporter") == "protobuf":
        _write_protobuf_json()
