"""The one HTTP serving layer: every listener that speaks MCP over HTTP (`wt serve`'s
`_http.serve_http`, `wt record`'s front, `record/http_front.py`) is served by `serve_asgi`.

It owns what a listener is, apart from what answers its requests:

- the listening sockets, bound before serving so a taken port is an error for the caller
  (`listen`), and the URL they are reached at;
- the Trio worker around hypercorn's protocol code (`_http_worker`: HTTP/1.1 and HTTP/2, keep-alive,
  the body deadline and its 408), with an HTTP/1.1 fast path when the caller has one;
- the one `Host` / `Origin` check (`TrustedHostsOnly`, asking `trusted_hosts.TrustedHosts`: 421 /
  403, before anything else sees a request, on every path and protocol; the fast path asks the
  same `TrustedHosts` before it answers);
- the one request body limit (`MAX_REQUEST_BODY`, 413 with the SDK's words: the SDK's own
  `RequestBodyLimitMiddleware` in front of every app, so an app behind it never reads more);
- the graceful stop (`HTTPServing.stop`: stop accepting, finish in-flight requests within
  `GRACEFUL_TIMEOUT_S`, then the caller's grace before a hard cancel).

The app (the engine that answers) is any ASGI app: the SDK's Streamable HTTP apps for a replay or
a mock, the recording proxy's forwarding apps. A connection-level hook (closing a connection in
the middle of a call) belongs in `_http_worker._Connection`, the one place that holds the socket.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import trio
from mcp.server.transport_security import RequestBodyLimitMiddleware
from starlette.responses import Response

from ..errors import ServerError
from ..fd_limit import fd_hint
from ..trusted_hosts import NO_EXTRA_NAMES, AllowedNames, TrustedHosts
from . import _http_worker
from ._fast_path_h11 import HTTPFastPathRules
from ._hypercorn_internals import ASGIWrapper, HypercornConfig, Sockets

__all__ = [
    "GRACEFUL_TIMEOUT_S",
    "MAX_REQUEST_BODY",
    "HTTPServing",
    "TrustedHostsOnly",
    "bind_sockets",
    "listen",
    "serve_asgi",
    "worker_config",
]

MAX_REQUEST_BODY = 4 * 1024 * 1024
GRACEFUL_TIMEOUT_S = 0.5

ASGIApp = Callable[
    [dict[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
    Awaitable[None],
]


def _bind(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@dataclass
class HTTPServing:
    """A running HTTP server: its URL and the handles that stop it."""

    url: str
    shutdown: trio.Event
    cancel_scope: trio.CancelScope
    finished: trio.Event

    async def stop(self, *, grace_s: float = 2.0) -> None:
        """Graceful shutdown, then a hard cancel if it takes longer than `grace_s`."""
        self.shutdown.set()
        with trio.move_on_after(grace_s):
            await self.finished.wait()
            return
        self.cancel_scope.cancel()
        await self.finished.wait()


def worker_config(host: str, port: int) -> HypercornConfig:
    """The worker's configuration: no access or error log, the graceful timeout."""
    config = _http_worker.Config()
    config.bind = [_bind(host, port)]
    config.accesslog = None
    config.errorlog = None
    config.graceful_timeout = GRACEFUL_TIMEOUT_S
    return config


def bind_sockets(host: str, port: int) -> Sockets:
    """Bind and listen now, so a taken port is a plain `OSError` for the caller."""
    config = worker_config(host, port)
    sockets = config.create_sockets()
    for sock in sockets.insecure_sockets:
        sock.listen(config.backlog)
    return sockets


def listen(host: str, port: int, *, name: str) -> Sockets:
    """`bind_sockets`, with a `ServerError` naming server `name` when it cannot (the port is
    taken, no file descriptor is left: what to do about it)."""
    try:
        return bind_sockets(host, port)
    except OSError as exc:
        raise ServerError(
            f"server {name!r} cannot listen on {host}:{port}: {exc.strerror}{fd_hint(exc.errno)}"
        ) from None


async def serve_asgi(
    app: ASGIApp,
    *,
    host: str,
    sockets: Sockets,
    path: str = "/mcp",
    allowed: AllowedNames = NO_EXTRA_NAMES,
    fast_path: HTTPFastPathRules | None = None,
    task_status: trio.TaskStatus[HTTPServing] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve `app` on the listening `sockets` (bound at `host`) until stopped; report an
    `HTTPServing` (its URL ends in `path`) once accepting.

    Every request, on every path and protocol, must carry a `Host` and `Origin` that
    `TrustedHosts` allows for `host` and the bound ports, or that `allowed` adds (else 421 or
    403); a body over `MAX_REQUEST_BODY` is refused with 413. With `fast_path`, HTTP/1.1
    connections answer its requests inside the protocol (`_fast_path_h11`), after the same
    `Host` and `Origin` check."""
    trusted = TrustedHosts(
        host, (sock.getsockname()[1] for sock in sockets.insecure_sockets), allowed
    )
    limited = RequestBodyLimitMiddleware(app, MAX_REQUEST_BODY)  # type: ignore[arg-type]
    served: Any = TrustedHostsOnly(limited, trusted)  # hypercorn types scopes narrower than dicts
    config = worker_config(host, 0)
    shutdown = trio.Event()
    finished = trio.Event()
    scope = trio.CancelScope()

    async def run(task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED) -> None:
        await _http_worker.serve(
            ASGIWrapper(served),
            config,
            sockets=sockets,
            shutdown_trigger=shutdown.wait,
            fast_path=fast_path,
            trusted=trusted,
            task_status=task_status,
        )

    try:
        with scope:
            async with trio.open_nursery() as nursery:
                binds: list[str] = await nursery.start(run)
                task_status.started(HTTPServing(binds[0] + path, shutdown, scope, finished))
    finally:
        for sock in sockets.insecure_sockets:
            sock.close()  # hypercorn closes its listeners; this covers a cancel before it started
        finished.set()


class TrustedHostsOnly:
    """ASGI middleware: refuse a request whose `Host` (421) or `Origin` (403) `trusted` does not
    allow, with the SDK's own answers, before anything else sees it (HTTP/2 included)."""

    def __init__(self, app: ASGIApp, trusted: TrustedHosts) -> None:
        self.app = app
        self.trusted = trusted

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.trusted.judge_headers(scope["headers"])
        if refusal is None:
            await self.app(scope, receive, send)
            return
        # Read the body first (up to the size limit, kept nowhere): hypercorn's HTTP/2 protocol
        # fails on DATA frames for a stream that was answered before its body came.
        size = 0
        while size <= MAX_REQUEST_BODY:
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
            size += len(message.get("body", b""))
        await Response(refusal.text, status_code=refusal.status)(scope, receive, send)
