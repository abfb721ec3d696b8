"""The W3C `traceparent` a request carried, while it is answered and until its call is reported.

A request carries its trace context in `params._meta` (SEP-414; the MCP semantic conventions
ask instrumentations to propagate it there), and over HTTP possibly also in a `traceparent`
header. `_meta` comes first: the header names the HTTP request, which may carry several MCP
messages or come from a proxy, while `_meta` names this message. A header parents a call only
when `_meta` has none.

A transport that reads a request puts its `traceparent` here for the time the call is answered
(`carried_by`) and notes it against the answered call (`note`). The router's reporter, which runs
in the task that answered, reads `current_traceparent`; a listener told later from another thread
(`wt serve --stdio` tells its listeners once the answer is written) takes the noted one (`take`).
Only while `capturing` is set (by an export that uses it): otherwise the transports skip all of it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

__all__ = [
    "RequestSink",
    "capturing",
    "carried_by",
    "current_traceparent",
    "header_of",
    "meta_traceparent",
    "note",
    "note_value",
    "raw_header",
    "start_capturing",
    "take",
]


class _Answering:
    """One request being answered: its `traceparent`, and whether a reporter in the same task
    already took it (then its call needs no note: nothing will come for it later)."""

    __slots__ = ("taken", "traceparent")

    def __init__(self, traceparent: str | None) -> None:
        self.traceparent = traceparent
        self.taken = False


_ANSWERING: ContextVar[_Answering | None] = ContextVar("wt_answering", default=None)
_MAX_LENGTH = 128
"""Longer than any valid `traceparent` (55 characters in version 00): the rest is not kept."""
_MAX_NOTED = 4096
"""Calls noted and not taken yet (a listener takes each one as it is told of it); past this the
oldest go: a call whose listener never comes must not hold memory for ever."""

capturing = False
_noted: dict[int, str] = {}


class RequestSink(Protocol):
    """Takes the requests a server answered without a call record (`mcp._request_spans`)."""

    def publish_request(
        self,
        method: str,
        *,
        upstream: str,
        start_ns: int,
        end_ns: int,
        trace_parent: str | None,
        error: str | None,
    ) -> None: ...


request_sink: RequestSink | None = None
"""The open export, for servers built while it is open; None (the usual case): no middleware."""


def start_capturing() -> None:
    """From now on, transports record the `traceparent` of each call they answer."""
    global capturing
    capturing = True


def current_traceparent() -> str | None:
    """The `traceparent` of the call being answered in this task, if it carried one."""
    answering = _ANSWERING.get()
    return answering.traceparent if answering is not None else None


def _valid(value: Any) -> str | None:
    return value if isinstance(value, str) and len(value) <= _MAX_LENGTH else None


def header_of(request: Any) -> str | None:
    """The `traceparent` header of an HTTP request the SDK hands its handlers (`ctx.request`, a
    Starlette request; None over stdio)."""
    headers = getattr(request, "headers", None)
    if not isinstance(headers, Mapping):
        return None
    return _valid(headers.get("traceparent"))


def raw_header(headers: Any) -> str | None:
    """The `traceparent` among an ASGI scope's raw headers (lower-cased name, bytes)."""
    for name, value in headers:
        if name == b"traceparent":
            return _valid(value.decode("latin-1"))
    return None


def meta_traceparent(params: Any) -> str | None:
    """The `traceparent` in a request's `params._meta`, if any."""
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    return _valid(meta.get("traceparent")) if isinstance(meta, Mapping) else None


@contextmanager
def carried_by(meta: Any, header: str | None = None) -> Iterator[None]:
    """While answering a request whose `params._meta` is `meta` (and, over HTTP, whose
    `traceparent` header is `header`): its `traceparent`, `_meta`'s first, else none (never the
    previous request's, on a connection that answers several in one task)."""
    value = _valid(meta.get("traceparent")) if isinstance(meta, Mapping) else None
    token = _ANSWERING.set(_Answering(value if value is not None else _valid(header)))
    try:
        yield
    finally:
        _ANSWERING.reset(token)


def note(call: object) -> None:
    """Remember the current `traceparent` for `call`, answered in this task, until `take`;
    not when a reporter in this task took it already (over HTTP the router's reporter runs
    before the answer returns: a note then would never be taken)."""
    answering = _ANSWERING.get()
    if answering is not None and not answering.taken:
        note_value(call, answering.traceparent)


def note_value(call: object, value: str | None) -> None:
    """Remember `value` as the `traceparent` of `call` (answered elsewhere), until `take`."""
    if value is None:
        return
    if len(_noted) >= _MAX_NOTED:
        del _noted[next(iter(_noted))]
    _noted[id(call)] = value


def take(call: object) -> str | None:
    """The `traceparent` noted for `call` (forgotten now), else the current one (taken: the
    call is not noted after this)."""
    noted = _noted.pop(id(call), None)
    if noted is not None:
        return noted
    answering = _ANSWERING.get()
    if answering is None:
        return None
    answering.taken = True
    return answering.traceparent
