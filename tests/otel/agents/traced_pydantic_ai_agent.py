"""The pydantic-ai support agent of tests/frameworks with its OpenTelemetry instrumentation on,
as a team runs it: its spans go over OTLP to the collector its environment names, inside the
trace context Wind Tunnel hands it (`TRACEPARENT`), so the replay's spans nest under its own.

Run by `wt run` as a `command` agent in the Phoenix venv (its task on stdin, the upstreams in
`$WT_MCP_CONFIG`); it prints its answer.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from opentelemetry import context, propagate, trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from pydantic_ai import Agent
from pydantic_ai.mcp import load_mcp_toolsets
from pydantic_ai.models.function import FunctionModel

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "frameworks" / "agents"))
from pydantic_ai_agent import support_model


async def answer(task: str, mcp_config: str) -> str:
    Agent.instrument_all()
    agent = Agent(FunctionModel(support_model), toolsets=load_mcp_toolsets(mcp_config))
    result = await agent.run(task)
    return result.output


def main() -> None:
    provider = TracerProvider(resource=Resource({"service.name": "support-agent"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    # The run's trace context, as the environment-variable carrier spells it.
    parent = propagate.extract({"traceparent": os.environ.get("TRACEPARENT", "")})
    token = context.attach(parent)
    try:
        print(asyncio.run(answer(sys.stdin.read(), os.environ["WT_MCP_CONFIG"])))
    finally:
        context.detach(token)
        provider.shutdown()


if __name__ == "__main__":
    main()
