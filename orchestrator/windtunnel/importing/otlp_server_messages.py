"""What OTLP spans show of the messages a server sent while answering a tool call (issue 25).

The OTel MCP conventions have the side that initiates a request or notification report it, the
server included: a request the server sends (`sampling/createMessage`, `elicitation/create`,
`roots/list`) is a span naming its method (`mcp.method.name`; logfire's `MCP request: <method>` on
`mcp` 1.x, `rpc.method`) started inside the server's handling of the call, so it is a descendant
of the call's span, in the same trace (the receiving client's span of it is a child of it, and is
the same message). logfire also writes one log record per log message the client received
(`MCP server log`, with `data`, `logger` and `logfire.level_num`), whose parent is the server's
span of the call it was sent while answering (the notification's `_meta` carries that context).

A server message is the call's whose span is its nearest tool-call ancestor; it is kept as a
JSON-RPC capture keeps it (`{method, params, response}` for a request) only when the spans hold
what the universe needs: the request's params and the client's answer (logfire's `request` and
`response`), a log message's level and data. The conventions record the method and no payload (the
`mcp` 2.x SDK's own spans): such a span is one `server_message_payload_missing` warning naming it
and its call. A message below no tool call's span is counted in one
`server_messages_unattributed` warning. Notifications nobody instrumented (progress, list changes)
leave no span at all. Messages are kept in the order the client received them where the trace has
the client's side of each (its span of a request, the log record), else in the order sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..call_messages import SERVER_REQUEST_METHODS
from ..canonical import nested_deeper_than
from ..universe_surface import MAX_NESTING
from .builder import TraceBuilder
from .envelope import Call
from .normalize import parse_json_text
from .otlp_spans import Span, nearest_above
from .otlp_surface import json_object, span_method, wire
from .shape import opt_str

__all__ = ["read_server_messages"]

SERVER_NOTIFICATIONS = frozenset(
    {
        "notifications/message",
        "notifications/progress",
        "notifications/resources/updated",
        "notifications/resources/list_changed",
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/elicitation/complete",
    }
)
_LOGFIRE_LOG = "MCP server log"
# logfire's level numbers for the MCP levels it keeps apart; it folds critical, alert and
# emergency into one (`fatal`, 21), which no MCP level can be told from.
_LEVELS = {5: "debug", 9: "info", 10: "notice", 13: "warning", 17: "error"}
# Request params and results whose values are the server's or the user's own data, by method: a
# pydantic dump keeps their nulls and `meta` keys as sent.
_DATA = {"elicitation/create": ("requestedSchema", "content")}


def _is_log(span: Span) -> bool:
    template = opt_str(span.attrs.get("logfire.msg_template")) or ""
    return span.attrs.get("logfire.span_type") == "log" and template.startswith(_LOGFIRE_LOG)


def _message_method(span: Span) -> str | None:
    """The server-to-client method a span reports, or None."""
    if _is_log(span):
        return "notifications/message"
    method = span_method(span, json_object(span.attrs.get("request")))
    if method in SERVER_REQUEST_METHODS or method in SERVER_NOTIFICATIONS:
        return method
    return None


def read_server_messages(
    builder: TraceBuilder, spans: list[Span], call_of: Mapping[str, Call]
) -> None:
    """Give each call the server messages the spans below it hold (`call_of`: a call's span
    ids); warn for each message kept out and for those below no call."""
    by_id = {s.span_id: s for s in spans if s.span_id}
    methods = {s.span_id: m for s in spans if (m := _message_method(s)) is not None}
    # The receiving side's span of a message (a child of the sender's, of the same method).
    received: dict[str, int] = {}
    for span in spans:
        if span.span_id in methods and span.parent_id in methods:
            received[span.parent_id] = min(received.get(span.parent_id, span.start), span.start)
    found: dict[int, list[tuple[int, int, dict[str, Any]]]] = {}
    calls: dict[int, Call] = {}
    unattributed: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start, s.order)):
        method = methods.get(span.span_id)
        if method is None or span.parent_id in methods:
            continue  # not a server message, or the receiving side of one already seen
        call = nearest_above(span, by_id, call_of)
        if call is None:
            unattributed.append(span)
            continue
        entry = _entry(builder, span, method, call)
        if entry is None:
            continue
        when = received.get(span.span_id, span.start)
        found.setdefault(call.seq, []).append((when, span.order, entry))
        calls[call.seq] = call
    for seq, entries in found.items():
        call = calls[seq]
        kept = [entry for _, _, entry in sorted(entries, key=lambda e: (e[0], e[1]))]
        call.server_messages = (call.server_messages or []) + kept
    if unattributed:
        first = unattributed[0]
        builder.warn(
            "server_messages_unattributed",
            f"{len(unattributed)} server message span(s) are below no tool call's span (first: "
            f"{methods[first.span_id]}); left out of the universe",
            first.where,
        )


def _entry(builder: TraceBuilder, span: Span, method: str, call: Call) -> dict[str, Any] | None:
    """The message as a recording keeps it, or None (with a warning) when the span lacks it."""
    entry = _log_entry(span) if _is_log(span) else _request_entry(span, method)
    if entry is None:
        builder.warn(
            "server_message_payload_missing",
            f"a {method} span sent while answering the call to {call.tool} (seq {call.seq}) "
            f"holds no {_missing(method)} (the MCP conventions record the method, not what was "
            "sent; a tracer that captures it, such as logfire's instrument_mcp on mcp 1.x, "
            "does): the recording keeps nothing of it",
            span.where,
        )
        return None
    if nested_deeper_than(entry, MAX_NESTING):
        builder.warn(
            "surface_too_deep",
            f"the server's {method} sent while answering the call to {call.tool} nests deeper "
            f"than {MAX_NESTING} levels, which MCP clients cannot read; left out",
            span.where,
        )
        return None
    return entry


def _missing(method: str) -> str:
    if method in SERVER_REQUEST_METHODS:
        return "request params and client answer"
    if method == "notifications/message":
        return "MCP log level (logfire's `fatal` is critical, alert or emergency alike) and data"
    return "params"


def _request_entry(span: Span, method: str) -> dict[str, Any] | None:
    request = json_object(span.attrs.get("request"))
    response = json_object(span.attrs.get("response"))
    if method not in SERVER_REQUEST_METHODS or request is None or response is None:
        return None
    params = request.get("params")
    entry: dict[str, Any] = {"method": method}
    if isinstance(params, dict):
        entry["params"] = _with_data(method, wire(params), params)
    entry["response"] = {"result": _with_data(method, wire(response), response)}
    return entry


def _with_data(method: str, converted: Any, dumped: dict[str, Any]) -> Any:
    """A pydantic dump made wire-shaped, with the fields that hold data taken as dumped."""
    for key in _DATA.get(method, ()):
        if isinstance(dumped.get(key), dict) and key in converted:
            converted[key] = dumped[key]
    return converted


def _log_entry(span: Span) -> dict[str, Any] | None:
    level = span.attrs.get("logfire.level_num")
    number = int(level) if isinstance(level, str) and level.isdigit() else level
    if not isinstance(number, int) or number not in _LEVELS or "data" not in span.attrs:
        return None
    params: dict[str, Any] = {"level": _LEVELS[number]}
    logger = opt_str(span.attrs.get("logger"))
    if logger is not None:
        params["logger"] = logger
    params["data"] = _logfire_value(span, "data")
    return {"method": "notifications/message", "params": params}


def _logfire_value(span: Span, key: str) -> Any:
    """An attribute as logged: logfire writes an object or array as JSON text and says so in
    its `logfire.json_schema`."""
    value = span.attrs[key]
    schema = json_object(span.attrs.get("logfire.json_schema")) or {}
    properties = schema.get("properties")
    described = properties.get(key) if isinstance(properties, dict) else None
    kind = described.get("type") if isinstance(described, dict) else None
    if isinstance(value, str) and kind in ("object", "array"):
        ok, parsed = parse_json_text(value)
        return parsed if ok else value
    return value
