"""The hostile upstream (`hostile_upstream.py`) over Streamable HTTP, on a real socket on port 0,
behind an ASGI layer that answers a few requests the way a broken or hostile server would:

- a `tools/call` of `keepalive`, or any request whose method starts with `hang`: an event stream
  that never answers, kept alive with an SSE comment every 0.1 s (for 30 s);
- a `tools/call` of `leak`: HTTP 500 whose plain-text body quotes `LEAKED`.

Everything else goes to the SDK's own stateless Streamable HTTP app, unchanged.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import hypercorn.config
import hypercorn.trio
import trio

from tests.record.hostile_upstream import build_hostile_server

LEAKED = "sk-live-5e6f7a8b9c0d1e2f3a4b5c6d"
"""The key an upstream's HTTP 500 body quotes."""
KEEPALIVE_S = 30.0

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def _behaviour(body: bytes) -> str | None:
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return None
    if message["method"].startswith("hang"):
        return "keepalive"
    params = message.get("params")
    if message["method"] == "tools/call" and isinstance(params, dict):
        name = params.get("name")
        return name if name in ("keepalive", "leak") else None
    return None


class Hostile:
    """ASGI: the hostile behaviours in front of `app`."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.comments_sent = 0
        self.query_strings: list[bytes] = []
        """The query of every POST that reached the upstream, in order."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        self.query_strings.append(scope["query_string"])
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        behaviour = _behaviour(body)
        if behaviour == "keepalive":
            await self._keep_alive(send)
            return
        if behaviour == "leak":
            text = f"internal error: upstream key {LEAKED} was refused".encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 500,
                    "headers": [
                        (b"content-type", b"text/plain"),
                        (b"content-length", b"%d" % len(text)),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": text})
            return
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _keep_alive(self, send: Send) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"text/event-stream"),
                    (b"cache-control", b"no-cache"),
                ],
            }
        )
        with trio.move_on_after(KEEPALIVE_S):
            while True:
                await send(
                    {
                        "type": "http.response.body",
                        "body": b": still working\n\n",
                        "more_body": True,
                    }
                )
                self.comments_sent += 1
                await trio.sleep(0.1)
        await send({"type": "http.response.body", "body": b"", "more_body": False})


@asynccontextmanager
async def hostile_http_upstream() -> AsyncIterator[tuple[str, Hostile]]:
    """The hostile upstream over HTTP: its URL, and the layer (to count what it sent)."""
    hostile = Hostile(build_hostile_server().streamable_http_app(stateless_http=True))  # type: ignore[arg-type]
    config = hypercorn.config.Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.errorlog = None
    config.graceful_timeout = 0.2
    shutdown = trio.Event()
    async with trio.open_nursery() as nursery:

        async def serve(task_status: trio.TaskStatus[list[str]]) -> None:
            await hypercorn.trio.serve(
                hostile,  # type: ignore[arg-type]
                config,
                shutdown_trigger=shutdown.wait,
                task_status=task_status,
            )

        binds: list[str] = await nursery.start(serve)
        try:
            yield binds[0] + "/mcp", hostile
        finally:
            shutdown.set()
            nursery.cancel_scope.cancel()
