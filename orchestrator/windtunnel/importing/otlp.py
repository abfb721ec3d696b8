"""Adapter: OTLP/JSON traces (OpenTelemetry GenAI + MCP conventions, and the tracers that predate
them) into Contract A.

Input: one `TracesData` JSON object (`{"resourceSpans": [...]}`) or JSON lines of them (the file
exporter), in OTLP/JSON or protobuf's stock JSON encoding (`otlp_spans`). A tool call is any span
`otlp_conventions` recognises (GenAI `execute_tool`, `mcp.method.name = tools/call`, OpenLLMetry
tool spans, logfire's MCP requests). One call often shows up as several spans (the framework's
`execute_tool`, the MCP client span, the MCP server span): spans sharing `gen_ai.tool.call.id`, or a
span below another call's span that names the same tool or none, are one call (flag
`deduplicated`). The arguments come from whichever span captured them; the result from the wire
view when a span has it, else the framework's; the upstream from the MCP server's own name, its
resource (`service.name`), else the client's `server.address`.

Rules for imperfect traces, each a warning with a JSON path: a span that cannot be read is skipped;
a tool span with no tool name anywhere in its call is skipped; arguments no span captured are
`args_missing` (never `{}`); a failure with no recorded text stays without a result (never made up
from `error.type`); values the tracer scrubbed are `args_redacted` / `result_redacted`. A file with
spans but no recognisable tool call is an error naming what it holds.

Written against the GenAI/MCP conventions as of semconv 1.41 and the genai repository (2026);
every `gen_ai.*` and `mcp.*` attribute is still "Development".
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import msgspec

from ..errors import TraceError
from .builder import TraceBuilder
from .document import Document
from .envelope import Call, CallResult, Identity, Outcome
from .normalize import (
    iso_from_nanos,
    missing_args,
    parse_args,
    parse_json_text,
    text_block,
    text_result,
    wire_result,
)
from .otlp_conventions import (
    ResultView,
    arguments,
    explicit_tool_name,
    is_tool_span,
    listed_tools,
    result_of,
    server_name,
    span_tool_name,
)
from .otlp_messages import (
    calls_from_messages,
    conversation,
    declare_definition,
    tool_definitions,
)
from .otlp_server_messages import read_server_messages
from .otlp_spans import CLIENT, ERROR, SERVER, Span, nearest_above, read_spans
from .otlp_surface import read_surface
from .scrubbing import scrubbed_paths, unscrub_schema
from .shape import opt_str

__all__ = ["FORMAT", "looks_like", "read"]

FORMAT = "otlp-json"
_JSONRPC_CODE = re.compile(r"-?\d{1,9}")
_SUPPORTED = (
    "GenAI execute_tool spans (pydantic-ai, fastmcp, the mcp SDK), mcp.method.name = tools/call, "
    "OpenLLMetry traceloop tool spans, logfire MCP request spans, or gen_ai.*.messages with "
    "tool_call parts"
)


def looks_like(doc: Document) -> bool:
    # One export per document or per line: the document (or first line) itself, never an array.
    value = doc.single
    return isinstance(value, dict) and "resourceSpans" in value


class _Group(msgspec.Struct):
    """The spans of one logical call, and the tool name they give."""

    spans: list[Span]
    name: str | None = None


def _group(tool_spans: list[Span], by_id: dict[str, Span]) -> list[_Group]:
    """Merge the spans of one logical call: the same call id, or a span below another call's
    span that names the same tool or none."""
    group_of: dict[str, int] = {}
    by_call: dict[str, int] = {}
    groups: list[_Group] = []
    for span in sorted(tool_spans, key=lambda s: (s.start, s.order)):
        name = explicit_tool_name(span) or span_tool_name(span)
        call_id = _call_id(span)
        index: int | None = None
        if call_id is not None and call_id in by_call:
            index = by_call[call_id]
        else:
            above = nearest_above(span, by_id, group_of)
            if above is not None and (name is None or groups[above].name in (None, name)):
                index = above
        if index is None:
            index = len(groups)
            groups.append(_Group(spans=[]))
        group = groups[index]
        group.spans.append(span)
        if group.name is None:
            group.name = name
        group_of[span.span_id] = index
        if call_id is not None:
            by_call.setdefault(call_id, index)
    return groups


def _call_id(span: Span) -> str | None:
    value = opt_str(span.attrs.get("gen_ai.tool.call.id"))
    return value.strip() if value and value.strip() else None


def _rank(span: Span) -> int:
    return {CLIENT: 0, SERVER: 1}.get(span.kind, 2)


def _endpoint(group: list[Span]) -> str | None:
    client = next((s for s in group if s.kind == CLIENT), None)
    if client is None or not isinstance(client.attrs.get("server.address"), str):
        return None
    endpoint: str = client.attrs["server.address"]
    if client.attrs.get("server.port") is not None:
        endpoint = f"{endpoint}:{client.attrs['server.port']}"
    return endpoint


def _own_identity(group: list[Span], listed_server: str | None) -> tuple[str, Identity] | None:
    """The identity the group's own spans give: the server's own name, its resource, else the
    address; a server named by the trace's `initialize` answer when the spans give none."""
    endpoint = _endpoint(group)
    stated = next((found for s in group if (found := server_name(s)) is not None), None)
    if stated is not None:
        return stated, Identity(source="server_name", server_name=stated, endpoint=endpoint)
    server = next((s for s in group if s.kind == SERVER), None)
    name = opt_str(server.resource.get("service.name")) if server is not None else None
    # The OTel SDK's default when nobody named the service: it names nothing.
    if server is not None and name is not None and not name.startswith("unknown_service"):
        version = opt_str(server.resource.get("service.version"))
        identity = Identity(
            source="otel_resource", server_name=name, server_version=version, endpoint=endpoint
        )
        return name, identity
    if endpoint is not None:
        return endpoint.split(":", 1)[0], Identity(source="otel_server_address", endpoint=endpoint)
    if listed_server is not None:
        return listed_server, Identity(source="server_info", server_name=listed_server)
    return None


