"""The requests a server answers without a call record (`initialize`, `tools/list`, the other
lists, `ping`, ...), told to an OpenTelemetry export as they are answered.

`tools/call`, `resources/read`, `prompts/get` and `completion/complete` are call records and
reach the export through the router (`actors.sinks.CallSink`). The rest are answered by the SDK
(or by `_surface_server` from the universe) and logged nowhere: an SDK middleware times each one
and hands it to `trace_context.request_sink`, set only while an export is open, so a server
built without export has no middleware at all (as before: the SDK's own OpenTelemetry middleware
stays off).
"""

from __future__ import annotations

import time
from typing import Any

from mcp.shared.exceptions import MCPError

from .. import trace_context

__all__ = ["CALL_METHODS", "request_middleware"]

CALL_METHODS = frozenset({"tools/call", "resources/read", "prompts/get", "completion/complete"})
"""Requests whose spans come from their call records."""


class _RequestSpans:
    def __init__(self, upstream: str, sink: trace_context.RequestSink) -> None:
        self._upstream = upstream
        self._sink = sink

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        method = ctx.method
        if method in CALL_METHODS:
            return await call_next(ctx)
        parent = trace_context.meta_traceparent(ctx.params) or trace_context.header_of(ctx.request)
        started = time.time_ns()
        error: str | None = None
        try:
            return await call_next(ctx)
        except MCPError as exc:
            error = str(exc.error.code)
            raise
        except Exception as exc:
            error = type(exc).__qualname__
            raise
        finally:
            self._sink.publish_request(
                method,
                upstream=self._upstream,
                start_ns=started,
                end_ns=time.time_ns(),
                trace_parent=parent,
                error=error,
            )


def request_middleware(upstream: str) -> list[Any]:
    """The SDK middleware list for a server named `upstream`: empty unless an export is open."""
    sink = trace_context.request_sink
    return [] if sink is None else [_RequestSpans(upstream, sink)]
