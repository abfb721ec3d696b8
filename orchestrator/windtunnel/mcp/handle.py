"""`ServerHandle`: a server started from plain synchronous code (the seed's `start() → handle`).

    handle = RecordedMCPServer("crm.universe.json").start()   # serving on its own thread
    run_my_agent(handle.url)
    handle.call_tool("client_lookup", {"query": "Bluewing"})  # in process, as a live call
    calls = handle.call_log()
    handle.reset_call_log()                                    # the next run starts afresh
    handle.stop()

The server runs on its own Trio loop in a daemon thread (`threaded`), as `serve_in_thread` runs
it; Trio code starts a server in its nursery instead (`await server.start(nursery)`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ServerError
from .threaded import _ThreadedServing

if TYPE_CHECKING:
    from ..calls import MCPCall
    from ..faults.spec import Fault
    from .spi import MCPServer

__all__ = ["ServerHandle"]


class ServerHandle:
    """A started server: its URL, its call log, in-process calls, and `stop()`."""

    def __init__(
        self,
        server: MCPServer,
        *,
        host: str,
        port: int,
        allowed_hosts: Sequence[str],
        allowed_origins: Sequence[str],
    ) -> None:
        self.server = server
        self._serving: _ThreadedServing | None = _ThreadedServing(
            server, host, port, allowed_hosts, allowed_origins
        )
        self._serving.start()
        self.url: str = server.url
        """The Streamable HTTP endpoint (`http://HOST:PORT/mcp`)."""

    @property
    def stopped(self) -> bool:
        return self._serving is None

    def call_tool(self, tool_name: str, args: dict[str, Any] | None = None) -> Any:
        """Resolve a call in process exactly as a live MCP call would; the bare payload."""
        return self.server.call_tool(tool_name, dict(args or {}))

    def call_log(self) -> list[MCPCall]:
        """Every call so far, in arrival order."""
        return self.server.call_log()

    def reset_call_log(self) -> None:
        """Forget the calls so far (and, for a universe, what sequence-mode tools consumed)."""
        self.server.reset_call_log()

    def configure_failure_mode(self, mode: str | Fault | Sequence[str | Fault] | None) -> None:
        """windtunnel-bench's failure injection (`FailureInjectableMCPHandle`), from the next
        call on: `None` (serve the recording), its modes `timeout`, `malformed_json`,
        `empty_unexpected`, `auth_scope_denied`, or our faults (`RecordedMCPServer
        .configure_failure_mode`). A server that cannot inject faults raises `ServerError`."""
        configure = getattr(self.server, "configure_failure_mode", None)
        if configure is None:
            raise ServerError(f"server {self.server.name!r} cannot inject faults")
        configure(mode)

    def stop(self) -> None:
        """Stop serving (graceful, then hard after a deadline); safe to call more than once."""
        serving, self._serving = self._serving, None
        if self.server._handle is self:
            # Detached first: the serving thread stops the server with `await server.stop()`,
            # which must then stop its HTTP serving, not come back here.
            self.server._handle = None
        if serving is not None:
            serving.stop()
