"""The W3C `traceparent` a request carried in `params._meta` (SEP-414), while it is answered.

A transport that reads a request's `_meta` puts its `traceparent` here for the time the call is
answered (`carried_by`); the router's reporter, which runs in the same task, hands it on with the
call, so an OpenTelemetry export can parent the call's span under the agent's own span. Only
while `capturing` is set (by an export that uses it): otherwise the transports skip the lookup.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["capturing", "carried_by", "current_traceparent", "start_capturing"]

_TRACEPARENT: ContextVar[str | None] = ContextVar("wt_traceparent", default=None)
_MAX_LENGTH = 128
"""Longer than any valid `traceparent` (55 characters in version 00): the rest is not kept."""

capturing = False


def start_capturing() -> None:
    """From now on, transports record the `traceparent` of each call they answer."""
    global capturing
    capturing = True


def current_traceparent() -> str | None:
    """The `traceparent` of the call being answered in this task, if it carried one."""
    return _TRACEPARENT.get()


@contextmanager
def carried_by(meta: Any) -> Iterator[None]:
    """While answering a request whose `params._meta` is `meta`: its `traceparent`, else none
    (never the previous request's, on a connection that answers several in one task)."""
    value = meta.get("traceparent") if isinstance(meta, Mapping) else None
    token = _TRACEPARENT.set(
        value if isinstance(value, str) and len(value) <= _MAX_LENGTH else None
    )
    try:
        yield
    finally:
        _TRACEPARENT.reset(token)
