"""The event schema: one JSON object per event, the same on every sink.

Every event has `event` (name), `seq` (per-fleet counter, gap-free), `timestamp` (ISO 8601, UTC),
`level`, `pack`, `scenario` (the scenario's name), `unit_id` (`name#repeat`, the run of it) and
`upstream` (null where they do not apply); `results.jsonl` names units the same way. Per event:

| event | level | extra fields |
|---|---|---|
| `fleet_started` / `fleet_stopped` | info | `feed_url` / `events`, `dropped` (by any sink) |
| `scenario_started` | info | `upstreams` |
| `scenario_finished` | info | `calls`, `divergences`, `faults`, `error` |
| `server_started` | info | `url` (null for `wt serve --stdio`) |
| `server_stopped` | info | `calls` |
| `server_failed` | error | `error` |
| `tool_call` | info | `tool`, `args`, `tier`, `recording`, `is_error`, `duration_ms`, `method`° |
| `universe_divergence` | warning | `tool`, `args`, `reason`, `policy`, `nearest`, `method`° |
| `server_fault` | error | `tool`, `error` |
| `fault_injected` | warning | `tool`, `fault` (`id`, `kind`, `target`, `call_number`, args) |
| `events_dropped` | warning | `dropped` (lines a slow reader missed: feed, stderr); no `seq` |
| `feed_subscribed` | info | `buffer`; sent only to the new subscriber, without `seq` |

° `method` only for a request other than `tools/call` (`resources/read`, `prompts/get`,
`completion/complete`), whose target (URI, prompt) is in `tool`.
"""

from __future__ import annotations

import time
from typing import Any

from ..calls import MCPCall
from ..faults.spec import FAULT_EXTRA_KEY

__all__ = ["EVENT_NAMES", "make_event", "utc_timestamp"]

EVENT_NAMES = (
    "fleet_started",
    "fleet_stopped",
    "scenario_started",
    "scenario_finished",
    "server_started",
    "server_stopped",
    "server_failed",
    "tool_call",
    "universe_divergence",
    "server_fault",
    "fault_injected",
    "events_dropped",
)


def make_event(
    name: str,
    *,
    level: str = "info",
    pack: str | None = None,
    scenario: str | None = None,
    unit_id: str | None = None,
    upstream: str | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """An event dict in the stable schema (`seq` is added by the router)."""
    return {
        "event": name,
        "timestamp": utc_timestamp(),
        "level": level,
        "pack": pack,
        "scenario": scenario,
        "unit_id": unit_id,
        "upstream": upstream,
        **fields,
    }


_second: tuple[int, str] = (-1, "")
"""The last second formatted: its events share everything up to the microseconds."""


def utc_timestamp() -> str:
    """Now, as ISO 8601 UTC with microseconds: `2026-12-01T23:30:32.748525Z`.

    The date and time of day are formatted once a second; per event that leaves a division and
    six digits (a fifth of `datetime.now(UTC).isoformat()`, which every call event paid).
    """
    global _second
    second, nanos = divmod(time.time_ns(), 1_000_000_000)
    cached_second, prefix = _second
    if second != cached_second:
        prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        _second = (second, prefix)  # one tuple: a thread sees an old pair or a new one
    return f"{prefix}.{nanos // 1000:06d}Z"


def call_events(
    call: MCPCall,
    *,
    pack: str | None,
    scenario: str,
    upstream: str,
    with_calls: bool,
    unit_id: str | None = None,
) -> list[dict[str, Any]]:
    """The events one call produces: `tool_call` (optional), divergence, fault."""
    where: dict[str, Any] = {
        "pack": pack,
        "scenario": scenario,
        "unit_id": unit_id,
        "upstream": upstream,
    }
    events = []
    if with_calls:
        match = call.extra.get("match")
        events.append(
            make_event(
                "tool_call",
                **where,
                tool=call.tool_name,
                args=call.args,
                tier=match["tier"] if match else "miss",
                recording=match["index"] if match else None,
                is_error=call.is_error,
                duration_ms=round(call.duration_ms, 3),
                # A request other than tools/call names its method (`tool` is its target).
                **({} if call.method == "tools/call" else {"method": call.method}),
            )
        )
    divergence = call.divergence
    if divergence is not None:
        events.append(make_event("universe_divergence", level="warning", **where, **divergence))
    fault = call.extra.get("fault")
    if fault is not None:
        events.append(
            make_event("server_fault", level="error", **where, tool=call.tool_name, error=fault)
        )
    injected = call.extra.get(FAULT_EXTRA_KEY)
    if injected is not None:
        events.append(
            make_event(
                "fault_injected", level="warning", **where, tool=call.tool_name, fault=injected
            )
        )
    return events
