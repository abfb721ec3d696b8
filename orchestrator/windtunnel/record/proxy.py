"""`RecordingProxy`: a live MCP upstream behind the `MCPServer` SPI, recording as it forwards.

    proxy = RecordingProxy("https://crm.internal/mcp", name="crm", redact=rules)
    url = await proxy.start(nursery)        # hand `url` to the agent; calls reach the real server
    ...
    await proxy.stop()
    freeze_universe(proxy.call_log(), tools=proxy.universe_tools(), path="crm.universe.json")
    proxy.save("crm.universe.json", log="crm.jsonl")   # or: universe + capture log, redacted

The upstream is a Streamable HTTP URL or a stdio command (a list: program and arguments). Calls
are answered by the upstream, never in process: `call_tool` refuses. Everything the proxy hands out
(`call_log`, `universe_tools`, the reporter's calls, `save`) is redacted first.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import trio

from .. import trace_context
from .._groups import unwrap_single_error
from ..calls import MCPCall
from ..errors import ServerError
from ..mcp._shapes import ToolSpec
from ..mcp.spi import MCPServer
from ..trusted_hosts import AllowedNames
from ..universe import UniverseTool
from .build import Recording, RecordingBuilder, redacted_calls, universe_tools
from .limits import DEFAULT_TIMEOUT_S
from .link import Link, UpstreamFailure
from .redact import RedactionRules, Redactor
from .saving import save_recording
from .stdio_front import serve_link_stdio
from .stdio_link import StdioLink
from .tap import SessionTap
from .upstream_source import is_url

if TYPE_CHECKING:
    from ..mcp._http_serving import HTTPServing
    from .http_front import LinkApp, ReverseProxyApp

__all__ = ["RecordingProxy", "is_url"]


class RecordingProxy(MCPServer):
    """Forwards every message between an agent and one live upstream, unchanged, and records."""

    def __init__(
        self,
        upstream: str | Sequence[str],
        *,
        name: str = "upstream",
        redact: RedactionRules | None = None,
        timeout_s: float | None = DEFAULT_TIMEOUT_S,
    ) -> None:
        super().__init__()
        if isinstance(upstream, str) and not is_url(upstream):
            raise ServerError(
                f"upstream {upstream!r} is neither an http(s) URL nor a command (a list)"
            )
        if not isinstance(upstream, str) and not upstream:
            raise ServerError("the upstream command is empty")
        self.upstream = upstream if isinstance(upstream, str) else list(upstream)
        self.name = name
        self.timeout_s = timeout_s
        self.redactor = Redactor(redact or RedactionRules())
        self.redactor.see_upstream(self.upstream)
        self.tap = SessionTap(upstream=name, one_stream=not is_url(upstream))
        self.tap.on_change = self._changed
        self._builder = RecordingBuilder(self.tap, self.redactor)
        self.started_at = time.time()
        self.changed = trio.Event()
        """Set when the recording changed (a call answered, a tool list); the caller resets it."""
        self.exporter: Callable[[MCPCall, str | None], None] | None = None
        """Told of each recorded call, redacted, with the `traceparent` its request carried: an
        OpenTelemetry export (`otel.sink.OtelSink.publish_live_call`), off the request's path."""
        self._reports_in, self._reports_out = trio.open_memory_channel[MCPCall](math.inf)
        self._finished = trio.Event()
        """Set once serving ended, the upstream included."""

    @property
    def source(self) -> str:
        """The upstream's URL or command line as written and printed: redacted, and with a URL's
        userinfo, query values and fragment masked."""
        return self.redactor.printable_upstream(self.upstream)

    def printable(self, text: str) -> str:
        """Text about the upstream (an error, an HTTP error body) made fit to print and to hand
        the agent: every secret the recording knows, or the rules find in it, replaced; URLs
        masked."""
        self._builder.see_new()
        self.redactor.see_text(text)
        return self.redactor.printable(text)

    def rename(self, name: str) -> None:
        self.name = name
        self.tap.upstream = name

    def _changed(self, call: MCPCall | None) -> None:
        self.changed.set()
        if call is not None and (self.reporter is not None or self.exporter is not None):
            self._reports_in.send_nowait(call)

    # -- the SPI ------------------------------------------------------------------------------

    def tool_specs(self) -> list[ToolSpec]:
        return [ToolSpec(t.name, t.input_schema, t.description) for t in self.universe_tools()]

    async def answer(self, tool_name: str, args: dict[str, Any]) -> MCPCall:
        raise ServerError(f"{self.name!r} is a recording proxy: the upstream answers over MCP")

    def call_tool(self, tool_name: str, args: dict[str, Any]) -> Any:
        raise ServerError(f"{self.name!r} is a recording proxy: the upstream answers over MCP")

    def call_log(self) -> list[MCPCall]:
        """Every answered `tools/call` so far, in answer order, redacted."""
        self._builder.see_new()
        return redacted_calls(self.tap, self.redactor)

    def universe_tools(self) -> list[UniverseTool]:
        """The live tool list (redacted), sequence mode where identical calls got new answers."""
        calls = self.call_log()
        listed = {name: self.redactor.apply(tool) for name, tool in self.tap.tools.items()}
        tools, _ = universe_tools(listed, calls)
        return tools

    def recording(self, *, with_log: bool = True, find_secrets: bool = True) -> Recording:
        """The universe (and capture log lines) as they would be written now; `secrets_left`
        unless `find_secrets` is false."""
        return self._builder.build(
            source=self.source,
            started_at=self.started_at,
            with_log=with_log,
            find_secrets=find_secrets,
        )

    def save(
        self, path: str | os.PathLike[str], *, log: str | os.PathLike[str] | None = None
    ) -> Recording:
        """Write the universe (and the capture log) atomically; redacted before any byte."""
        recording = self.recording(with_log=log is not None)
        save_recording(recording, path, log=log)
        return recording

    def link(self) -> Link:
        """A message-level connection to the upstream that feeds this proxy's recording (not
        started: run it with `nursery.start(link.run)`). `wt verify` speaks to the upstream
        through it, so what it sees is recorded and redacted exactly as `wt record` would."""
        if isinstance(self.upstream, str):
            # Here, not at the top: the HTTP link and front load the MCP SDK (its header rules),
            # which a stdio upstream behind `wt record --stdio` never needs (see `_shapes`).
            from .http_link import HTTPLink

            return HTTPLink(
                self.name,
                self.upstream,
                tap=self.tap,
                timeout_s=self.timeout_s,
                printable=self.printable,
            )
        return StdioLink(self.name, self.upstream, tap=self.tap, timeout_s=self.timeout_s)

    async def serve(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        allowed_hosts: Sequence[str] = (),
        allowed_origins: Sequence[str] = (),
        task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve the agent over HTTP at `/mcp` until stopped; report the URL once bound (Host
        and Origin checked as `MCPServer.serve` checks them)."""
        if self._serving is not None:
            raise ServerError(f"server {self.name!r} is already started")
        from .http_front import LinkApp, ReverseProxyApp

        allowed = AllowedNames.parse(allowed_hosts, allowed_origins)
        # The HTTP stack loads with the first proxy that serves HTTP, not with stdio.
        from ..mcp._http_serving import listen, serve_asgi

        sockets = listen(host, port, name=self.name)
        self._finished = trio.Event()
        try:
            with unwrap_single_error():
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._report)
                    app: ReverseProxyApp | LinkApp
                    if isinstance(self.upstream, str):
                        app = ReverseProxyApp(
                            self.upstream,
                            tap=self.tap,
                            timeout_s=self.timeout_s,
                            printable=self.printable,
                        )
                        await nursery.start(app.run)
                    else:
                        link = self.link()
                        await nursery.start(self._run_link, link)
                        app = LinkApp(link)
                        await nursery.start(app.run)
                    serving: HTTPServing = await nursery.start(
                        partial(serve_asgi, app, host=host, sockets=sockets, allowed=allowed)
                    )
                    self._serving = serving
                    task_status.started(serving.url)
                    await serving.finished.wait()
                    # In-flight requests are finished: the upstream can go now.
                    nursery.cancel_scope.cancel()
        finally:
            for sock in sockets.insecure_sockets:
                sock.close()  # when the upstream failed before serving began
            self._serving = None
            self._finished.set()

    async def _run_link(
        self, link: Link, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        try:
            await link.run(task_status=task_status)
        except UpstreamFailure as exc:
            raise ServerError(f"upstream {self.name!r} {self.printable(str(exc))}") from None

    async def _report(self) -> None:
        async for call in self._reports_out:
            self.redactor.see_call(call.args, call.result)
            redacted = MCPCall(
                tool_name=call.tool_name,
                args=self.redactor.apply(call.args),
                result=self.redactor.apply(call.result),
                upstream=call.upstream,
                is_error=call.is_error,
                started_at=call.started_at,
                duration_ms=call.duration_ms,
            )
            if self.exporter is not None:
                self.exporter(redacted, trace_context.take(call))
            if self.reporter is not None:
                await self.reporter(redacted)

    async def stop(self, *, grace_s: float = 2.0) -> None:
        """Stop serving the agent and the upstream: gracefully, then hard after `grace_s`."""
        serving = self._serving
        if serving is None:
            return
        await serving.stop(grace_s=grace_s)
        await self._finished.wait()  # the upstream is cancelled once serving has ended

    async def serve_stdio(self) -> None:
        """Speak stdio to the agent (on our stdin/stdout) until it closes stdin."""
        stdin = trio.lowlevel.FdStream(os.dup(0))
        stdout = trio.lowlevel.FdStream(os.dup(1))
        async with stdin, stdout:
            await self.serve_stdio_on(stdin, stdout)

    async def serve_stdio_on(
        self, stdin: trio.abc.ReceiveStream, stdout: trio.abc.SendStream
    ) -> None:
        link = self.link()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._report)
            await nursery.start(self._run_link, link)
            await serve_link_stdio(link, stdin, stdout)
            nursery.cancel_scope.cancel()
