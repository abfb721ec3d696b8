"""A message-level connection to one upstream, whatever its transport (stdio or HTTP).

    link.request(line, message) -> the upstream's response line, or raises `UpstreamFailure`
    link.send(line, messages)   -> a notification, a response or a batch, forwarded as is
    link.server_messages        -> everything else the upstream sends (its notifications and
                                   requests), for the agent

Each link feeds its `SessionTap` in forwarding order. An upstream that crashed, took longer than
the timeout to answer (in all: an event stream kept alive with comments does not extend it), or
refused the connection is a `UpstreamFailure`; the agent gets it as a JSON-RPC error that names
the upstream and what happened, its text redacted (`Printable`) like everything `wt record`
prints.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

import msgspec
import trio

from .tap import SessionTap

__all__ = [
    "UPSTREAM_ERROR_CODE",
    "Link",
    "Printable",
    "UpstreamFailure",
    "answer_deadline",
    "error_response",
    "one_line",
    "shown_as_is",
]

Printable = Callable[[str], str]
"""Makes text about the upstream (an error, its HTTP error body) fit to print or hand the agent:
secrets replaced, URL credentials masked (`RecordingProxy.printable`)."""


def shown_as_is(text: str) -> str:
    return text


def answer_deadline(timeout_s: float | None) -> float:
    """When the whole answer to a request sent now must be in (Trio time): the timeout bounds the
    answer, not the silence between its bytes."""
    return trio.current_time() + timeout_s if timeout_s is not None else math.inf


UPSTREAM_ERROR_CODE = -32603
"""JSON-RPC "internal error": the proxy could not get an answer from the upstream."""


class UpstreamFailure(Exception):
    """The upstream gave no answer: crashed, hung past the timeout, or could not be reached."""


class Link(Protocol):
    name: str
    tap: SessionTap
    server_messages: trio.MemoryReceiveChannel[bytes]

    async def run(self, *, task_status: trio.TaskStatus[None] = ...) -> None: ...

    async def request(self, line: bytes, message: dict[str, Any]) -> bytes: ...

    async def send(self, line: bytes, messages: list[dict[str, Any]]) -> None: ...

    async def aclose(self) -> None: ...


def error_response(request_id: Any, upstream: str, reason: str) -> bytes:
    """The JSON-RPC error an agent gets for a request the upstream did not answer."""
    return msgspec.json.encode(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {
                "code": UPSTREAM_ERROR_CODE,
                "message": f"wt record: upstream {upstream!r} {reason}",
            },
        }
    )


def one_line(body: bytes) -> bytes:
    """A JSON body as one stdio line: bodies with raw newlines are re-encoded compactly (the
    message is unchanged; only whitespace between tokens goes)."""
    body = body.strip()
    if b"\n" not in body and b"\r" not in body:
        return body
    return msgspec.json.encode(msgspec.json.decode(body))
