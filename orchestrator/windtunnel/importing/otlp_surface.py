"""What OTLP spans show of an upstream beyond its tool calls (issue 25).

A span of an MCP request other than `tools/call` names its method in `mcp.method.name` (the OTel
MCP semantic conventions: the `mcp` 2.x SDK, fastmcp), `rpc.method` or the span name (logfire's
`MCP request: <method>`); its target in `mcp.resource.uri` or `gen_ai.prompt.name`. The
conventions record no answer: only a tracer that captures the request and the response (logfire
`instrument_mcp` on `mcp` 1.x: `request` and `response` attributes) gives what the universe
holds, and then it is taken as `jsonrpc_surface` takes a capture's answers (identity from
`initialize`, the lists, reads, prompt gets, completions). A span of such a method that holds no
answer is a warning naming the span and what is missing: the universe has no entry for it.

Server notifications and requests sent while answering a call are `otlp_server_messages`'s.
"""

from __future__ import annotations

from typing import Any

from .builder import TraceBuilder
from .jsonrpc_surface import SURFACE_METHODS, SurfaceCollector
from .normalize import parse_json_text
from .otlp_conventions import server_name
from .otlp_spans import Span
from .shape import opt_str

__all__ = ["json_object", "read_surface", "span_method", "wire"]

_LOGFIRE_REQUEST = "MCP request: "
# Values a pydantic dump must not be walked into: they are the server's or the user's own data.
_OPAQUE = frozenset({"arguments", "structuredContent", "inputSchema", "outputSchema", "_meta"})


def json_object(value: Any) -> dict[str, Any] | None:
    if isinstance(value, str):
        ok, value = parse_json_text(value)
        if not ok:
            return None
    return value if isinstance(value, dict) else None


def wire(value: Any) -> Any:
    """An MCP model as pydantic dumped it by field name (`meta`, nulls) -> as the wire carries
    it (`_meta`, no nulls), key order kept."""
    if isinstance(value, list):
        return [wire(item) for item in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        if item is None:
            continue
        name = "_meta" if key == "meta" else key
        # Prompt definitions list their `arguments`; a request gives them as an object (data).
        out[name] = item if name in _OPAQUE and isinstance(item, dict) else wire(item)
    return out


def span_method(span: Span, request: dict[str, Any] | None) -> str | None:
    for found in (
        opt_str(span.attrs.get("mcp.method.name")),
        opt_str(span.attrs.get("rpc.method")),
        opt_str(request.get("method")) if request is not None else None,
    ):
        if found:
            return found
    if span.name.startswith(_LOGFIRE_REQUEST):
        return span.name.removeprefix(_LOGFIRE_REQUEST).split(" ", 1)[0] or None
    return None


def _target(span: Span, params: dict[str, Any]) -> str:
    for value in (
        span.attrs.get("mcp.resource.uri"),
        span.attrs.get("gen_ai.prompt.name"),
        params.get("uri"),
        params.get("name"),
    ):
        if isinstance(value, str) and value:
            return f" ({value})"
    return ""


def _upstream(builder: TraceBuilder, span: Span, called: list[str]) -> str:
    """The upstream a surface span belongs to: the server it names, else the one upstream the
    calls went to, else `default`."""
    named = server_name(span)
    if named is not None:
        return builder.upstream(named)
    if len(set(called)) == 1:
        return called[0]
    return builder.upstream("default")


def read_surface(builder: TraceBuilder, spans: list[Span]) -> int:
    """Take every surface answer the spans hold into the builder; warn for each span of a surface
    method that holds none. Returns how many surface spans there were."""
    collector = SurfaceCollector(builder.warn)
    called = [call.upstream for call in builder.calls]
    missing: dict[tuple[str, str], Span] = {}
    found = 0
    for span in sorted(spans, key=lambda s: (s.start, s.order)):
        request = json_object(span.attrs.get("request"))
        method = span_method(span, request)
        if method not in SURFACE_METHODS:
            continue
        found += 1
        params = request.get("params") if request is not None else None
        params = wire(params) if isinstance(params, dict) else {}
        response = json_object(span.attrs.get("response"))
        if response is None:
            missing.setdefault((method, _target(span, params)), span)
            continue
        upstream = _upstream(builder, span, called)
        collector.answered(upstream, span.where, method, params, wire(response))
    collector.fill(builder.surface)
    for (method, target), span in missing.items():
        builder.warn(
            "surface_result_missing",
            f"a {method} span{target} holds no answer (the MCP conventions record the method, "
            "not its result; a tracer that captures the response, such as logfire's "
            "instrument_mcp, does): the universe has nothing for it",
            span.where,
        )
    return found