def _upstreams(
    builder: TraceBuilder, groups: list[_Group], names: list[str], listed_server: str | None
) -> list[str]:
    """Resolve every group's upstream; groups that lack identity borrow it from their peers.

    A client span with only an address takes the name a server resource gave the same host; a
    call with no MCP span at all takes the upstream of other calls to the same tool.
    """
    own = [_own_identity(group.spans, listed_server) for group in groups]
    by_host: dict[str, tuple[str, Identity]] = {}
    for found in own:
        if found is not None and found[1].source != "otel_server_address" and found[1].endpoint:
            by_host.setdefault(found[1].endpoint.split(":", 1)[0], found)
    resolved: list[tuple[str, Identity] | None] = []
    for found in own:
        if found is not None and found[1].source == "otel_server_address":
            found = by_host.get(found[0], found)
        resolved.append(found)
    by_tool: dict[str, tuple[str, Identity]] = {}
    for name, found in zip(names, resolved, strict=True):
        if found is not None:
            by_tool.setdefault(name, found)
    upstreams = []
    for name, found in zip(names, resolved, strict=True):
        found = found or by_tool.get(name)
        if found is None:
            upstreams.append(builder.upstream("default"))
        else:
            upstreams.append(builder.upstream(found[0], identity=found[1]))
    return upstreams


def _choose_trace(builder: TraceBuilder, spans: list[Span]) -> list[Span]:
    """The earliest trace that holds a tool call (else the earliest trace)."""
    traces: dict[str, list[Span]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, []).append(span)
    with_tools = [t for t in traces if any(is_tool_span(s) for s in traces[t])] or list(traces)
    chosen = min(with_tools, key=lambda t: (min(s.start for s in traces[t]), t))
    if len(traces) > 1:
        builder.warn(
            "other_traces",
            f"the file holds {len(traces)} traces; imported {chosen or '(no id)'}, the earliest "
            "with a tool call",
        )
    builder.trace_id = chosen or None
    return traces[chosen]


def _nothing_found(doc: Document, spans: list[Span]) -> TraceError:
    names = Counter(s.name or "(unnamed)" for s in spans)
    scopes = sorted({s.scope for s in spans if s.scope})
    listing = ", ".join(f"{name!r} x{count}" for name, count in names.most_common(8))
    more = f" and {len(names) - 8} more" if len(names) > 8 else ""
    return TraceError(
        f"{len(spans)} span(s) but no recognisable tool call: span names {listing}{more}; "
        f"scopes {', '.join(map(repr, scopes)) or 'none'}. Supported: {_SUPPORTED}",
        file=doc.file,
    )


