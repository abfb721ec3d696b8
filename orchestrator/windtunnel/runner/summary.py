"""`Summary`: the aggregates of a run, as written to `summary.json`.

Counts per status, divergences, policy and scorer failures, durations, and per scenario the
pass rate with pass@k and pass^k for every k from 1 to the number of runs (see `repeats`).
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from .repeats import pass_at_k, pass_hat_k
from .trace import Trace

__all__ = ["SUMMARY_FORMAT_VERSION", "Durations", "ScenarioSummary", "Summary", "summarize"]

SUMMARY_FORMAT_VERSION = 1


class Durations(msgspec.Struct, kw_only=True):
    """Seconds spent by units: summed, mean and longest."""

    total: float = 0.0
    mean: float = 0.0
    max: float = 0.0


def _durations(traces: list[Trace]) -> Durations:
    if not traces:
        return Durations()
    values = [t.duration_s for t in traces]
    return Durations(total=sum(values), mean=sum(values) / len(values), max=max(values))


class ScenarioSummary(msgspec.Struct, kw_only=True):
    """One scenario over its repeats. `pass_at_k` / `pass_hat_k` are keyed by k (as text)."""

    runs: int
    passed: int
    failed: int
    errors: int
    pass_rate: float
    pass_at_k: dict[str, float]
    pass_hat_k: dict[str, float]
    all_passed: bool
    any_passed: bool
    divergences: int
    durations: Durations


class Summary(msgspec.Struct, kw_only=True):
    """A whole run. `ok` is what `wt run` gates its exit code on."""

    pack: str
    total: int
    passed: int
    failed: int
    errors: int
    ok: bool
    divergences: int
    policy_failures: int
    scorer_failures: int
    durations: Durations
    wall_s: float
    started_at: float
    scenarios: dict[str, ScenarioSummary]
    windtunnel_summary: int = SUMMARY_FORMAT_VERSION


def _scenario_summary(traces: list[Trace]) -> ScenarioSummary:
    n = len(traces)
    passed = sum(1 for t in traces if t.status == "passed")
    errors = sum(1 for t in traces if t.status == "error")
    ks = range(1, n + 1)
    return ScenarioSummary(
        runs=n,
        passed=passed,
        failed=n - passed - errors,
        errors=errors,
        pass_rate=passed / n,
        pass_at_k={str(k): pass_at_k(traces, k) for k in ks},
        pass_hat_k={str(k): pass_hat_k(traces, k) for k in ks},
        all_passed=passed == n,
        any_passed=passed > 0,
        divergences=sum(t.divergence_count for t in traces),
        durations=_durations(traces),
    )


def summarize(traces: Iterable[Trace], *, pack: str = "windtunnel") -> Summary:
    """Aggregate finished traces (each unit once; scenarios in first-seen order)."""
    units = list(traces)
    by_scenario: dict[str, list[Trace]] = {}
    for trace in units:
        by_scenario.setdefault(trace.scenario, []).append(trace)
    passed = sum(1 for t in units if t.status == "passed")
    errors = sum(1 for t in units if t.status == "error")
    starts = [t.started_at for t in units if t.started_at]
    ends = [t.started_at + t.duration_s for t in units if t.started_at]
    return Summary(
        pack=pack,
        total=len(units),
        passed=passed,
        failed=len(units) - passed - errors,
        errors=errors,
        ok=passed == len(units),
        divergences=sum(t.divergence_count for t in units),
        policy_failures=sum(1 for t in units for v in t.verdicts if not v.passed),
        scorer_failures=sum(1 for t in units for s in t.scores if not s.passed),
        durations=_durations(units),
        wall_s=(max(ends) - min(starts)) if starts else 0.0,
        started_at=min(starts) if starts else 0.0,
        scenarios={name: _scenario_summary(group) for name, group in by_scenario.items()},
    )
