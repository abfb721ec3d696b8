"""Given arbitrary input, the sniffer and every adapter either import or raise `TraceError`; what
they import is always a valid envelope that emits a valid fixture and pack."""

from __future__ import annotations

import tomllib
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from samples import SAMPLES
from strategies import DOCUMENTS

from windtunnel.errors import TraceError
from windtunnel.importing import FORMATS, decode_envelope, encode_envelope, import_bytes
from windtunnel.importing.fixture import plan_fixtures
from windtunnel.importing.skeleton import render_pack
from windtunnel.mcp import RecordedMCPServer
from windtunnel.universe import decode_universe, encode_universe

# The words the adapters look for, so generated documents reach deep into every adapter.
WORDS = [
    "messages",
    "role",
    "user",
    "assistant",
    "tool",
    "system",
    "content",
    "type",
    "text",
    "tool_use",
    "tool_result",
    "mcp_tool_use",
    "mcp_tool_result",
    "id",
    "name",
    "input",
    "tool_use_id",
    "is_error",
    "server_name",
    "tools",
    "input_schema",
    "mcp_servers",
    "response",
    "choices",
    "message",
    "tool_calls",
    "function",
    "arguments",
    "tool_call_id",
    "object",
    "chat.completion",
    "output",
    "function_call",
    "function_call_output",
    "call_id",
    "mcp_call",
    "mcp_list_tools",
    "server_label",
    "error",
    "request",
    "jsonrpc",
    "2.0",
    "method",
    "tools/call",
    "tools/list",
    "params",
    "result",
    "isError",
    "structuredContent",
    "msg",
    "conn",
    "ts",
    "resourceSpans",
    "scopeSpans",
    "spans",
    "attributes",
    "key",
    "value",
    "stringValue",
    "intValue",
    "kvlistValue",
    "values",
    "gen_ai.tool.name",
    "gen_ai.operation.name",
    "execute_tool",
    "mcp.method.name",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "status",
    "code",
    "sessionId",
    "timestamp",
    "contract",
    "version",
    "1.0",
    "wind-tunnel/contract-a",
    '{"a":1}',
    '{"a":',
    "mcp__s__t",
    "Bash",
    "traceId",
    "spanId",
    "parentSpanId",
    "kind",
    "startTimeUnixNano",
    "notifications/cancelled",
    "requestId",
    "parts",
    "gen_ai.input.messages",
    "error.type",
    "tool_error",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(WORDS),
    st.text(max_size=8),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(WORDS), inner, max_size=6),
    ),
    max_leaves=40,
)
fuzz = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check_pipeline(data: bytes, forced: str | None) -> None:
    try:
        envelope = import_bytes(data, file="fuzz.json", format=forced)
    except TraceError:
        return
    encoded = encode_envelope(envelope)
    assert encode_envelope(decode_envelope(encoded)) == encoded
    for keep in (False, True):
        plan = plan_fixtures(envelope, keep_suspect=keep)
        servers = {
            name: RecordedMCPServer(decode_universe(encode_universe(universe)), name=name)
            for name, universe in plan.universes.items()
        }
        pack = tomllib.loads(render_pack(envelope, plan, name="fuzz"))
        for step in pack["scenario"][0].get("plan", []):
            servers[step["upstream"]].call_tool(step["tool"], step.get("args", {}))
        log = [call for server in servers.values() for call in server.call_log()]
        assert [call.divergence for call in log] == [None] * len(log)


@fuzz
@given(st.binary(max_size=200))
def test_arbitrary_bytes_raise_only_trace_errors(data: bytes) -> None:
    """Random bytes never escape as anything but a TraceError."""
    _check_pipeline(data, None)


@fuzz
@given(json_values, st.sampled_from([None, *FORMATS]))
def test_arbitrary_json_documents_raise_only_trace_errors(value: Any, forced: str | None) -> None:
    """Any JSON document, sniffed or forced to any format, imports or raises TraceError."""
    _check_pipeline(msgspec.json.encode(value), forced)


@fuzz
@given(st.lists(json_values, min_size=1, max_size=5), st.sampled_from([None, *FORMATS]))
def test_arbitrary_json_lines_raise_only_trace_errors(
    values: list[Any], forced: str | None
) -> None:
    """Any JSON-lines file, sniffed or forced to any format, imports or raises TraceError."""
    data = b"\n".join(msgspec.json.encode(v) for v in values) + b"\n"
    _check_pipeline(data, forced)


@fuzz
@given(st.data())
def test_plausible_traces_of_every_format_raise_only_trace_errors(data: st.DataObject) -> None:
    """Near-valid documents, sniffed and forced, import to valid output or raise TraceError."""
    fmt = data.draw(st.sampled_from(sorted(DOCUMENTS)))
    document = data.draw(DOCUMENTS[fmt])
    _check_pipeline(document, fmt)
    _check_pipeline(document, None)


def _mutate(value: Any, data: st.DataObject, depth: int = 0) -> Any:
    """Replace or delete one randomly chosen node of a JSON value with arbitrary JSON."""
    children: list[Any] = []
    if isinstance(value, dict):
        children = list(value)
    elif isinstance(value, list):
        children = list(range(len(value)))
    stop = not children or data.draw(st.integers(0, 4)) == 0
    if stop:
        return data.draw(json_values)
    choice = data.draw(st.sampled_from(children))
    if isinstance(value, dict) and data.draw(st.integers(0, 5)) == 0:
        return {k: v for k, v in value.items() if k != choice}
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[choice] = _mutate(value[choice], data, depth + 1)  # type: ignore[index]
    return copy


@fuzz
@given(st.data())
def test_mutated_sample_traces_raise_only_trace_errors(data: st.DataObject) -> None:
    """A sample trace with a few nodes replaced by arbitrary JSON imports or raises TraceError."""
    sample = data.draw(st.sampled_from(SAMPLES))
    raw = sample.path.read_bytes()
    lines = sample.path.suffix == ".jsonl"
    values: list[Any] = (
        [msgspec.json.decode(line) for line in raw.splitlines() if line.strip()]
        if lines
        else [msgspec.json.decode(raw)]
    )
    for _ in range(data.draw(st.integers(1, 3))):
        index = data.draw(st.integers(0, len(values) - 1))
        values[index] = _mutate(values[index], data)
    document = b"\n".join(msgspec.json.encode(v) for v in values) + b"\n"
    _check_pipeline(document, sample.format)
    _check_pipeline(document, None)
