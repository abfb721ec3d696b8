"""The router actor: one task that owns call logs and events.

Servers report every call over one bounded memory channel (a full channel makes the server wait:
backpressure, never loss). The router appends each call to its scenario's log in arrival order,
turns it into events, numbers every event (`seq`) and publishes it to every sink.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import trio

from .. import trace_context
from ..calls import MCPCall
from .events import make_event
from .router_ledger import RouterLedger, ScenarioLog
from .sinks import Sink

__all__ = ["Router", "RouterLedger", "ScenarioLog"]

CHANNEL_SIZE = 1024


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
