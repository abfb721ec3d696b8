"""Adapter: OTLP/JSON traces (OpenTelemetry GenAI + MCP semantic conventions) into Contract A.

Input: one `TracesData` JSON object (`{"resourceSpans": [...]}`) or JSON lines of them (the file
exporter). A tool call is a span with `gen_ai.operation.name = execute_tool` or
`mcp.method.name = tools/call`. One call often shows up as several spans (the framework's
`execute_tool`, the MCP client span, the MCP server span): spans sharing `gen_ai.tool.call.id`, or
a child repeating its parent's tool, are merged into one call (flag `deduplicated`), taking the
arguments and result from the MCP client span when it has them and the upstream's identity from
the MCP server span's resource (`service.name`), else the client's `server.address`.

Written against the GenAI/MCP conventions as of semconv 1.41 and the genai repository (2026);
every `gen_ai.*` and `mcp.*` attribute is still "Development".
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

import msgspec

from .builder import TraceBuilder
from .document import Document
from .envelope import Call, CallResult, Identity, Outcome
from .normalize import (
    iso_from_nanos,
    parse_args,
    parse_json_text,
    text_block,
    text_result,
    wire_result,
)
from .shape import as_list, as_obj, opt_str

__all__ = ["FORMAT", "looks_like", "read"]

FORMAT = "otlp-json"
_SERVER, _CLIENT = 2, 3
_JSONRPC_CODE = re.compile(r"-?\d{1,9}")
_INT = re.compile(r"-?\d{1,18}")


class _Span(msgspec.Struct):
    where: str
    order: int
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    kind: int
    start: int
    end: int
    attrs: dict[str, Any]
    resource: dict[str, Any]
    status_code: int
    status_message: str | None
    exception_message: str | None

    @property
    def is_tool(self) -> bool:
        return (
            self.attrs.get("gen_ai.operation.name") == "execute_tool"
            or self.attrs.get("mcp.method.name") == "tools/call"
        )

    @property
    def tool_name(self) -> str | None:
        return opt_str(self.attrs.get("gen_ai.tool.name"))

    @property
    def call_id(self) -> str | None:
        value = opt_str(self.attrs.get("gen_ai.tool.call.id"))
        return value.strip() if value and value.strip() else None

    @property
    def is_mcp(self) -> bool:
        return "mcp.method.name" in self.attrs


def looks_like(doc: Document) -> bool:
    # One export per document or per line: the document (or first line) itself, never an array.
    value = doc.single
    return isinstance(value, dict) and "resourceSpans" in value


def _any_value(value: Any) -> Any:
    """An OTLP `AnyValue` as plain JSON data."""
    if not isinstance(value, dict):
        return None
    if "stringValue" in value:
        return value["stringValue"] if isinstance(value["stringValue"], str) else None
    if "boolValue" in value:
        return value["boolValue"] if isinstance(value["boolValue"], bool) else None
    if "intValue" in value:
        number = value["intValue"]
        if isinstance(number, int) and not isinstance(number, bool):
            return number if -(2**63) <= number < 2**63 else None
        return int(number) if isinstance(number, str) and _INT.fullmatch(number) else None
    if "doubleValue" in value:
        number = value["doubleValue"]
        return number if isinstance(number, int | float) and not isinstance(number, bool) else None
    if "arrayValue" in value:
        inner = value["arrayValue"]
        items = inner.get("values") if isinstance(inner, dict) else None
        return [_any_value(v) for v in items] if isinstance(items, list) else []
    if "kvlistValue" in value:
        inner = value["kvlistValue"]
        items = inner.get("values") if isinstance(inner, dict) else None
        return _kv_list(items) if isinstance(items, list) else {}
    if "bytesValue" in value:
        return value["bytesValue"] if isinstance(value["bytesValue"], str) else None
    return None


def _kv_list(items: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            out[item["key"]] = _any_value(item.get("value"))
    return out


def _attributes(doc: Document, value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    return _kv_list(as_list(doc, value, where))


def _hex_id(value: Any, size: int) -> str:
    """A trace/span id as lower-case hex; base64 ids (stock protobuf JSON) are converted."""
    if not isinstance(value, str):
        return ""
    if re.fullmatch(r"[0-9a-fA-F]+", value):
        return value.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return value
    return raw.hex() if len(raw) == size else value


def _nanos(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isdigit() and len(value) <= 20:
        return int(value)
    return 0


def _spans(doc: Document) -> list[_Span]:
    spans: list[_Span] = []
    for line, record in doc.records:
        base = f"line {line}: " if doc.jsonl else ""
        data = as_obj(doc, record, f"{base}$")
        resource_spans = as_list(doc, data.get("resourceSpans"), f"{base}$.resourceSpans")
        for i, rs in enumerate(resource_spans):
            at = f"{base}$.resourceSpans[{i}]"
            rs = as_obj(doc, rs, at)
            resource = rs.get("resource") or {}
            resource = as_obj(doc, resource, f"{at}.resource")
            resource_attrs = _attributes(doc, resource.get("attributes"), f"{at}.resource")
            key = "scopeSpans" if "scopeSpans" in rs else "instrumentationLibrarySpans"
            for j, scope in enumerate(as_list(doc, rs.get(key, []), f"{at}.{key}")):
                scope = as_obj(doc, scope, f"{at}.{key}[{j}]")
                span_list = as_list(doc, scope.get("spans", []), f"{at}.{key}[{j}].spans")
                for k, span in enumerate(span_list):
                    where = f"{at}.{key}[{j}].spans[{k}]"
                    spans.append(_span(doc, span, where, len(spans), resource_attrs))
    return spans


def _span(doc: Document, value: Any, where: str, order: int, resource: dict[str, Any]) -> _Span:
    span = as_obj(doc, value, where)
    status: dict[str, Any] = span["status"] if isinstance(span.get("status"), dict) else {}
    exception = None
    events = span.get("events")
    for event in events if isinstance(events, list) else []:
        if isinstance(event, dict) and event.get("name") == "exception":
            attrs = _attributes(doc, event.get("attributes"), f"{where}.events")
            exception = opt_str(attrs.get("exception.message"))
    kind = span.get("kind")
    code = status.get("code")
    return _Span(
        where=where,
        order=order,
        trace_id=_hex_id(span.get("traceId"), 16),
        span_id=_hex_id(span.get("spanId"), 8),
        parent_id=_hex_id(span.get("parentSpanId"), 8),
        name=opt_str(span.get("name")) or "",
        kind=kind if isinstance(kind, int) and not isinstance(kind, bool) else 0,
        start=_nanos(span.get("startTimeUnixNano")),
        end=_nanos(span.get("endTimeUnixNano")),
        attrs=_attributes(doc, span.get("attributes"), f"{where}.attributes"),
        resource=resource,
        status_code=code if isinstance(code, int) and not isinstance(code, bool) else 0,
        status_message=opt_str(status.get("message")),
        exception_message=exception,
    )


def _group(tool_spans: list[_Span]) -> list[list[_Span]]:
    """Merge the spans of one logical call: same call id, or a child repeating its parent's tool."""
    by_span: dict[str, int] = {}
    by_call: dict[str, int] = {}
    groups: list[list[_Span]] = []
    for span in sorted(tool_spans, key=lambda s: (s.start, s.order)):
        index: int | None = None
        if span.call_id is not None and span.call_id in by_call:
            index = by_call[span.call_id]
        elif span.parent_id in by_span and groups[by_span[span.parent_id]][0].tool_name == (
            span.tool_name
        ):
            index = by_span[span.parent_id]
        if index is None:
            index = len(groups)
            groups.append([])
        groups[index].append(span)
        by_span[span.span_id] = index
        if span.call_id is not None:
            by_call.setdefault(span.call_id, index)
    return groups


