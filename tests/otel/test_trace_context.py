"""Where a replayed request's span sits: under the trace context the request carried, in
`_meta` (SEP-414) first, else in the HTTP `traceparent` header; over HTTP (the fast path and the
SDK's path) and stdio; for `tools/call` and the surface requests (`resources/read`,
`prompts/get`, `completion/complete`). Received by a real OTLP/HTTP receiver (`oteltap`)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import mcp
import pytest
import trio
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from tests.processes import WT, read_until
from tests.surface_world import COMPLETIONS, PROMPT_GETS, RESOURCE_READS, _ref, surface_doc

from .receiver import Received, oteltap_receiver
from .test_export import STDIO_SESSION, attrs

ROOT = Path(__file__).resolve().parents[2]
CRM = str(ROOT / "configs" / "demo" / "universes" / "crm.universe.json")

AGENT = (0x0AF7651916CD43DD8448EB211C80319C, 0xB7AD6B7169203331)
"""The agent's span named in `_meta` (trace id, span id)."""
HEADER = (0x4BF92F3577B34DA6A3CE929D0E0E4736, 0x00F067AA0BA902B7)
"""Another span, named by the HTTP `traceparent` header."""


def traceparent(ids: tuple[int, int]) -> str:
    return f"00-{ids[0]:032x}-{ids[1]:016x}-01"


def parent_of(span: object) -> tuple[int, int]:
    return (
        int.from_bytes(span.trace_id, "big"),  # type: ignore[attr-defined]
        int.from_bytes(span.parent_span_id, "big"),  # type: ignore[attr-defined]
    )


@asynccontextmanager
async def serving(universe: str, received: Received) -> AsyncIterator[str]:
    """`wt serve UNIVERSE --otel` until the block ends (then SIGTERM: its export is flushed)."""
    process = await trio.lowlevel.open_process(
        [*WT, "serve", "--otel", received.endpoint, universe],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={k: v for k, v in os.environ.items() if not k.startswith("OTEL_")},
    )
    try:
        assert process.stdout is not None
        yield (await read_until(process.stdout, b"\n")).decode().strip()
    finally:
        process.send_signal(signal.SIGTERM)
        with trio.CancelScope(shield=True):
            await process.wait()
    assert process.returncode == 0


def plain_call(query: str, meta: dict[str, str] | None = None) -> bytes:
    params: dict[str, object] = {"name": "client_lookup", "arguments": {"query": query}}
    if meta is not None:
        params["_meta"] = meta
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    ).encode()


async def test_http_header_parents_a_plain_call_and_meta_comes_first() -> None:
    """The fast path (a stateless POST): a call with only the header sits under the header's
    span; a call with both sits under `_meta`'s (SEP-414: `_meta` names the message, the header
    only the HTTP request); a call with neither is a trace of its own."""
    with oteltap_receiver() as received, trio.fail_after(60):
        async with serving(CRM, received) as url, httpx2.AsyncClient() as http:
            headers = {
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2025-06-18",
            }
            for body, extra in [
                (plain_call("Bluewing Logistics"), {"traceparent": traceparent(HEADER)}),
                (
                    plain_call("Bluewing Logistics", {"traceparent": traceparent(AGENT)}),
                    {"traceparent": traceparent(HEADER)},
                ),
                (plain_call("Bluewing Logistics"), {}),
            ]:
                response = await http.post(url, content=body, headers={**headers, **extra})
                assert response.status_code == 200, response.text
                assert "error" not in response.json()
        await trio.to_thread.run_sync(received.wait_for, lambda r: len(r.spans) == 3)
    header_only, both, neither = sorted(received.spans, key=lambda s: s.start_time_unix_nano)
    assert parent_of(header_only) == HEADER
    assert parent_of(both) == AGENT
    assert neither.parent_span_id == b""
    assert int.from_bytes(neither.trace_id, "big") not in (HEADER[0], AGENT[0])


async def test_http_header_parents_a_call_on_the_sdk_path() -> None:
    """The official client in a session (the SDK's path) with no current span, so no `_meta`
    trace context, and a `traceparent` header on its HTTP client: the call sits under the
    header's span."""
    with oteltap_receiver() as received, trio.fail_after(60):
        async with serving(CRM, received) as url:
            http = httpx2.AsyncClient(headers={"traceparent": traceparent(HEADER)})
            async with (
                http,
                mcp.client.streamable_http.streamable_http_client(url, http_client=http) as streams,
                mcp.ClientSession(*streams[:2]) as session,
            ):
                await session.initialize()
                result = await session.call_tool("client_lookup", {"query": "Bluewing Logistics"})
                assert not result.is_error
        await trio.to_thread.run_sync(received.wait_for, lambda r: len(r.spans) == 1)
    (span,) = received.spans
    assert parent_of(span) == HEADER
    assert span.name == "tools/call client_lookup"


