"""`wt serve --stdio`'s events: the schema, `seq` and lifecycle events of `wt serve` over HTTP.

Over HTTP a fleet's router numbers events and emits the lifecycle around the servers. Over stdio
there is one server and no router task: a call is told from the thread that wrote its answer
(`RecordedMCPServer.add_listener`), so one lock orders calls and lifecycle events, and a
`RouterLedger` numbers them exactly as the router does. The sequence is the same as over HTTP:
`fleet_started`, `scenario_started`, `server_started` (`url` null: there is no URL), the calls,
then `server_stopped`, `scenario_finished`, `fleet_stopped`.
"""

from __future__ import annotations

import threading
from typing import Any

from .. import trace_context
from ..calls import MCPCall
from .events import make_event
from .router_ledger import RouterLedger
from .sinks import LossySink, Sink

__all__ = ["StdioEvents"]

PACK = "serve"
SCENARIO = "serve"
"""What `wt serve` names its pack, scenario and unit, over HTTP and stdio alike."""


class StdioEvents:
    """Events of one `wt serve --stdio` server, to `sinks`: `started()`, `call` per call (any
    thread), `stopped()`."""

    def __init__(self, sinks: list[Sink], *, upstream: str) -> None:
        self.upstream = upstream
        self.ledger = RouterLedger(pack=PACK, sinks=sinks, call_events=True)
        self._lock = threading.Lock()

    def _emit(self, name: str, **fields: Any) -> None:
        with self._lock:
            self.ledger.publish(make_event(name, pack=PACK, **fields))

    def _emit_unit(self, name: str, **fields: Any) -> None:
        self._emit(name, scenario=SCENARIO, unit_id=SCENARIO, **fields)

    def started(self) -> None:
        self._emit("fleet_started", feed_url=None)
        self._emit_unit("scenario_started", upstreams=[self.upstream])
        self._emit_unit("server_started", upstream=self.upstream, url=None)

    def call(self, call: MCPCall) -> None:
        """A call listener: the call's events (`tool_call`, divergence, fault), numbered."""
        # Told after the answer was written, maybe from another thread: the request's
        # `traceparent` was noted against the call when it was answered.
        parent = trace_context.take(call) if trace_context.capturing else None
        with self._lock:
            self.ledger.route_call(SCENARIO, SCENARIO, self.upstream, call, parent)

    def stopped(self, *, error: str | None) -> None:
        log = self.ledger.log(SCENARIO)
        self._emit_unit("server_stopped", upstream=self.upstream, calls=len(log.calls))
        self._emit_unit(
            "scenario_finished",
            calls=len(log.calls),
            divergences=log.divergences,
            faults=list(log.faults),
            error=error,
        )
        with self._lock:
            dropped = sum(
                sink.total_dropped for sink in self.ledger.sinks if isinstance(sink, LossySink)
            )
            events = sum(self.ledger.counts.values()) + 1
        self._emit("fleet_stopped", events=events, dropped=dropped)
