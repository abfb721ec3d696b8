"""Serve an MCP server from a background thread, for code that is not Trio (sync or asyncio).

with serve_in_thread(RecordedMCPServer("crm.universe.json")) as server:
    run_my_agent(server.url)
    assert not [c for c in server.call_log() if c.divergence]
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from ..errors import ServerError
from .spi import MCPServer

if TYPE_CHECKING:
    import trio

__all__ = ["serve_in_thread"]

START_TIMEOUT_S = 30.0


class _ThreadedServing:
    """One Trio loop in a daemon thread that serves until told to stop."""

    def __init__(
        self,
        server: MCPServer,
        host: str,
        port: int,
        allowed_hosts: Sequence[str],
        allowed_origins: Sequence[str],
    ) -> None:
        self.server = server
        self.host = host
        self.port = port
        self.allowed_hosts = allowed_hosts
        self.allowed_origins = allowed_origins
        self.ready = threading.Event()
        self.error: BaseException | None = None
        self.token: trio.lowlevel.TrioToken | None = None
        self.stop_requested: trio.Event | None = None
        self.thread = threading.Thread(
            target=self._run, name=f"windtunnel-{server.name}", daemon=True
        )

    def _run(self) -> None:
        import trio  # here: `windtunnel.mcp` loads without Trio

        try:
            trio.run(self._main)
        except BaseException as exc:  # handed to the caller's thread
            self.error = exc
        finally:
            self.ready.set()

    async def _main(self) -> None:
        import trio

        self.token = trio.lowlevel.current_trio_token()
        self.stop_requested = trio.Event()
        async with trio.open_nursery() as nursery:
            await self.server.start(
                nursery,
                host=self.host,
                port=self.port,
                allowed_hosts=self.allowed_hosts,
                allowed_origins=self.allowed_origins,
            )
            self.ready.set()
            await self.stop_requested.wait()
            await self.server.stop()

    def start(self) -> None:
        self.thread.start()
        if not self.ready.wait(START_TIMEOUT_S) or self.error is not None:
            raise ServerError(f"server {self.server.name!r} did not start: {self.error!r}")

    def stop(self) -> None:
        import trio

        if self.token is not None and self.stop_requested is not None:
            with contextlib.suppress(trio.RunFinishedError):
                trio.from_thread.run_sync(self.stop_requested.set, trio_token=self.token)
        self.thread.join(START_TIMEOUT_S)


@contextlib.contextmanager
def serve_in_thread(
    server: MCPServer,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
) -> Iterator[MCPServer]:
    """Run `server` on its own Trio loop in a daemon thread (as `MCPServer.serve` serves);
    stop it on exit."""
    serving = _ThreadedServing(server, host, port, allowed_hosts, allowed_origins)
    serving.start()
    try:
        yield server
    finally:
        serving.stop()