async def test_stdio_meta_traceparent_parents_the_call() -> None:
    """`wt serve --stdio`: the `_meta.traceparent` of each call parents its span (told after the
    answer is written, from the writing thread), and a call without one is its own trace."""
    session = [dict(message) for message in STDIO_SESSION]
    session[2] = {
        **session[2],
        "params": {**session[2]["params"], "_meta": {"traceparent": traceparent(AGENT)}},
    }
    with oteltap_receiver() as received, trio.fail_after(90):
        await trio.run_process(
            [*WT, "serve", "--stdio", "--otel", received.endpoint, CRM],
            stdin="".join(json.dumps(m) + "\n" for m in session).encode(),
            capture_stdout=True,
            capture_stderr=True,
        )
        await trio.to_thread.run_sync(received.wait_for, lambda r: len(r.spans) == 2)
    by_tier = {attrs(s.attributes)["windtunnel.tier"]: s for s in received.spans}
    assert parent_of(by_tier["exact"]) == AGENT
    assert by_tier["miss"].parent_span_id == b""


@pytest.mark.timeout(120)
@pytest.mark.parametrize("stdio", [False, True], ids=["http", "stdio"])
async def test_surface_requests_are_spans_under_the_agents_span(
    tmp_path: Path, stdio: bool
) -> None:
    """`resources/read`, `prompts/get` and `completion/complete` are server spans named and
    attributed as the MCP conventions say, under the span the official client had current; a
    read off the recording is a divergence log record on its span."""
    universe = tmp_path / "world.universe.json"
    universe.write_text(json.dumps(surface_doc()))
    agent_span = NonRecordingSpan(SpanContext(*AGENT, is_remote=False, trace_flags=TraceFlags(1)))
    completion = COMPLETIONS[0]

    async def requests(client: mcp.Client) -> None:
        with trace.use_span(agent_span):
            await client.read_resource(RESOURCE_READS[0]["uri"])
            await client.get_prompt(PROMPT_GETS[0]["name"], PROMPT_GETS[0]["arguments"])
            await client.complete(_ref(completion["ref"]), completion["argument"])
            with pytest.raises(mcp.MCPError):
                await client.read_resource("test://nowhere")

    with oteltap_receiver() as received, trio.fail_after(100):
        if stdio:
            params = mcp.StdioServerParameters(
                command=WT[0],
                args=[*WT[1:], "serve", "--stdio", "--otel", received.endpoint, str(universe)],
            )
            async with mcp.Client(params) as client:
                await requests(client)
        else:
            async with serving(str(universe), received) as url, mcp.Client(url) as client:
                await requests(client)
        await trio.to_thread.run_sync(
            received.wait_for, lambda r: len(r.spans) == 4 and len(r.logs) == 1
        )
    spans = sorted(received.spans, key=lambda s: s.start_time_unix_nano)
    assert all(parent_of(s) == AGENT for s in spans)
    assert [s.name for s in spans] == [
        "resources/read",
        f"prompts/get {PROMPT_GETS[0]['name']}",
        "completion/complete",
        "resources/read",
    ]
    read, get, complete, missed = (attrs(s.attributes) for s in spans)
    assert (read["mcp.method.name"], read["mcp.resource.uri"]) == (
        "resources/read",
        RESOURCE_READS[0]["uri"],
    )
    assert (get["mcp.method.name"], get["gen_ai.prompt.name"]) == (
        "prompts/get",
        PROMPT_GETS[0]["name"],
    )
    assert complete["mcp.method.name"] == "completion/complete"
    assert "gen_ai.tool.name" not in read and "gen_ai.operation.name" not in get
    assert missed["windtunnel.tier"] == "miss"
    (divergence,) = received.logs
    assert divergence.span_id == spans[3].span_id
    assert attrs(divergence.attributes)["windtunnel.method"] == "resources/read"


@pytest.mark.timeout(120)
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
@pytest.mark.parametrize("stdio", [False, True], ids=["http", "stdio"])
async def test_requests_without_a_call_record_are_spans_too(stdio: bool) -> None:
    """`initialize`, `tools/list` and `ping` (answered by the SDK, logged nowhere) are server
    spans named after their method, under the span the official client had current."""
    agent_span = NonRecordingSpan(SpanContext(*AGENT, is_remote=False, trace_flags=TraceFlags(1)))
    with oteltap_receiver() as received, trio.fail_after(100):
        if stdio:
            params = mcp.StdioServerParameters(
                command=WT[0], args=[*WT[1:], "serve", "--stdio", "--otel", received.endpoint, CRM]
            )
            with trace.use_span(agent_span):
                async with mcp.Client(params, mode="legacy") as client:
                    await client.list_tools()
                    await client.send_ping()
        else:
            async with serving(CRM, received) as url:
                with trace.use_span(agent_span):
                    async with mcp.Client(url, mode="legacy") as client:
                        await client.list_tools()
                        await client.send_ping()
        await trio.to_thread.run_sync(
            received.wait_for,
            lambda r: {"initialize", "tools/list", "ping"} <= {s.name for s in r.requests},
        )
    by_name = {s.name: s for s in received.requests}
    for method in ("initialize", "tools/list", "ping"):
        span = by_name[method]
        span_attrs = attrs(span.attributes)
        assert parent_of(span) == AGENT
        assert span_attrs["mcp.method.name"] == method
        assert span_attrs["mcp.server.name"] == "crm"
        assert "error.type" not in span_attrs
    assert received.spans == []
