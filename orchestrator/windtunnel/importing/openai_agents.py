"""Adapter: openai-agents' own traces (its tracing, not OpenTelemetry) into Contract A.

Input: what a `TracingProcessor` sees, each item's `export()`: JSON lines of `{"object": "trace"}`
and `{"object": "trace.span"}` records, a JSON array of them, or the exporter's batch
`{"data": [...]}`. A call is a `function` span (`span_data.name`, `.input` the arguments as JSON
text, `.output` the result as the SDK rendered it for the model); `mcp_data.server` names its MCP
server. The SDK renders an MCP result with Python's `str()` (a dict's repr for one content block,
a list's for several), which is read back as data; it drops `isError`, so a tool error the server
signalled looks like an ordinary result here. Results are the model's view.
"""

from __future__ import annotations

import ast
from typing import Any

from .builder import TraceBuilder
from .document import Document
from .envelope import CallResult, Identity
from .normalize import (
    elapsed_ms,
    iso_from_text,
    parse_args,
    parse_json_text,
    seconds_of,
    text_block,
    text_result,
)
from .shape import as_obj, opt_str
from .sniffing import first_record

__all__ = ["FORMAT", "looks_like", "read"]

FORMAT = "openai-agents"
_OBJECTS = ("trace", "trace.span")


def _items(doc: Document) -> list[tuple[str, Any]]:
    """`(JSON path, record)` for every exported trace or span."""
    if doc.jsonl:
        return [(f"line {line}: $", value) for line, value in doc.records]
    value = doc.single
    if isinstance(value, dict) and isinstance(value.get("data"), list):
        return [(f"$.data[{i}]", item) for i, item in enumerate(value["data"])]
    if isinstance(value, list):
        return [(f"$[{i}]", item) for i, item in enumerate(value)]
    return [("$", value)]


def looks_like(doc: Document) -> bool:
    record = first_record(doc)
    if isinstance(record, dict) and isinstance(record.get("data"), list) and record["data"]:
        record = record["data"][0]
    return isinstance(record, dict) and record.get("object") in _OBJECTS


def _rendered(text: str) -> Any:
    """The SDK's `str()` of a result back as data: JSON, a Python literal, else the text."""
    ok, value = parse_json_text(text)
    if ok:
        return value
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


def _is_block(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("type"), str)


def _result(output: Any) -> tuple[CallResult, list[str]]:
    if not isinstance(output, str):
        return CallResult(content=[], view="model"), []
    value = _rendered(output)
    if _is_block(value):
        return CallResult(content=[value], view="model"), []
    if isinstance(value, list) and value and all(_is_block(block) for block in value):
        return CallResult(content=value, view="model"), []
    return text_result(output)


def _names_failure(result: CallResult, tool: str) -> bool:
    """Whether the result is the `mcp` SDK's answer to a tool that raised: its one text block reads
    `Error executing tool <tool>` (then `: <detail>`, or nothing when the SDK hid a crash)."""
    texts = [block.get("text") for block in result.content if block.get("type") == "text"]
    if len(texts) != 1 or not isinstance(texts[0], str):
        return False
    prefix = f"Error executing tool {tool}"
    return texts[0] == prefix or texts[0].startswith(prefix + ":")


def read(doc: Document, builder: TraceBuilder) -> None:
    spans: list[tuple[str, dict[str, Any]]] = []
    for where, item in _items(doc):
        record = as_obj(doc, item, where)
        if record.get("object") == "trace" and builder.trace_id is None:
            builder.trace_id = opt_str(record.get("id"))
        elif record.get("object") == "trace.span":
            spans.append((where, record))
    if builder.trace_id is not None:
        spans = [(w, s) for w, s in spans if s.get("trace_id") == builder.trace_id]
    spans.sort(key=lambda item: opt_str(item[1].get("started_at")) or "")
    times = [
        t for _, s in spans for key in ("started_at", "ended_at") if (t := opt_str(s.get(key)))
    ]
    if times:
        builder.started_at = iso_from_text(min(times))
        builder.ended_at = iso_from_text(max(times))
    functions = [
        (w, s)
        for w, s in spans
        if isinstance(s.get("span_data"), dict) and s["span_data"].get("type") == "function"
    ]
    if not functions:
        kinds = sorted(
            {
                str(s["span_data"].get("type"))
                for _, s in spans
                if isinstance(s.get("span_data"), dict)
            }
        )
        doc.fail(
            f"{len(spans)} span(s) but no function span (a tool call); span types: "
            f"{', '.join(kinds) or 'none'}"
        )
    for where, span in functions:
        _call(doc, builder, where, span)


def _call(doc: Document, builder: TraceBuilder, where: str, span: dict[str, Any]) -> None:
    data: dict[str, Any] = span["span_data"]
    name = opt_str(data.get("name"))
    if not name:
        builder.warn("tool_name_missing", "a function span names no tool; skipped", where)
        return
    mcp = data.get("mcp_data")
    server = opt_str(mcp.get("server")) if isinstance(mcp, dict) else None
    if server is not None:
        upstream = builder.upstream(
            server, identity=Identity(source="server_name", server_name=server)
        )
    else:
        upstream = builder.upstream("default")
    call = builder.call(
        upstream,
        name,
        parse_args(data.get("input")),
        started_at=iso_from_text(opt_str(span.get("started_at")) or ""),
        ended_at=iso_from_text(opt_str(span.get("ended_at")) or ""),
        timing="exact",
        duration_ms=elapsed_ms(
            seconds_of(span.get("started_at")), seconds_of(span.get("ended_at"))
        ),
        provenance={"span_id": opt_str(span.get("id")) or ""},
    )
    error = span.get("error")
    if isinstance(error, dict) and data.get("output") is None:
        detail = error.get("data")
        text = opt_str(detail.get("error")) if isinstance(detail, dict) else None
        text = text or opt_str(error.get("message"))
        if text is None:
            builder.set_error(call, "unknown", "the span failed and holds no error text")
            return
        result = CallResult(content=[text_block(text)], view="model")
        builder.set_result(call, result, is_error=True, flags=["result_from_error_text"])
        return
    if data.get("output") is None:
        return  # no result in the trace: the call stays `unknown`
    result, flags = _result(data["output"])
    if _names_failure(result, name):
        # The SDK drops `isError`; the server's own failure text is the only sign left.
        builder.set_result(call, result, is_error=True, flags=[*flags, "error_from_result_text"])
        return
    builder.set_result(call, result, flags=flags)
