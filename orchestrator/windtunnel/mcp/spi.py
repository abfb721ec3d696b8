"""The MCPServer SPI: the lifecycle every server type shares (DESIGN §2, §5).

    server = RecordedMCPServer("crm.universe.json")  # or MockMCPServer, or your own
    url = await server.start(nursery)                  # bound and ready: hand `url` to the agent
    ...                                                # the agent calls tools
    calls = server.call_log()                          # every call, in arrival order
    await server.stop()                                # graceful, then hard after a deadline

From plain synchronous code, `handle = server.start()` serves on a thread of its own and gives a
`ServerHandle` (`handle.url`, `call_tool`, `call_log`, `reset_call_log`, `stop()`).

`call_tool(name, args)` answers in process exactly as a live call would. Subclasses provide the
tool list and `answer`; serving, stopping and stdio are shared here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Coroutine, Generator, Sequence
from typing import TYPE_CHECKING, Any, overload

from .. import __version__
from ..calls import MCPCall
from ..errors import ServerError
from ..trusted_hosts import AllowedNames
from ._shapes import Exchange, ServedSurface, SessionState, SyncAnswer, ToolSpec

if TYPE_CHECKING:
    import trio
    from mcp.server import Server

    from ._http_serving import HTTPServing
    from .handle import ServerHandle

__all__ = ["MCPServer"]


class _IgnoredStatus:
    """`trio.TASK_STATUS_IGNORED` without loading Trio (a plain stdio session never does)."""

    def started(self, value: object = None) -> None:
        return


_IGNORED: Any = _IgnoredStatus()


class MCPServer(ABC):
    """A server an agent can reach over MCP, with a call log."""

    name: str
    log_events: bool = True
    """Emit `universe_divergence` through structlog directly (off under a fleet's router)."""
    fast_path: bool = True
    """Answer plain `tools/call` requests without the SDK's per-request machinery (the same
    bytes; see `_fast_path_http` for HTTP, `_fast_path_stdio` for stdio). Off (`wt serve
    --no-fast-path`), every request goes through the SDK: the switch for ruling the fast path
    out when chasing a bug."""

    def __init__(self) -> None:
        self._serving: HTTPServing | None = None
        self._handle: ServerHandle | None = None
        self.reporter: Callable[[MCPCall], Awaitable[None]] | None = None
        """Awaited with every call that arrives over MCP (the orchestrator's router sets it)."""

    # -- what a server type provides ------------------------------------------------------

    @abstractmethod
    def tool_specs(self) -> list[ToolSpec]:
        """The tools offered in `tools/list`."""

    @abstractmethod
    async def answer(self, tool_name: str, args: dict[str, Any]) -> MCPCall:
        """Resolve one live call, record it, and return the recorded call."""

    @abstractmethod
    def call_tool(self, tool_name: str, args: dict[str, Any]) -> Any:
        """Resolve one call in process and return the bare payload."""

    @abstractmethod
    def call_log(self) -> list[MCPCall]:
        """Every call so far, in arrival order."""

    def surface(self) -> ServedSurface:
        """What the server shows besides its tools: identity, resources, prompts, and the
        requests other than `tools/call` it answers (through `answer_request`). None by default."""
        return ServedSurface()

    async def answer_request(self, method: str, target: str, args: dict[str, Any]) -> MCPCall:
        """Resolve one request other than `tools/call` (one of `surface().requests`), record it
        and return the recorded call (see `MCPCall` for how each method is logged)."""
        raise ServerError(f"server {self.name!r} answers no {method} requests")

    async def answer_exchanging(
        self,
        tool_name: str,
        args: dict[str, Any],
        exchange: Exchange,
        session: SessionState | None = None,
    ) -> MCPCall:
        """`answer` on a transport that can exchange messages with the client during a call
        (stdio, HTTP sessions): a server whose answers come with recorded server messages sends
        them with `exchange` before answering, and keeps what belongs to the call's MCP session
        (a sequence position) in `session` (None where the protocol has no session). By default
        there are no messages: `answer`."""
        return await self.answer(tool_name, args)

    def messaging_tools(self) -> frozenset[str]:
        """Tools some of whose answers come with `server_messages`: their calls are answered
        through the SDK session, which can send notifications, never by the fast path."""
        return frozenset()

    def needs_sessions(self) -> bool:
        """Whether an HTTP client that opens an MCP session (`initialize`) gets one
        (`Mcp-Session-Id`): when some answers come with server messages (they travel on the
        call's SSE stream, and a request to the client needs the session to route its answer
        back) or depend on the calls before (a sequence position belongs to the session).
        Otherwise the server is stateless JSON only."""
        return bool(self.messaging_tools() or self.ordered_tools())

    def ordered_tools(self) -> frozenset[str]:
        """Tools whose calls must be answered in the order they were sent (their answer depends
        on the calls before: a universe's sequence-mode tools). Over stdio that order is kept
        however a call is answered; HTTP requests have no order between them."""
        return frozenset()

    def rename(self, name: str) -> None:
        """Take the upstream name a scenario gives this server (it tags every call)."""
        self.name = name

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The Streamable HTTP endpoint; only while started."""
        if self._serving is None:
            raise ServerError(f"server {self.name!r} is not started")
        return self._serving.url

    @property
    def started(self) -> bool:
        return self._serving is not None

    async def handle_call(self, tool_name: str, args: dict[str, Any]) -> MCPCall:
        """A call arriving over MCP: answer it, then report it (backpressure if the router lags)."""
        call = await self.answer(tool_name, args)
        if self.reporter is not None:
            await self.reporter(call)
        await self.deliver(call)
        return call

    async def deliver(self, call: MCPCall) -> None:
        """What the transport does for a reported call besides sending its answer: nothing,
        unless the server injects faults (`RecordedMCPServer`: wait, never answer, drop)."""
        return

    async def handle_call_exchanging(
        self,
        tool_name: str,
        args: dict[str, Any],
        exchange: Exchange,
        session: SessionState | None = None,
    ) -> MCPCall:
        """`handle_call` through `answer_exchanging`."""
        call = await self.answer_exchanging(tool_name, args, exchange, session)
        if self.reporter is not None:
            await self.reporter(call)
        await self.deliver(call)
        return call

    async def handle_request(self, method: str, target: str, args: dict[str, Any]) -> MCPCall:
        """`handle_call` for the other requests: answer, then report."""
        call = await self.answer_request(method, target, args)
        if self.reporter is not None:
            await self.reporter(call)
        return call

    def fast_path_tools(self) -> frozenset[str]:
        """The tools whose plain calls the fast path may answer: not one whose answer comes
        with server messages (the SDK answers it, on a stream that can carry them)."""
        messaging = self.messaging_tools()
        return frozenset(spec.name for spec in self.tool_specs() if spec.name not in messaging)

    def sync_answer(self) -> SyncAnswer | None:
        """Answers without Trio, when this server can give them (see `SyncAnswer`): the stdio
        transport then answers plain calls on its reader thread. None by default: answers that
        may await (a mock's async tool, the router's backpressure) stay on Trio."""
        return None

    def sdk_server(self, *, notify: bool = False) -> Server[Any]:
        """The SDK server; with `notify`, calls are answered through `answer_exchanging` (a
        transport that can carry messages during a request: stdio, HTTP with sessions)."""
        # Here, not at the top: `windtunnel.mcp` imports without the SDK (see `_shapes`).
        from ._sdk_server import build_sdk_server

        return build_sdk_server(
            self.name,
            __version__,
            self.tool_specs(),
            self.handle_call,
            self.surface(),
            self.handle_request,
            self.handle_call_exchanging if notify else None,
        )

    async def serve(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        allowed_hosts: Sequence[str] = (),
        allowed_origins: Sequence[str] = (),
        task_status: trio.TaskStatus[str] = _IGNORED,
    ) -> None:
        """Serve over HTTP until stopped or cancelled; report the URL once ready.

        Requests must name the server by a name of `host` on the bound port, or one of
        `allowed_hosts` (`NAME`: on the bound port; `NAME:PORT`), and come from no web page or
        one of `allowed_origins` (`trusted_hosts` has the rule): else 421 or 403.

        A server that `needs_sessions` hands a session to each client that opens one
        (`initialize`) and answers its calls on SSE streams, through the SDK when they carry
        recorded server messages, else by the fast path as the SDK would; requests outside a
        session are stateless JSON, and their plain calls take the fast path, as on a server
        that needs none."""
        # The HTTP stack (hypercorn) loads with the first server that needs it, not with stdio;
        # Trio with the first server that runs on it (a plain stdio session needs none).
        import trio

        from ._fast_path_http import HTTPFastPath
        from ._fast_path_sessions import SessionCalls
        from ._http import serve_http
        from ._http_serving import listen
        from ._protocol_era import served_versions

        if self._serving is not None:
            raise ServerError(f"server {self.name!r} is already started")
        allowed = AllowedNames.parse(allowed_hosts, allowed_origins)
        sockets = listen(host, port, name=self.name)
        sdk_server = self.sdk_server()
        messaging = self.messaging_tools()
        sessions_server = self.sdk_server(notify=True) if self.needs_sessions() else None
        versions = served_versions(self.surface().protocol_version)

        http_fast_path = None
        if self.fast_path:
            # A call whose answer comes with server messages is answered by the SDK, on a
            # stream that can carry them (as over stdio).
            # In a session, as the SDK's handler answers there: with the session's own state.
            sessions = (
                None
                if sessions_server is None
                else SessionCalls(sessions_server, self.handle_call_exchanging)
            )
            http_fast_path = HTTPFastPath(
                path="/mcp",
                tools=self.fast_path_tools(),
                answer=self.handle_call,
                server=sdk_server,
                sessions=sessions,
                versions=versions,
            )

        async with trio.open_nursery() as nursery:
            serving: HTTPServing = await nursery.start(
                lambda task_status: serve_http(
                    sdk_server,
                    host=host,
                    port=port,
                    sockets=sockets,
                    fast_path=http_fast_path,
                    allowed=allowed,
                    sessions_server=sessions_server,
                    messaging_tools=messaging,
                    versions=versions,
                    task_status=task_status,
                )
            )
            self._serving = serving
            try:
                task_status.started(serving.url)
                await serving.finished.wait()
            finally:
                self._serving = None

    @overload
    def start(
        self,
        nursery: trio.Nursery,
        *,
        host: str = ...,
        port: int = ...,
        allowed_hosts: Sequence[str] = ...,
        allowed_origins: Sequence[str] = ...,
    ) -> Coroutine[Any, Any, str]: ...

    @overload
    def start(
        self,
        nursery: None = None,
        *,
        host: str = ...,
        port: int = ...,
        allowed_hosts: Sequence[str] = ...,
        allowed_origins: Sequence[str] = ...,
    ) -> ServerHandle: ...

    def start(
        self,
        nursery: trio.Nursery | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        allowed_hosts: Sequence[str] = (),
        allowed_origins: Sequence[str] = (),
    ) -> Coroutine[Any, Any, str] | ServerHandle:
        """Start serving (as `serve`) once the socket is bound.

        From Trio, `url = await server.start(nursery)` serves in `nursery`. From plain
        synchronous code, `handle = server.start()` serves on a thread of its own and returns a
        `ServerHandle` (`url`, `call_tool`, `call_log`, `reset_call_log`, `stop`), as
        windtunnel-bench's `start()` does."""
        if nursery is None:
            from .handle import ServerHandle

            if self._handle is not None and not self._handle.stopped:
                return self._handle
            self._handle = ServerHandle(
                self,
                host=host,
                port=port,
                allowed_hosts=allowed_hosts,
                allowed_origins=allowed_origins,
            )
            return self._handle
        return self._start_in(nursery, host, port, allowed_hosts, allowed_origins)

    async def _start_in(
        self,
        nursery: trio.Nursery,
        host: str,
        port: int,
        allowed_hosts: Sequence[str],
        allowed_origins: Sequence[str],
    ) -> str:
        # Named only when given: a subclass overriding `serve` with the older signature still
        # starts.
        allowed: dict[str, Sequence[str]] = {}
        if allowed_hosts:
            allowed["allowed_hosts"] = allowed_hosts
        if allowed_origins:
            allowed["allowed_origins"] = allowed_origins
        url: str = await nursery.start(
            lambda task_status: self.serve(host=host, port=port, task_status=task_status, **allowed)
        )
        return url

    def stop(self, *, grace_s: float = 2.0) -> Awaitable[None]:
        """Stop serving: finish in-flight requests, then cancel whatever remains after `grace_s`.

        From Trio, `await server.stop()`. A server started from synchronous code (`start()`)
        stops at once, and what is returned needs no awaiting (awaiting it does nothing)."""
        handle, self._handle = self._handle, None
        if handle is not None:
            handle.stop()
            return _Stopped()
        if self._serving is None:
            return _Stopped()
        return self._stop_serving(grace_s)

    async def _stop_serving(self, grace_s: float) -> None:
        serving = self._serving
        if serving is not None:
            await serving.stop(grace_s=grace_s)

    def reset_call_log(self) -> None:
        """Forget the calls so far, so the next run starts afresh (a server type that keeps
        other state per run resets it too)."""
        raise ServerError(f"server {self.name!r} cannot reset its call log")

    async def serve_stdio(self) -> None:
        """Serve on stdin/stdout until stdin closes; recorded server messages are exchanged with
        the client again (`answer_exchanging`). A plain session is answered without the SDK
        until a line needs it (`_stdio_lite`)."""
        from ._stdio_lite import lite_session, serve_lazily

        session = lite_session(self)
        if session is not None:
            await serve_lazily(self, session)
            return
        from ._fast_path_stdio import StdioFastPath
        from ._protocol_era import served_versions
        from ._stdio import serve_stdio

        sdk_server = self.sdk_server(notify=True)
        # A replay of a handshake-era server never opens a 2026-07-28 connection (`_protocol_era`).
        handshake_only = served_versions(self.surface().protocol_version) is not None
        stdio_fast_path = None
        if self.fast_path:
            stdio_fast_path = StdioFastPath(
                sdk_server,
                self.fast_path_tools(),
                self.handle_call,
                self.sync_answer(),
                handshake_only=handshake_only,
            )
        await serve_stdio(
            sdk_server, stdio_fast_path, self.ordered_tools(), handshake_only=handshake_only
        )


class _Stopped:
    """What `stop()` returns when there is nothing left to await: awaiting it returns at once,
    and leaving it unawaited (synchronous code) warns of nothing, unlike a coroutine."""

    def __await__(self) -> Generator[Any, None, None]:
        return
        yield  # a generator: `await` runs it to its (immediate) end
