"""`Summary`: the aggregates of a run, as written to `summary.json`.

Counts per status (passed, failed, errors, invalid), divergences, injected faults, policy and
scorer failures, durations, universe coverage, and per scenario the pass rate with pass@k and
pass^k for every k from 1 to the number of runs (see `repeats`). `SummaryBuilder` folds units
in one at a time, so a run of any size is summarized without holding its units.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import msgspec

from .repeats import PassCurve
from .trace import Trace
from .universe_coverage import CoverageTotals, ScenarioCoverage

__all__ = [
    "SUMMARY_FORMAT_VERSION",
    "Durations",
    "ScenarioSummary",
    "Summary",
    "SummaryBuilder",
    "status_counts",
    "summarize",
]

SUMMARY_FORMAT_VERSION = 1


class Durations(msgspec.Struct, kw_only=True):
    """Seconds spent by units: summed, mean and longest."""

    total: float = 0.0
    mean: float = 0.0
    max: float = 0.0


class ScenarioSummary(msgspec.Struct, kw_only=True):
    """One scenario over its repeats. `pass_at_k` / `pass_hat_k` are keyed by k (as text): a
    `PassCurve` computed on demand when built by `SummaryBuilder`, a dict when read from
    `summary.json`; `coverage` is keyed by upstream."""

    runs: int
    passed: int
    failed: int
    errors: int
    pass_rate: float
    pass_at_k: Mapping[str, float]
    pass_hat_k: Mapping[str, float]
    all_passed: bool
    any_passed: bool
    divergences: int
    durations: Durations
    coverage: dict[str, ScenarioCoverage] = msgspec.field(default_factory=dict)
    invalid: int = 0
    """Runs whose declared fault was never injected (neither passed, failed nor errors)."""
    faults_injected: int = 0


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
    coverage: dict[str, CoverageTotals] = msgspec.field(default_factory=dict)
    invalid: int = 0
    """Units whose declared fault was never injected: not a pass, so `ok` is false."""
    faults_injected: int = 0
    """Calls answered with an injected fault, over every unit."""
    windtunnel_summary: int = SUMMARY_FORMAT_VERSION


class _Counts:
    """Running totals over units: what a summary needs, without keeping the units."""

    def __init__(self) -> None:
        self.runs = 0
        self.passed = 0
        self.errors = 0
        self.invalid = 0
        self.faults_injected = 0
        self.divergences = 0
        self.duration_total = 0.0
        self.duration_max = 0.0

    def add(self, trace: Trace) -> None:
        self.runs += 1
        self.passed += trace.status == "passed"
        self.errors += trace.status == "error"
        self.invalid += trace.status == "invalid"
        self.faults_injected += trace.faults_injected
        self.divergences += trace.divergence_count
        self.duration_total += trace.duration_s
        self.duration_max = max(self.duration_max, trace.duration_s)

    @property
    def durations(self) -> Durations:
        if not self.runs:
            return Durations()
        total = self.duration_total
        return Durations(total=total, mean=total / self.runs, max=self.duration_max)


class _ScenarioCounts(_Counts):
    def __init__(self) -> None:
        super().__init__()
        self.coverage: dict[str, ScenarioCoverage] = {}

    def add(self, trace: Trace) -> None:
        super().add(trace)
        for upstream, unit in trace.coverage.items():
            self.coverage.setdefault(upstream, ScenarioCoverage()).add(unit)

    def summary(self) -> ScenarioSummary:
        n, passed = self.runs, self.passed
        return ScenarioSummary(
            runs=n,
            passed=passed,
            failed=n - passed - self.errors - self.invalid,
            errors=self.errors,
            invalid=self.invalid,
            faults_injected=self.faults_injected,
            pass_rate=passed / n,
            pass_at_k=PassCurve(n, passed, "at"),
            pass_hat_k=PassCurve(n, passed, "hat"),
            all_passed=passed == n,
            any_passed=passed > 0,
            divergences=self.divergences,
            durations=self.durations,
            coverage=self.coverage,
        )


class SummaryBuilder:
    """A summary built one unit at a time: memory grows with scenarios, never with units."""

    def __init__(self, pack: str = "windtunnel") -> None:
        self.pack = pack
        self._all = _Counts()
        self._scenarios: dict[str, _ScenarioCounts] = {}
        self._policy_failures = 0
        self._scorer_failures = 0
        self._start = 0.0
        self._end = 0.0

    def add(self, trace: Trace) -> None:
        """Count one finished unit (each unit once)."""
        self._all.add(trace)
        self._scenarios.setdefault(trace.scenario, _ScenarioCounts()).add(trace)
        self._policy_failures += sum(1 for v in trace.verdicts if not v.passed)
        self._scorer_failures += sum(1 for s in trace.scores if not s.passed)
        if trace.started_at:
            end = trace.started_at + trace.duration_s
            self._start = min(self._start, trace.started_at) if self._start else trace.started_at
            self._end = max(self._end, end)

    def build(self) -> Summary:
        counts = self._all
        scenarios = {name: acc.summary() for name, acc in self._scenarios.items()}
        totals: dict[str, CoverageTotals] = {}
        for scenario in scenarios.values():
            for upstream, cov in scenario.coverage.items():
                total = totals.setdefault(upstream, CoverageTotals())
                total.recordings += cov.recordings
                total.served += cov.served
                total.never_used += len(cov.never_used)
                total.unmatched += cov.unmatched
                total.live += cov.live
        return Summary(
            pack=self.pack,
            total=counts.runs,
            passed=counts.passed,
            failed=counts.runs - counts.passed - counts.errors - counts.invalid,
            errors=counts.errors,
            invalid=counts.invalid,
            faults_injected=counts.faults_injected,
            ok=counts.passed == counts.runs,
            divergences=counts.divergences,
            policy_failures=self._policy_failures,
            scorer_failures=self._scorer_failures,
            durations=counts.durations,
            wall_s=(self._end - self._start) if self._start else 0.0,
            started_at=self._start,
            scenarios=scenarios,
            coverage=totals,
        )


def status_counts(summary: Summary) -> str:
    """`3 passed, 1 failed, 0 errors` (and `, 1 invalid` when any unit is): the run's one-line
    counts, as `wt run`, `wt merge` and `wt score` print them."""
    text = f"{summary.passed} passed, {summary.failed} failed, {summary.errors} errors"
    return text + (f", {summary.invalid} invalid" if summary.invalid else "")


def summarize(traces: Iterable[Trace], *, pack: str = "windtunnel") -> Summary:
    """Aggregate finished traces (each unit once; scenarios in first-seen order)."""
    builder = SummaryBuilder(pack)
    for trace in traces:
        builder.add(trace)
    return builder.build()
