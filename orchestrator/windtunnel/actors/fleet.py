"""The supervisor: a fleet of server actors, one per scenario-upstream pair, and the router."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import structlog
import trio

from .._groups import unwrap_single_error
from ..calls import MCPCall
from ..errors import ServerError
from ..fd_limit import fd_hint, raise_open_file_limit
from ..mcp.spi import MCPServer
from ..trusted_hosts import AllowedNames
from .router import Router, ScenarioLog
from .sinks import LossySink, Sink, UnitSink
from .websocket_feed import SUBSCRIBER_BUFFER, WebSocketFeed

__all__ = ["Fleet", "ScenarioRun", "open_fleet", "raise_open_file_limit"]

logger = structlog.get_logger("windtunnel")
STOP_GRACE_S = 2.0
CLEANUP_DEADLINE_S = 10.0


@dataclass
class ScenarioRun:
    """One unit's servers while they run: URLs, and the merged call log after.

    `scenario` is the key the fleet knows the run by (the unit id in a pack run);
    `scenario_name` is what events call it.
    """

    scenario: str
    servers: dict[str, MCPServer]
    urls: dict[str, str] = field(default_factory=dict)
    log: ScenarioLog = field(default_factory=ScenarioLog)
    failure: ServerError | None = None
    body: trio.CancelScope = field(default_factory=trio.CancelScope)
    scenario_name: str = ""

    def call_log(self) -> list[MCPCall]:
        """Every call of every upstream, in arrival order, each tagged with its upstream."""
        return list(self.log.calls)

    @property
    def faults(self) -> list[str]:
        return list(self.log.faults)

    @property
    def where(self) -> dict[str, str]:
        """The `scenario` and `unit_id` fields of this run's events."""
        return {"scenario": self.scenario_name or self.scenario, "unit_id": self.scenario}


class Fleet:
    """Starts scenario servers under supervision and routes their calls and events.

    Server actors run in the fleet's own nursery, each inside a supervising task that never lets
    an exception out: a server that fails records the failure on its scenario and cancels that
    scenario's body, which then raises `ServerError` with the reason. Nothing reaches the fleet or
    another scenario.
    """

    def __init__(
        self,
        router: Router,
        nursery: trio.Nursery,
        *,
        host: str,
        feed: WebSocketFeed | None,
        allowed_hosts: Sequence[str] = (),
        allowed_origins: Sequence[str] = (),
    ) -> None:
        self.router = router
        self.host = host
        self.allowed_hosts = allowed_hosts
        self.allowed_origins = allowed_origins
        self.feed = feed
        self.running: dict[str, ScenarioRun] = {}
        self._nursery = nursery

    def traceparent(self, unit_id: str) -> str | None:
        """The W3C trace context a unit's agent runs in, when a sink exports traces (OTLP)."""
        for sink in self.router.sinks:
            if isinstance(sink, UnitSink):
                return sink.traceparent(unit_id)
        return None

    def unit_scored(self, trace: Any) -> None:
        """Hand a scored unit (`runner.trace.Trace`) to the sinks that take units."""
        for sink in self.router.sinks:
            if isinstance(sink, UnitSink):
                sink.publish_unit(trace)

    @asynccontextmanager
    async def scenario(
        self,
        unit_id: str,
        servers: Mapping[str, MCPServer],
        *,
        scenario_name: str | None = None,
        ports: Mapping[str, int] | None = None,
    ) -> AsyncIterator[ScenarioRun]:
        """Serve `servers` for the body of the `async with`; stop, drain and report after.

        `unit_id` names this run (`name#repeat` in a pack run) and must be unique while it runs;
        events carry it as `unit_id` and `scenario_name` (default: the unit id) as `scenario`.
        A server that cannot start raises `ServerError` here, after its siblings are stopped; one
        that fails while serving cancels the body, which then raises `ServerError`.
        """
        if unit_id in self.running:
            raise ServerError(f"scenario {unit_id!r} is already running in this fleet")
        router = self.router
        run = ScenarioRun(
            unit_id, dict(servers), log=router.log(unit_id), scenario_name=scenario_name or ""
        )
        self.running[unit_id] = run
        started: list[tuple[str, MCPServer]] = []
        error: str | None = None
        await router.emit("scenario_started", **run.where, upstreams=sorted(servers))
        try:
            for upstream, server in servers.items():
                server.rename(upstream)
                server.reporter = router.reporter(unit_id, upstream, scenario=run.where["scenario"])
                server.log_events = False  # the router emits them, with pack and scenario
                port = (ports or {}).get(upstream, 0)
                url = await self._nursery.start(self._supervise, run, upstream, server, port)
                started.append((upstream, server))
                run.urls[upstream] = url
                await router.emit("server_started", **run.where, upstream=upstream, url=url)
            with run.body:
                yield run
            if run.failure is not None:
                raise run.failure
        except BaseException as exc:
            error = _describe(exc)
            raise
        finally:
            with trio.move_on_after(CLEANUP_DEADLINE_S) as cleanup:
                cleanup.shield = True
                await self._stop_all(run, started)
                await router.flush()
                await router.emit(
                    "scenario_finished",
                    **run.where,
                    calls=len(run.log.calls),
                    divergences=run.log.divergences,
                    faults=run.log.faults,
                    error=error,
                )
            del self.running[unit_id]
            # The run keeps its own log; the router's reference would keep every unit's calls
            # for the fleet's lifetime (a pack's memory would grow with its units).
            router.scenarios.pop(unit_id, None)

    async def scenario_not_started(
        self, unit_id: str, upstreams: Sequence[str], error: str, *, scenario_name: str = ""
    ) -> None:
        """Report a unit that ended before `scenario` served anything (its universes failed to
        load, its agent could not be resolved): the same `scenario_started` and
        `scenario_finished` pair every unit has, the latter with the error, so an event
        consumer counting units sees every one end."""
        where = {"scenario": scenario_name or unit_id, "unit_id": unit_id}
        await self.router.emit("scenario_started", **where, upstreams=sorted(upstreams))
        await self.router.emit(
            "scenario_finished", **where, calls=0, divergences=0, faults=[], error=error
        )

    async def _supervise(
        self,
        run: ScenarioRun,
        upstream: str,
        server: MCPServer,
        port: int,
        *,
        task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """A server actor: errors before it is ready go to the starter, after, to its scenario."""
        ready = _ReadyFlag(task_status)
        try:
            # Named only when given: a server of the user's own that overrides `serve` with
            # the older signature still runs in a fleet that allows no other names.
            allowed: dict[str, Any] = {}
            if self.allowed_hosts:
                allowed["allowed_hosts"] = self.allowed_hosts
            if self.allowed_origins:
                allowed["allowed_origins"] = self.allowed_origins
            await server.serve(host=self.host, port=port, task_status=ready, **allowed)  # type: ignore[arg-type]
        except Exception as exc:
            failure = exc if isinstance(exc, ServerError) else None
            reason = str(exc) if failure else _describe(exc)
            await self.router.emit(
                "server_failed",
                level="error",
                **run.where,
                upstream=upstream,
                error=reason,
            )
            if not ready.is_set:
                raise ServerError(reason) from None
            run.failure = ServerError(f"upstream {upstream!r} failed while serving: {reason}")
            run.body.cancel()

    async def _stop_all(self, run: ScenarioRun, started: list[tuple[str, MCPServer]]) -> None:
        async def stop(upstream: str, server: MCPServer) -> None:
            await server.stop(grace_s=STOP_GRACE_S)
            await self.router.emit(
                "server_stopped", **run.where, upstream=upstream, calls=len(server.call_log())
            )

        async with trio.open_nursery() as nursery:
            for upstream, server in started:
                nursery.start_soon(stop, upstream, server)


class _ReadyFlag:
    """A task status that also remembers whether `started` was called."""

    def __init__(self, inner: trio.TaskStatus[str]) -> None:
        self.inner = inner
        self.is_set = False

    def started(self, value: str) -> None:
        self.is_set = True
        self.inner.started(value)


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
    feed_buffer: int = SUBSCRIBER_BUFFER,
    call_events: bool = False,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
) -> AsyncIterator[Fleet]:
    """Run a router (and, with `feed_port`, a WebSocket feed) for the body of the block.

    Every server and the feed bind `host` and answer the names and pages `allowed_hosts` and
    `allowed_origins` add to its own (`trusted_hosts`). On exit every event reached every sink;
    the feed is closed; nothing keeps running.
    """
    allowed = AllowedNames.parse(allowed_hosts, allowed_origins)  # a bad one: before any bind
    raise_open_file_limit()
    all_sinks: list[Sink] = list(sinks or [])
    feed = (
        WebSocketFeed(host=host, port=feed_port, buffer=feed_buffer, allowed=allowed)
        if feed_port is not None
        else None
    )
    if feed is not None:
        all_sinks.append(feed)
    router = Router(pack=pack, sinks=all_sinks, call_events=call_events)
    # The background tasks never raise, so a lone error in a group is the body's own.
    with unwrap_single_error():
        async with _open_fleet_nursery(
            router, feed, host, tuple(allowed_hosts), tuple(allowed_origins)
        ) as fleet:
            yield fleet