def _listed(builder: TraceBuilder, spans: list[Span]) -> str | None:
    """Declare the tools a captured `tools/list` answer names; the one server an `initialize`
    answer names (None when there are several or none)."""
    servers: list[str] = []
    tools: list[dict[str, Any]] = []
    for span in sorted(spans, key=lambda s: (s.start, s.order)):
        found = listed_tools(span)
        if found is None:
            continue
        name, listed = found
        if name is not None and name not in servers:
            servers.append(name)
        tools.extend(listed)
    server = servers[0] if len(servers) == 1 else None
    if not tools or len(servers) > 1:
        return server
    upstream = builder.upstream(server or "default", identity=_listed_identity(server))
    declared: set[str] = set()
    for tool in tools:
        if tool["name"] in declared:
            continue  # the client's and the server's span list the same tools
        declared.add(tool["name"])
        schema = tool.get("inputSchema")
        if isinstance(schema, dict):
            schema, redacted = unscrub_schema(schema)
            if redacted:
                builder.warn(
                    "schema_redacted",
                    f"{upstream}.{tool['name']}: the tracer scrubbed parts of the input schema; "
                    "those properties accept any value",
                )
        builder.declare_tool(
            upstream,
            tool["name"],
            input_schema=schema,
            schema_source="tools/list",
            description=tool.get("description"),
            output_schema=tool.get("outputSchema"),
            annotations=tool.get("annotations"),
            listed=tool,
        )
    return server


def _listed_identity(server: str | None) -> Identity | None:
    return Identity(source="server_info", server_name=server) if server is not None else None


def read(doc: Document, builder: TraceBuilder) -> None:
    all_spans, skipped = read_spans(doc)
    if not all_spans:
        if skipped:
            doc.fail(f"no readable span; {skipped[0].message}", skipped[0].path)
        doc.fail("the file holds no spans")
    for problem in skipped:
        builder.warn("span_unreadable", f"span skipped: {problem.message}", problem.path)
    spans = _choose_trace(builder, all_spans)
    builder.started_at = iso_from_nanos(min(s.start for s in spans))
    builder.ended_at = iso_from_nanos(max(s.end for s in spans))
    conversation(builder, spans)
    definitions = tool_definitions(spans)
    listed_server = _listed(builder, spans)
    by_id = {s.span_id: s for s in spans if s.span_id}
    groups = _group([s for s in spans if is_tool_span(s)], by_id)
    if not groups:
        calls_from_messages(builder, spans, definitions)
        # A trace of resources, prompts or completions alone is still a world to replay.
        if not read_surface(builder, spans) and not builder.calls:
            raise _nothing_found(doc, spans)
        read_server_messages(builder, spans, {})
        return
    named: list[_Group] = []
    for group in groups:
        if group.name is None:
            builder.warn(
                "tool_name_missing",
                f"a tool span ({group.spans[0].name!r}) names no tool, nor does any span of "
                "its call; skipped",
                group.spans[0].where,
            )
        else:
            named.append(group)
    if not named:
        raise _nothing_found(doc, spans)
    names = [group.name or "" for group in named]
    upstreams = _upstreams(builder, named, names, listed_server)
    call_of: dict[str, Call] = {}
    for group, name, upstream in zip(named, names, upstreams, strict=True):
        call = _call(builder, group.spans, name, upstream, definitions.get(name))
        call_of.update((span.span_id, call) for span in group.spans if span.span_id)
    read_surface(builder, spans)
    read_server_messages(builder, spans, call_of)


def _args(group: list[Span]) -> tuple[Any, Span | None]:
    """The captured arguments and the span that holds them (client spans first)."""
    for span in sorted(group, key=lambda s: (_rank(s), s.order)):
        captured, value = arguments(span)
        if captured:
            return value, span
    return None, None


def _best_result(group: list[Span]) -> ResultView | None:
    """The whole wire view when a span has it, else what a span has (client spans first)."""
    found = [
        view
        for span in sorted(group, key=lambda s: (_rank(s), s.order))
        if (view := result_of(span)) is not None
    ]
    best = [view for view in found if view.view == "wire" and not view.partial] or found
    return best[0] if best else None


