"""The router actor: one task that owns call logs and events.

Servers report every call over one bounded memory channel (a full channel makes the server wait:
backpressure, never loss). The router appends each call to its scenario's log in arrival order,
turns it into events, numbers every event (`seq`) and publishes it to every sink.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import trio

from .. import trace_context
from ..calls import MCPCall
from .events import call_events, make_event
from .sinks import CallSink, Sink

__all__ = ["Router", "RouterLedger", "ScenarioLog"]

CHANNEL_SIZE = 1024


@dataclass
class ScenarioLog:
    """What the router knows about one scenario."""

    calls: list[MCPCall] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)

    @property
    def divergences(self) -> int:
        return sum(1 for call in self.calls if call.divergence is not None)


@dataclass(frozen=True)
class _Call:
    unit_id: str
    scenario: str
    upstream: str
    call: MCPCall
    trace_parent: str | None = None


@dataclass(frozen=True)
class _Flush:
    done: trio.Event


class RouterLedger:
    """The router's bookkeeping without its channel: call logs per unit, and events numbered
    (`seq`, gap-free) and handed to every sink. One owner at a time: the router's task, or
    `wt serve --stdio`, which has no Trio router and calls it under a lock."""

    def __init__(
        self, *, pack: str | None = None, sinks: list[Sink] | None = None, call_events: bool = False
    ) -> None:
        self.pack = pack
        self.sinks: list[Sink] = list(sinks or [])
        self.call_sinks = [sink for sink in self.sinks if isinstance(sink, CallSink)]
        self.call_events = call_events
        self.scenarios: dict[str, ScenarioLog] = {}
        self.counts: Counter[str] = Counter()
        self._seq = 0

    def log(self, unit_id: str) -> ScenarioLog:
        return self.scenarios.setdefault(unit_id, ScenarioLog())

    def route_call(
        self,
        unit_id: str,
        scenario: str,
        upstream: str,
        call: MCPCall,
        trace_parent: str | None = None,
    ) -> None:
        """Append `call` to the log of `unit_id` and publish the events it produces (and the
        call itself, to the sinks that take calls)."""
        log = self.log(unit_id)
        log.calls.append(call)
        fault = call.extra.get("fault")
        if fault is not None:
            log.faults.append(f"{upstream}: {fault}")
        events = call_events(
            call,
            pack=self.pack,
            scenario=scenario,
            unit_id=unit_id,
            upstream=upstream,
            with_calls=self.call_events,
        )
        for event in events:
            self.publish(event)
        for sink in self.call_sinks:
            sink.publish_call(
                call,
                unit_id=unit_id,
                scenario=scenario,
                upstream=upstream,
                events=events,
                trace_parent=trace_parent,
            )

    def publish(self, event: dict[str, Any]) -> None:
        """Number the event and hand it to every sink (sinks never block)."""
        self._seq += 1
        event["seq"] = self._seq
        self.counts[event["event"]] += 1
        for sink in self.sinks:
            sink.publish(event)


class Router(RouterLedger):
    """Create it, run `router.run` in a nursery, hand `reporter(...)` to servers, `close()`."""

    def __init__(
        self, *, pack: str | None = None, sinks: list[Sink] | None = None, call_events: bool = False
    ) -> None:
        super().__init__(pack=pack, sinks=sinks, call_events=call_events)
        self._send, self._receive = trio.open_memory_channel[_Call | _Flush | dict[str, Any]](
            CHANNEL_SIZE
        )

    def reporter(
        self, unit_id: str, upstream: str, *, scenario: str | None = None
    ) -> Callable[[MCPCall], Awaitable[None]]:
        """The coroutine a server awaits with each call, before it answers the call.

        Calls go to the log of `unit_id`; their events name both the unit and its `scenario`
        (the unit id itself when no scenario name is given).
        """
        send = self._send
        name = scenario if scenario is not None else unit_id

        async def report(call: MCPCall) -> None:
            # Still in the task that answered the call: its request's `traceparent`, if any.
            parent = trace_context.take(call) if trace_context.capturing else None
            message = _Call(unit_id, name, upstream, call, parent)
            # Queued without a scheduler pass when there is room: the answer then leaves
            # before the router handles the call, rather than after it 1 time in 2. A full
            # channel still makes the server wait (backpressure).
            try:
                send.send_nowait(message)
            except trio.WouldBlock:
                await send.send(message)

        return report

    async def emit(self, name: str, *, level: str = "info", **fields: Any) -> None:
        """Queue a lifecycle event behind every call already reported."""
        await self._send.send(make_event(name, level=level, pack=self.pack, **fields))

    async def flush(self) -> None:
        """Return once everything sent before this call has been published."""
        done = trio.Event()
        await self._send.send(_Flush(done))
        await done.wait()

    async def close(self) -> None:
        await self._send.aclose()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Route until `close()`. Shielded: a cancelled fleet still drains every event."""
        task_status.started()
        with trio.CancelScope(shield=True):
            await self._drain()

    async def _drain(self) -> None:
        async with self._receive:
            async for message in self._receive:
                self._handle(message)
                # Then whatever else is queued, in one turn: `receive` alone takes a scheduler
                # pass per message, and servers queue calls without waiting for one.
                while True:
                    try:
                        message = self._receive.receive_nowait()
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                    self._handle(message)

    def _handle(self, message: _Call | _Flush | dict[str, Any]) -> None:
        if isinstance(message, _Call):
            self.route_call(
                message.unit_id,
                message.scenario,
                message.upstream,
                message.call,
                message.trace_parent,
            )
        elif isinstance(message, _Flush):
            message.done.set()
        else:
            self.publish(message)
