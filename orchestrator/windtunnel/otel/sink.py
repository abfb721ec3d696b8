"""`OtelSink`: the fleet's events, calls and scored units, exported over OTLP.

A sink like the others (`actors.sinks`), fed by the router: it never blocks it. It takes

- each call `wt record` recorded (`publish_live_call`): a server span, tier `live`;
- each call (`publish_call`): a server span with the times the call log recorded, and a log
  record per divergence or fault event the call produced, linked to that span;
- `scenario_started` (`publish`): opens the unit's span, when units are exported (`wt run`);
- each scored unit (`publish_unit`): the unit span's verdict and one `gen_ai.evaluation.result`
  per policy and scorer; then the span ends.

A unit's trace context exists from the first time it is asked for (`traceparent`, before its
agent starts, or `scenario_started`): the agent is handed it as `TRACEPARENT`, and its own spans
(and through the MCP `_meta`, the call spans) sit in one trace with the unit's.
"""

from __future__ import annotations

import random
import time
from typing import Any

from ..calls import MCPCall
from .config import OtelConfig
from .conventions import (
    call_span,
    evaluation_records,
    event_record,
    request_span,
    unit_attributes,
    unit_outcome,
    unit_span_name,
)
from .export import CallRecord, EventRecord, OtlpExport, UnitEnd, UnitStart

__all__ = ["OtelSink"]

CLOSE_DEADLINE_S = 5.0
"""How long a stopping run waits for its last export; a collector that is down costs no more."""
_RECORDED_EVENTS = frozenset({"universe_divergence", "server_fault", "fault_injected"})


class OtelSink:
    """Create it when `otel.config` says export is on; hand it to the fleet; `close()` after."""

    def __init__(self, config: OtelConfig, *, units: bool, pack: str | None = None) -> None:
        self.config = config
        self.pack = pack
        self.units = units
        """Whether work units get spans (`wt run`); `wt serve`'s calls are spans of their own
        (or their agent's), with no unit around them."""
        self.export = OtlpExport(config)
        self._ids: dict[str, tuple[int, int]] = {}
        self._started: set[str] = set()

    @property
    def total_dropped(self) -> int:
        return self.export.dropped

    def _unit_ids(self, unit_id: str) -> tuple[int, int]:
        ids = self._ids.get(unit_id)
        if ids is None:
            ids = (random.getrandbits(128) or 1, random.getrandbits(64) or 1)
            self._ids[unit_id] = ids
        return ids

    def traceparent(self, unit_id: str) -> str | None:
        if not self.units or self.config.traces_endpoint is None:
            return None
        trace_id, span_id = self._unit_ids(unit_id)
        return f"00-{trace_id:032x}-{span_id:016x}-01"

    def publish(self, event: dict[str, Any]) -> None:
        if not self.units or event["event"] != "scenario_started":
            return
        unit_id = event["unit_id"]
        trace_id, span_id = self._unit_ids(unit_id)
        self._started.add(unit_id)
        self.export.offer(
            UnitStart(
                unit_id,
                unit_span_name(event["scenario"]),
                unit_attributes(
                    pack=event["pack"],
                    scenario=event["scenario"],
                    unit_id=unit_id,
                    upstreams=event["upstreams"],
                ),
                time.time_ns(),
                trace_id,
                span_id,
            )
        )

    def publish_call(
        self,
        call: MCPCall,
        *,
        unit_id: str,
        scenario: str,
        upstream: str,
        events: list[dict[str, Any]],
        trace_parent: str | None,
    ) -> None:
        span = call_span(
            call,
            upstream=upstream,
            scenario=scenario,
            unit_id=unit_id,
            pack=self.pack,
            capture_content=self.config.capture_content,
        )
        records = []
        for event in events:
            if event["event"] in _RECORDED_EVENTS:
                attributes, body = event_record(event)
                records.append(
                    EventRecord(event["event"], event["level"], attributes, body, span.end_ns)
                )
        self.export.offer(CallRecord(unit_id, span, trace_parent, records))

    def publish_live_call(self, call: MCPCall, *, upstream: str, trace_parent: str | None) -> None:
        """A call `wt record` forwarded to its live upstream and recorded: a server span with
        tier `live` (a recording has no divergence to report), under the agent's span when its
        request carried one."""
        span = call_span(
            call,
            upstream=upstream,
            scenario=self.pack or "record",
            unit_id=self.pack or "record",
            pack=self.pack,
            capture_content=self.config.capture_content,
            tier="live",
        )
        self.export.offer(CallRecord(self.pack or "record", span, trace_parent, []))

    def publish_request(
        self,
        method: str,
        *,
        upstream: str,
        start_ns: int,
        end_ns: int,
        trace_parent: str | None,
        error: str | None,
    ) -> None:
        """A request answered without a call record (`initialize`, `tools/list`, ...), from any
        thread: a server span of its own, under the agent's span when it carried one."""
        span = request_span(
            method, upstream=upstream, pack=self.pack, start_ns=start_ns, end_ns=end_ns, error=error
        )
        self.export.offer(CallRecord("", span, trace_parent, []))

    def publish_unit(self, trace: Any) -> None:
        """A scored unit (`runner.trace.Trace`): its span's verdict and evaluations; it ends."""
        self._ids.pop(trace.unit_id, None)
        if trace.unit_id not in self._started:
            return
        self._started.discard(trace.unit_id)
        end_ns = int((trace.started_at + trace.duration_s) * 1e9)
        self.export.offer(
            UnitEnd(
                trace.unit_id,
                end_ns,
                unit_outcome(trace),
                f"{trace.status}: {trace.error}" if trace.error is not None else None,
                evaluation_records(trace),
            )
        )

    def close(self, deadline_s: float = CLOSE_DEADLINE_S) -> None:
        self.export.close(deadline_s)