def _duration_ms(start: int, end: int) -> float | None:
    """The span's nanoseconds as milliseconds to the microsecond (integers: no float rounding
    of a Unix time in nanoseconds); None for a span that ends before it starts."""
    return None if end < start else round((end - start) // 1000 / 1000.0, 3)


def _call(
    builder: TraceBuilder,
    group: list[Span],
    name: str,
    upstream: str,
    definition: dict[str, Any] | None,
) -> Call:
    declare_definition(builder, upstream, name, definition)
    first = min(group, key=lambda s: (s.start, s.order))
    raw_args, args_span = _args(group)
    provenance: dict[str, Any] = {"span_id": (args_span or first).span_id}
    if len(group) > 1:
        provenance["merged_from"] = [s.span_id for s in group]
    ranked = sorted(group, key=lambda s: (_rank(s), s.order))
    call = builder.call(
        upstream,
        name,
        parse_args(raw_args) if args_span is not None else missing_args(),
        call_id=next((c for s in ranked if (c := _call_id(s)) is not None), None)
        or opt_str(first.attrs.get("jsonrpc.request.id")),
        started_at=iso_from_nanos(first.start),
        ended_at=iso_from_nanos(max(s.end for s in group)),
        timing="exact",
        duration_ms=_duration_ms(first.start, max(s.end for s in group)),
        provenance=provenance,
    )
    if len(group) > 1:
        call.flags.append("deduplicated")
    if call.args is not None and scrubbed_paths(call.args, "$"):
        call.flags.append("args_redacted")
    failed = next((s for s in ranked if s.status_code == ERROR), None)
    found = _best_result(group)
    if found is not None:
        result, is_error, flags = _result(found)
        # A failed span that also recorded a result is a tool error: the result is its text.
        is_error = is_error or (failed is not None and _error_type(failed) in ("", "tool_error"))
        if scrubbed_paths(msgspec.to_builtins(result), "$"):
            flags.append("result_redacted")
        builder.set_result(call, result, is_error=is_error, flags=flags)
    elif failed is not None:
        _failure(builder, call, failed, ranked)
    return call


def _error_type(span: Span) -> str:
    return opt_str(span.attrs.get("error.type")) or ""


def _result(found: ResultView) -> tuple[CallResult, bool, list[str]]:
    value = found.value
    flags = ["result_partial"] if found.partial else []
    decoded = value
    if isinstance(value, str):
        ok, parsed = parse_json_text(value)
        decoded = parsed if ok else value
    wire = wire_result(decoded)
    if wire is not None:
        result, is_error = wire
        result.view = found.view
        return result, is_error or found.is_error, flags
    text = value if isinstance(value, str) else msgspec.json.encode(value).decode()
    result, text_flags = text_result(text, view=found.view)
    if found.view == "model" and isinstance(decoded, dict):
        # A framework that shows the model an object took it from `structuredContent`: served
        # the same way, the rerun agent's framework shows its model the same object.
        result.structured = decoded
    return result, found.is_error, flags + text_flags


def _failure(builder: TraceBuilder, call: Call, span: Span, ranked: list[Span]) -> None:
    """A failed call with no recorded result: the error text some span recorded, never one made
    up from `error.type`."""
    error_type = _error_type(span)
    status = span.attrs.get("rpc.response.status_code")
    message = next((m for s in ranked if (m := s.status_message or s.exception_message)), None)
    if error_type == "tool_error":
        if message is None:
            builder.set_error(
                call,
                "unknown",
                "the call failed as a tool error (error.type = tool_error); the trace holds no "
                "error text",
            )
            return
        result = CallResult(
            content=[text_block(message)], view="wire" if _is_mcp(span) else "model"
        )
        builder.set_result(call, result, is_error=True, flags=["result_from_error_text"])
        return
    code_text = error_type if _JSONRPC_CODE.fullmatch(error_type) else opt_str(status)
    outcome: Outcome
    if error_type == "timeout":
        outcome = "timeout"
    elif code_text is not None and _JSONRPC_CODE.fullmatch(code_text):
        outcome = "protocol_error"
    else:
        outcome = "transport_error"
    code: int | str | None = error_type or None
    if code_text is not None and _JSONRPC_CODE.fullmatch(code_text):
        code = int(code_text)
    builder.set_error(call, outcome, message or error_type or "the span failed", code=code)


def _is_mcp(span: Span) -> bool:
    return "mcp.method.name" in span.attrs