def _rank(span: _Span) -> int:
    return {_CLIENT: 0, _SERVER: 1}.get(span.kind, 2)


def _messages(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, str):
        ok, value = parse_json_text(value)
        if not ok:
            return []
    return [m for m in value if isinstance(m, dict)] if isinstance(value, list) else []


def _text_parts(message: dict[str, Any]) -> tuple[str | None, bool]:
    parts = message.get("parts")
    if not isinstance(parts, list):
        return None, False
    texts = [
        p["content"]
        for p in parts
        if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("content"), str)
    ]
    calls = any(isinstance(p, dict) and p.get("type") == "tool_call" for p in parts)
    return ("\n".join(texts) if texts else None), calls


def _conversation(builder: TraceBuilder, spans: list[_Span]) -> None:
    for span in sorted(spans, key=lambda s: (s.start, s.order)):
        for message in _messages(span.attrs.get("gen_ai.input.messages")):
            text, _ = _text_parts(message)
            if message.get("role") == "user" and text and not builder.prompt:
                builder.prompt = text
        if builder.system is None:
            instructions = _messages(span.attrs.get("gen_ai.system_instructions"))
            texts = [p["content"] for p in instructions if isinstance(p.get("content"), str)]
            builder.system = "\n".join(texts) if texts else None
    for span in sorted(spans, key=lambda s: (s.end, s.order)):
        for message in _messages(span.attrs.get("gen_ai.output.messages")):
            text, calls = _text_parts(message)
            if message.get("role") == "assistant" and text and not calls:
                builder.final_answer = text


