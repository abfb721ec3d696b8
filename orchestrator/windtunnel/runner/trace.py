"""`Trace`: everything one scenario run left behind, and its divergence warnings.

A trace is data: the merged call log of every upstream, the `universe_divergence` warnings drawn
from it, the agent's final answer or error, and (after `scoring.evaluate`) the verdicts, scores
and status. `results.jsonl` rows and `traces/*.json` files are encoded traces.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, TypeAlias

import msgspec

from ..calls import MCPCall
from ..canonical import nested_deeper_than
from ..divergence import divergence_warning
from ..universe import Universe
from .universe_coverage import UpstreamCoverage

__all__ = [
    "MAX_VALUE_DEPTH",
    "TRACE_FORMAT_VERSION",
    "FaultCheck",
    "Score",
    "Status",
    "Trace",
    "Verdict",
    "divergent_calls",
    "drop_deep_values",
    "merge_call_logs",
    "undelivered_faults",
    "warnings_from_calls",
]

TRACE_FORMAT_VERSION = 1
Status: TypeAlias = Literal["passed", "failed", "error", "invalid"]
"""`invalid`: the unit ran, but a fault it declared was never injected, so what it was meant to
test did not happen (neither a pass nor a failure of the agent)."""


class Verdict(msgspec.Struct, frozen=True, kw_only=True):
    """A constraint-layer outcome: a policy passed or failed, and why."""

    name: str
    passed: bool
    reason: str


class FaultCheck(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A fault the unit declared (its id: its spelling, `charge=timeout`, unless it was given
    one) and how many of the unit's calls it was injected into: 0 makes the unit `invalid`.
    `note` says why it could not fire at all (no upstream declares its tool)."""

    fault: str
    injected: int = 0
    note: str | None = None


class Score(msgspec.Struct, frozen=True, kw_only=True):
    """A quality scorer's outcome: a value in [0, 1], passing when it reaches the threshold."""

    name: str
    value: float
    threshold: float
    passed: bool
    detail: str = ""


class Trace(msgspec.Struct, kw_only=True):
    """One run of one scenario (one work unit).

    `status` is `"error"` until `scoring.evaluate` has looked at the trace, so an unscored trace
    never reads as a pass. `trace_file` is set by the `RunWriter` (relative to the run dir).
    """

    unit_id: str
    scenario: str
    repeat: int = 0
    seed: int = 0
    task: str = ""
    mcp_calls: list[MCPCall] = msgspec.field(default_factory=list)
    warnings: list[dict[str, Any]] = msgspec.field(default_factory=list)
    output: str | None = None
    error: str | None = None
    status: Status = "error"
    started_at: float = 0.0
    duration_s: float = 0.0
    verdicts: list[Verdict] = msgspec.field(default_factory=list)
    scores: list[Score] = msgspec.field(default_factory=list)
    tags: list[str] = msgspec.field(default_factory=list)
    coverage: dict[str, UpstreamCoverage] = msgspec.field(default_factory=dict)
    faults: list[FaultCheck] = msgspec.field(default_factory=list)
    """The faults the unit declared, each with how often it was injected (`fault_checks`)."""
    faults_injected: int = 0
    """Calls answered with an injected fault, declared by the scenario or not (a server a Python
    pack built with its own faults): a results row has no call log to count them in."""
    trace_file: str | None = None
    call_count: int | None = None
    """Calls in the call log, recorded when written (a results row has no call log)."""
    trace_sha256: str | None = None
    """In a results row: the sha256 of the trace file as written, so `wt merge` can tell a
    deleted, swapped or edited file; None in the trace file itself."""
    windtunnel_trace: int = TRACE_FORMAT_VERSION

    @property
    def divergence_count(self) -> int:
        """Divergent calls; a results row has no call log, so its warnings count instead."""
        in_calls = sum(1 for call in self.mcp_calls if call.divergence is not None)
        in_warnings = sum(1 for w in self.warnings if w.get("event") == "universe_divergence")
        return max(in_calls, in_warnings)


def merge_call_logs(logs: Mapping[str, Sequence[MCPCall]]) -> list[MCPCall]:
    """One call log from several upstreams' logs, each call tagged with its upstream.

    Calls are ordered by `started_at`; ties (and untimed calls) keep the upstreams' order and each
    log's own order, so the merge is deterministic. A call with no `upstream` gets the mapping's
    key (on a copy; the servers' logs are not touched).
    """
    tagged: list[tuple[float, int, int, MCPCall]] = []
    for rank, (name, log) in enumerate(logs.items()):
        for position, call in enumerate(log):
            if call.upstream is None:
                call = msgspec.structs.replace(call, upstream=name)
            tagged.append((call.started_at, rank, position, call))
    tagged.sort(key=lambda item: item[:3])
    return [call for *_, call in tagged]


MAX_VALUE_DEPTH = 256
"""Deepest nesting of arrays and objects a trace keeps in a call's args, result or extra: every
report and policy walks values recursively, and one value past Python's stack must not take the
whole run down with it."""

TOO_DEEP = f"(a value nested deeper than {MAX_VALUE_DEPTH} levels, not kept)"


def drop_deep_values(calls: list[MCPCall]) -> str | None:
    """Replace args, results and extras nested past `MAX_VALUE_DEPTH` with `TOO_DEEP` (in place);
    return the reason to fail the unit with, naming the first such call, or None."""
    first: str | None = None
    for position, call in enumerate(calls, 1):
        deep = [
            name
            for name in ("args", "result", "extra")
            if nested_deeper_than(getattr(call, name), MAX_VALUE_DEPTH)
        ]
        if not deep:
            continue
        call.args = {"_windtunnel": TOO_DEEP} if "args" in deep else call.args
        call.result = TOO_DEEP if "result" in deep else call.result
        call.extra = {"_windtunnel": TOO_DEEP} if "extra" in deep else call.extra
        if first is None:
            first = (
                f"call {position} ({call.tool_name}) carries {' and '.join(deep)} nested deeper "
                f"than {MAX_VALUE_DEPTH} levels; the trace keeps a placeholder"
            )
    return first


def undelivered_faults(trace: Trace) -> list[str]:
    """Why a unit is `invalid`: one line per declared fault that was never injected."""
    return [
        f"fault {check.fault} was declared but never injected: "
        + (check.note or "no call of this unit was one it targets")
        for check in trace.faults
        if check.injected == 0
    ]


def divergent_calls(calls: Iterable[MCPCall]) -> list[tuple[int, MCPCall]]:
    """The calls that left the recording, with their 1-based position in the call log."""
    return [(n, call) for n, call in enumerate(calls, 1) if call.divergence is not None]


def warnings_from_calls(
    calls: Iterable[MCPCall],
    scenario: str | None,
    *,
    universes: Mapping[str, Universe] | None = None,
) -> list[dict[str, Any]]:
    """One `universe_divergence` worker warning per divergent call, in call-log order (with
    `universes`, `nearest` also carries the nearest recording's `args`)."""
    warnings: list[dict[str, Any]] = []
    for call in calls:
        universe = universes.get(call.upstream or "") if universes else None
        warning = divergence_warning(call, scenario, universe)
        if warning is not None:
            warnings.append(warning)
    return warnings
