"""An ASGI MCP app (an SDK server's Streamable HTTP app) served on a real socket for a test."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import hypercorn.config
import hypercorn.trio
import trio


@asynccontextmanager
async def serve_app(app: Any) -> AsyncIterator[str]:
    """Serve `app` with stock hypercorn on 127.0.0.1, port 0; yield its `/mcp` URL."""
    config = hypercorn.config.Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.errorlog = None
    config.graceful_timeout = 0.2
    shutdown = trio.Event()
    async with trio.open_nursery() as nursery:
        binds: list[str] = await nursery.start(
            lambda task_status: hypercorn.trio.serve(
                app, config, shutdown_trigger=shutdown.wait, task_status=task_status
            )
        )
        try:
            yield binds[0] + "/mcp"
        finally:
            shutdown.set()
