"""The router's bookkeeping without its Trio channel (`RouterLedger`): shared by the router
actor and `wt serve --stdio`, which has no Trio router and starts without Trio at all."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..calls import MCPCall
from .events import call_events
from .sinks import CallSink, Sink

__all__ = ["RouterLedger", "ScenarioLog"]


@dataclass
class ScenarioLog:
    """What the router knows about one scenario."""

    calls: list[MCPCall] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)

    @property
    def divergences(self) -> int:
        return sum(1 for call in self.calls if call.divergence is not None)


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