@asynccontextmanager
async def _open_fleet_nursery(
    router: Router,
    feed: WebSocketFeed | None,
    host: str,
    allowed_hosts: Sequence[str],
    allowed_origins: Sequence[str],
) -> AsyncIterator[Fleet]:
    async with trio.open_nursery() as nursery:
        await nursery.start(router.run)
        started = False
        try:
            # Inside the `try`: a feed that cannot start must still close the router, whose
            # shielded drain would otherwise keep this nursery open forever.
            feed_url: Any = None
            if feed is not None:
                feed_url = await _start_feed(nursery, feed)
            await router.emit("fleet_started", feed_url=feed_url)
            started = True
            yield Fleet(
                router,
                nursery,
                host=host,
                feed=feed,
                allowed_hosts=allowed_hosts,
                allowed_origins=allowed_origins,
            )
        finally:
            with trio.move_on_after(CLEANUP_DEADLINE_S) as cleanup:
                cleanup.shield = True
                # Counted before `fleet_stopped` itself is published: a sink that drops that
                # one too announces it in its own stream (`events_dropped`).
                dropped = sum(
                    sink.total_dropped for sink in router.sinks if isinstance(sink, LossySink)
                )
                if started:
                    await router.emit(
                        "fleet_stopped", events=sum(router.counts.values()) + 1, dropped=dropped
                    )
                await router.flush()
                await router.close()
                if feed is not None:
                    await feed.aclose()
            nursery.cancel_scope.cancel()


async def _start_feed(nursery: trio.Nursery, feed: WebSocketFeed) -> str:
    try:
        with unwrap_single_error():
            url: str = await nursery.start(feed.run)
    except OSError as exc:
        raise ServerError(
            f"the event feed cannot listen on {feed.host}:{feed.port}: {exc.strerror}"
            f"{fd_hint(exc.errno)}"
        ) from None
    return url
