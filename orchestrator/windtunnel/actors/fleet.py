"""The supervisor: a fleet of server actors, one per scenario-upstream pair, and the router."""

from __future__ import annotations

import resource
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import structlog
import trio

from ..calls import MCPCall
from ..errors import ServerError
from ..mcp.spi import MCPServer
from .router import Router, ScenarioLog
from .sinks import Sink
from .websocket_feed import WebSocketFeed

__all__ = ["Fleet", "ScenarioRun", "open_fleet", "raise_open_file_limit"]

logger = structlog.get_logger("windtunnel")
STOP_GRACE_S = 2.0
CLEANUP_DEADLINE_S = 10.0


def raise_open_file_limit() -> int:
    """Raise the soft open-file limit to the hard one: every server is a socket or more."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            return soft
        return hard
    return soft


@dataclass
class ScenarioRun:
    """One scenario's servers while they run: URLs, and the merged call log after."""

    scenario: str
    servers: dict[str, MCPServer]
    urls: dict[str, str] = field(default_factory=dict)
    log: ScenarioLog = field(default_factory=ScenarioLog)

    def call_log(self) -> list[MCPCall]:
        """Every call of every upstream, in arrival order, each tagged with its upstream."""
        return list(self.log.calls)

    @property
    def faults(self) -> list[str]:
        return list(self.log.faults)


class Fleet:
    """Starts scenario servers under supervision and routes their calls and events."""

    def __init__(self, router: Router, *, host: str, feed: WebSocketFeed | None) -> None:
        self.router = router
        self.host = host
        self.feed = feed
        self.running: dict[str, ScenarioRun] = {}

    @asynccontextmanager
    async def scenario(
        self,
        scenario: str,
        servers: Mapping[str, MCPServer],
        *,
        ports: Mapping[str, int] | None = None,
    ) -> AsyncIterator[ScenarioRun]:
        """Serve `servers` for the body of the `async with`; stop, drain and report after.

        A server that cannot start raises `ServerError` here (after stopping its siblings).
        """
        if scenario in self.running:
            raise ServerError(f"scenario {scenario!r} is already running in this fleet")
        router = self.router
        run = ScenarioRun(scenario, dict(servers), log=router.log(scenario))
        self.running[scenario] = run
        started: list[tuple[str, MCPServer]] = []
        error: str | None = None
        await router.emit("scenario_started", scenario=scenario, upstreams=sorted(servers))
        try:
            async with trio.open_nursery() as nursery:
                try:
                    for upstream, server in servers.items():
                        server.rename(upstream)
                        server.reporter = router.reporter(scenario, upstream)
                        server.log_events = False  # the router emits them, with pack and scenario
                        port = (ports or {}).get(upstream, 0)
                        try:
                            url = await server.start(nursery, host=self.host, port=port)
                        except ServerError as exc:
                            await router.emit(
                                "server_failed",
                                level="error",
                                scenario=scenario,
                                upstream=upstream,
                                error=str(exc),
                            )
                            raise
                        started.append((upstream, server))
                        run.urls[upstream] = url
                        await router.emit(
                            "server_started", scenario=scenario, upstream=upstream, url=url
                        )
                    yield run
                except BaseException as exc:
                    error = _describe(exc)
                    raise
                finally:
                    with trio.move_on_after(CLEANUP_DEADLINE_S) as cleanup:
                        cleanup.shield = True
                        await self._stop_all(scenario, started)
                    nursery.cancel_scope.cancel()
        finally:
            with trio.move_on_after(CLEANUP_DEADLINE_S) as cleanup:
                cleanup.shield = True
                await router.flush()
                await router.emit(
                    "scenario_finished",
                    scenario=scenario,
                    calls=len(run.log.calls),
                    divergences=run.log.divergences,
                    faults=run.log.faults,
                    error=error,
                )
            del self.running[scenario]

    async def _stop_all(self, scenario: str, started: list[tuple[str, MCPServer]]) -> None:
        async def stop(upstream: str, server: MCPServer) -> None:
            await server.stop(grace_s=STOP_GRACE_S)
            await self.router.emit(
                "server_stopped", scenario=scenario, upstream=upstream, calls=len(server.call_log())
            )

        async with trio.open_nursery() as nursery:
            for upstream, server in started:
                nursery.start_soon(stop, upstream, server)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, trio.Cancelled):
        return "cancelled"
    if isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        return _describe(exc.exceptions[0])
    return f"{type(exc).__name__}: {exc}"


@asynccontextmanager
async def open_fleet(
    *,
    pack: str | None = None,
    sinks: list[Sink] | None = None,
    host: str = "127.0.0.1",
    feed_port: int | None = None,
    call_events: bool = False,
) -> AsyncIterator[Fleet]:
    """Run a router (and, with `feed_port`, a WebSocket feed) for the body of the block.

    On exit every event reached every sink; the feed is closed; nothing keeps running.
    """
    raise_open_file_limit()
    all_sinks: list[Sink] = list(sinks or [])
    feed = WebSocketFeed(host=host, port=feed_port) if feed_port is not None else None
    if feed is not None:
        all_sinks.append(feed)
    router = Router(pack=pack, sinks=all_sinks, call_events=call_events)
    async with trio.open_nursery() as nursery:
        await nursery.start(router.run)
        feed_url: Any = None
        if feed is not None:
            feed_url = await nursery.start(feed.run)
        await router.emit("fleet_started", feed_url=feed_url)
        fleet = Fleet(router, host=host, feed=feed)
        try:
            yield fleet
        finally:
            with trio.move_on_after(CLEANUP_DEADLINE_S) as cleanup:
                cleanup.shield = True
                dropped = feed.total_dropped if feed is not None else 0
                await router.emit(
                    "fleet_stopped", events=sum(router.counts.values()) + 1, dropped=dropped
                )
                await router.flush()
                await router.close()
            nursery.cancel_scope.cancel()
