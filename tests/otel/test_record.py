"""`wt record --otel URL`: a server span per recorded call (tier `live`, the MCP conventions'
attributes), under the agent's span from `_meta` or, over HTTP, the `traceparent` header; the
recording is written as without export. Real upstream (the `mcp` SDK's server), real receiver
(`oteltap`), the official client."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import httpx2
import mcp
import trio
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from tests.processes import WT, read_until
from tests.record.upstreams import SDK_UPSTREAM, sdk_http_upstream, wt_record_stdio
from windtunnel.universe import load_universe

from .receiver import oteltap_receiver
from .test_export import attrs
from .test_trace_context import AGENT, HEADER, parent_of, traceparent

AGENT_SPAN = NonRecordingSpan(SpanContext(*AGENT, is_remote=False, trace_flags=TraceFlags(1)))


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}


async def test_wt_record_over_http_exports_each_recorded_call(tmp_path: Path) -> None:
    """Two calls: one under the agent's span (`_meta`), one with only a `traceparent` header;
    both recorded, both exported as live server spans under their parents, no log records
    (a recording has no divergences)."""
    out = tmp_path / "crm.universe.json"
    with oteltap_receiver() as received, trio.fail_after(90):
        async with sdk_http_upstream() as upstream:
            process = await trio.lowlevel.open_process(
                [*WT, "record", "-o", str(out), "--otel", received.endpoint, upstream],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=_clean_env(),
            )
            assert process.stdout is not None and process.stderr is not None
            url = (await read_until(process.stdout, b"\n")).decode().strip()
            async with mcp.Client(url) as client:
                with trace.use_span(AGENT_SPAN):
                    await client.call_tool("lookup", {"query": "acme"})
            http = httpx2.AsyncClient(headers={"traceparent": traceparent(HEADER)})
            async with (
                http,
                mcp.client.streamable_http.streamable_http_client(url, http_client=http) as streams,
                mcp.ClientSession(*streams[:2]) as session,
            ):
                await session.initialize()
                await session.call_tool("lookup", {"query": "globex"})
            process.send_signal(signal.SIGINT)
            stderr = b""
            while chunk := await process.stderr.receive_some():
                stderr += chunk
            assert await process.wait() == 0, stderr
        await trio.to_thread.run_sync(received.wait_for, lambda r: len(r.spans) == 2)
    recorded = load_universe(out).recordings
    assert [(r.tool_name, r.args) for r in recorded] == [
        ("lookup", {"query": "acme"}),
        ("lookup", {"query": "globex"}),
    ]
    first, second = sorted(received.spans, key=lambda s: s.start_time_unix_nano)
    assert parent_of(first) == AGENT and parent_of(second) == HEADER
    for span in (first, second):
        span_attrs = attrs(span.attributes)
        assert span.name == "tools/call lookup"
        assert span_attrs["mcp.method.name"] == "tools/call"
        assert span_attrs["gen_ai.operation.name"] == "execute_tool"
        assert span_attrs["windtunnel.tier"] == "live"
        assert span_attrs["windtunnel.upstream"] == span_attrs["mcp.server.name"]
        assert span_attrs["windtunnel.pack"] == "record"
        assert "windtunnel.divergence.reason" not in span_attrs
        assert "gen_ai.tool.call.arguments" not in span_attrs
    assert received.logs == []


async def test_wt_record_over_stdio_exports_under_the_agents_span(tmp_path: Path) -> None:
    """`wt record --stdio` (spawned by the official client): the call's `_meta` trace context
    parents its live span; capture on, its arguments are on the span (redacted as recorded)."""
    out = tmp_path / "crm.universe.json"
    with oteltap_receiver() as received, trio.fail_after(90):
        params = wt_record_stdio(
            tmp_path / "stderr.txt",
            "-o", str(out), "--otel", received.endpoint, "--otel-capture-content",
            "--redact", "regex:acme", "--", *SDK_UPSTREAM,
        )  # fmt: skip
        params.env = _clean_env()
        async with mcp.Client(params) as client:
            with trace.use_span(AGENT_SPAN):
                await client.call_tool("lookup", {"query": "acme"})
        await trio.to_thread.run_sync(received.wait_for, lambda r: len(r.spans) == 1)
    (span,) = received.spans
    assert parent_of(span) == AGENT
    span_attrs = attrs(span.attributes)
    assert span_attrs["windtunnel.tier"] == "live"
    assert "acme" not in span_attrs["gen_ai.tool.call.arguments"]
    assert "[REDACTED" in span_attrs["gen_ai.tool.call.arguments"]
    assert len(load_universe(out).recordings) == 1
