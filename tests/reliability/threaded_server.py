"""A server on its own Trio loop in a thread, so plain (hypothesis) tests can call it over HTTP."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import trio

from windtunnel.mcp.spi import MCPServer

__all__ = ["serve_in_thread"]


@contextmanager
def serve_in_thread(server: MCPServer, *, deadline_s: float = 600.0) -> Iterator[str]:
    """Serve `server` on 127.0.0.1 (port 0) in a thread; yield its URL; stop it on exit."""
    ready: queue.Queue[tuple[str, trio.lowlevel.TrioToken] | BaseException] = queue.Queue()
    stop = threading.Event()

    async def main() -> None:
        with trio.fail_after(deadline_s):
            async with trio.open_nursery() as nursery:
                url = await server.start(nursery)
                ready.put((url, trio.lowlevel.current_trio_token()))
                await trio.to_thread.run_sync(stop.wait)
                await server.stop()

    def run() -> None:
        try:
            trio.run(main)
        except BaseException as exc:  # surfaced to the test below
            ready.put(exc)

    thread = threading.Thread(target=run, name="wt-test-server", daemon=True)
    thread.start()
    first = ready.get(timeout=30)
    if isinstance(first, BaseException):
        raise first
    try:
        yield first[0]
    finally:
        stop.set()
        thread.join(timeout=30)
        assert not thread.is_alive(), "the server thread did not stop"