def _definitions(spans: list[_Span]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for span in sorted(spans, key=lambda s: (s.start, s.order)):
        for definition in _messages(span.attrs.get("gen_ai.tool.definitions")):
            name = definition.get("name")
            if isinstance(name, str) and name and name not in found:
                found[name] = definition
    return found


def _endpoint(group: list[_Span]) -> str | None:
    client = next((s for s in group if s.kind == _CLIENT), None)
    if client is None or not isinstance(client.attrs.get("server.address"), str):
        return None
    endpoint: str = client.attrs["server.address"]
    if client.attrs.get("server.port") is not None:
        endpoint = f"{endpoint}:{client.attrs['server.port']}"
    return endpoint


def _own_identity(group: list[_Span]) -> tuple[str, Identity] | None:
    """The identity the group's own spans give: the server's resource, else the address."""
    endpoint = _endpoint(group)
    server = next((s for s in group if s.kind == _SERVER), None)
    if server is not None and isinstance(server.resource.get("service.name"), str):
        name: str = server.resource["service.name"]
        version = opt_str(server.resource.get("service.version"))
        identity = Identity(
            source="otel_resource", server_name=name, server_version=version, endpoint=endpoint
        )
        return name, identity
    if endpoint is not None:
        return endpoint.split(":", 1)[0], Identity(source="otel_server_address", endpoint=endpoint)
    return None


def _upstreams(builder: TraceBuilder, groups: list[list[_Span]], names: list[str]) -> list[str]:
    """Resolve every group's upstream; groups that lack identity borrow it from their peers.

    A client span with only an address takes the name a server resource gave the same host; a
    call with no MCP span at all takes the upstream of other calls to the same tool.
    """
    own = [_own_identity(group) for group in groups]
    by_host: dict[str, tuple[str, Identity]] = {}
    for found in own:
        if found is not None and found[1].source == "otel_resource" and found[1].endpoint:
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


def read(doc: Document, builder: TraceBuilder) -> None:
    spans = _spans(doc)
    traces: dict[str, list[_Span]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, []).append(span)
    if not traces:
        doc.fail("the file holds no spans")
    chosen = min(traces, key=lambda t: (min(s.start for s in traces[t]), t))
    if len(traces) > 1:
        builder.warn(
            "other_traces",
            f"the file holds {len(traces)} traces; imported {chosen or '(no id)'}, the earliest",
        )
    spans = traces[chosen]
    builder.trace_id = chosen or None
    builder.started_at = iso_from_nanos(min(s.start for s in spans))
    builder.ended_at = iso_from_nanos(max(s.end for s in spans))
    _conversation(builder, spans)
    definitions = _definitions(spans)
    groups = _group([s for s in spans if s.is_tool])
    if not groups:
        _calls_from_messages(builder, spans, definitions)
        return
    names: list[str] = []
    for group in groups:
        name = next((s.tool_name for s in group if s.tool_name), None)
        if name is None:
            doc.fail("a tool span without gen_ai.tool.name", group[0].where)
        names.append(name)
    upstreams = _upstreams(builder, groups, names)
    for group, name, upstream in zip(groups, names, upstreams, strict=True):
        _call(builder, group, name, upstream, definitions.get(name))


def _calls_from_messages(
    builder: TraceBuilder, spans: list[_Span], definitions: dict[str, dict[str, Any]]
) -> None:
    """No tool spans: recover calls from the chat messages (`tool_call` / `tool_call_response`).

    Each chat span repeats the conversation so far, so parts are counted once per id. Results are
    what the model was shown, and the messages do not say which server a tool belongs to.
    """
    calls: dict[str, Call] = {}
    for span in sorted(spans, key=lambda s: (s.start, s.order)):
        for key in ("gen_ai.input.messages", "gen_ai.output.messages"):
            for message in _messages(span.attrs.get(key)):
                parts = message.get("parts")
                for part in parts if isinstance(parts, list) else []:
                    if isinstance(part, dict):
                        _message_part(builder, part, span, calls, definitions)


def _message_part(
    builder: TraceBuilder,
    part: dict[str, Any],
    span: _Span,
    calls: dict[str, Call],
    definitions: dict[str, dict[str, Any]],
) -> None:
    call_id = opt_str(part.get("id"))
    call_id = call_id.strip() if call_id else None
    if part.get("type") == "tool_call" and call_id and call_id not in calls:
        name = opt_str(part.get("name"))
        if not name:
            return
        upstream = builder.upstream("default")
        definition = definitions.get(name)
        if definition is not None and isinstance(definition.get("parameters"), dict):
            builder.declare_tool(
                upstream,
                name,
                input_schema=definition["parameters"],
                schema_source="otel_tool_definitions",
                description=definition.get("description"),
            )
        calls[call_id] = builder.call(
            upstream,
            name,
            parse_args(part.get("arguments")),
            call_id=call_id,
            provenance={"span_id": span.span_id, "from": "messages"},
        )
    elif part.get("type") == "tool_call_response" and call_id in calls:
        call = calls[call_id]
        if call.outcome != "unknown":
            return
        # The spec's schema says `response`; its own example table says `result`.
        value = part.get("response", part.get("result"))
        text = value if isinstance(value, str) else msgspec.json.encode(value).decode()
        result, flags = text_result(text)
        builder.set_result(call, result, flags=flags)


def _call(
    builder: TraceBuilder,
    group: list[_Span],
    name: str,
    upstream: str,
    definition: dict[str, Any] | None,
) -> None:
    ranked = sorted(group, key=lambda s: (_rank(s), s.order))
    if definition is not None and isinstance(definition.get("parameters"), dict):
        builder.declare_tool(
            upstream,
            name,
            input_schema=definition["parameters"],
            schema_source="otel_tool_definitions",
            description=definition.get("description"),
        )
    with_args = next((s for s in ranked if "gen_ai.tool.call.arguments" in s.attrs), ranked[0])
    first = min(group, key=lambda s: (s.start, s.order))
    provenance: dict[str, Any] = {"span_id": with_args.span_id}
    if len(group) > 1:
        provenance["merged_from"] = [s.span_id for s in group]
    call = builder.call(
        upstream,
        name,
        parse_args(with_args.attrs.get("gen_ai.tool.call.arguments")),
        call_id=next((s.call_id for s in ranked if s.call_id), None)
        or opt_str(first.attrs.get("jsonrpc.request.id")),
        started_at=iso_from_nanos(first.start),
        ended_at=iso_from_nanos(max(s.end for s in group)),
        timing="exact",
        provenance=provenance,
    )
    if len(group) > 1:
        call.flags.append("deduplicated")
    failed = next((s for s in ranked if s.status_code == 2), None)
    with_result = next((s for s in ranked if "gen_ai.tool.call.result" in s.attrs), None)
    if failed is not None:
        _failure(builder, call, failed)
    elif with_result is not None:
        value = with_result.attrs["gen_ai.tool.call.result"]
        view = "wire" if with_result.is_mcp else "model"
        result, is_error, flags = _result(value, view)
        builder.set_result(call, result, is_error=is_error, flags=flags)


def _result(value: Any, view: str) -> tuple[CallResult, bool, list[str]]:
    decoded = value
    if isinstance(value, str):
        ok, parsed = parse_json_text(value)
        decoded = parsed if ok else value
    wire = wire_result(decoded)
    if wire is not None:
        result, is_error = wire
        if view == "model":
            result.view = "model"
        return result, is_error, []
    text = value if isinstance(value, str) else msgspec.json.encode(value).decode()
    result, flags = text_result(text, view=view)
    return result, False, flags


def _failure(builder: TraceBuilder, call: Any, span: _Span) -> None:
    error_type = opt_str(span.attrs.get("error.type")) or ""
    status = span.attrs.get("rpc.response.status_code")
    message = span.status_message or span.exception_message or error_type or "the span failed"
    if error_type == "tool_error":
        result = CallResult(content=[text_block(message)], view="wire" if span.is_mcp else "model")
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
    builder.set_error(call, outcome, message, code=code)
