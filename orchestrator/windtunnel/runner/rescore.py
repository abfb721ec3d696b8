"""Re-score a finished run: the pack's policies and scorers over the stored traces, no agent run.

Each unit's stored trace (call log, warnings, answer, error, coverage) is scored again by its
scenario's current policies and scorers; everything else is kept as it was. With the rules
unchanged, every verdict, score and status comes out identical; a changed rule applies to every
unit of its scenario. The result is a new run directory (results, traces, summary, JUnit,
report), streamed unit by unit.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError, InputError
from ..rundir.layout import RESULTS_FILE, has_results
from ..rundir.results import RunWriter, load_full_trace, read_results
from .scenario import ScenarioPack
from .scoring import evaluate
from .summary import Summary
from .trace import Trace

WRITE_BATCH = 64

__all__ = ["RescoreReport", "rescore_run"]


@dataclass
class RescoreReport:
    """What a re-score wrote: the new summary, and the units that changed or were kept."""

    summary: Summary
    units: int = 0
    changed: list[str] = field(default_factory=list)
    """Units whose status differs from the stored one."""
    kept: list[str] = field(default_factory=list)
    """Units whose trace file is missing or unreadable: their stored verdicts are kept."""


def rescore_run(run_dir: Path, pack: ScenarioPack, out: Path) -> RescoreReport:
    """Score every unit of `run_dir` with `pack`'s rules and write the run to `out`."""
    rows = read_results(run_dir, with_calls=False)
    if not rows:
        raise InputError(f"no finished unit in {RESULTS_FILE}", file=os.fspath(run_dir))
    scenarios = {scenario.name: scenario for scenario in pack.scenarios}
    unknown = sorted({row.scenario for row in rows} - scenarios.keys())
    if unknown:
        shown = ", ".join(map(repr, unknown[:10]))
        raise ConfigError(
            f"pack {pack.name!r} has no scenario {shown}: the run cannot be scored with it",
            file=pack.source,
        )
    if out.resolve() == run_dir.resolve():
        raise InputError("the output must be another directory than the run", file=str(out))
    if has_results(out):
        raise InputError(
            "this directory already has results; choose another -o", file=os.fspath(out)
        )
    writer = RunWriter(out, pack=pack.name)
    changed: list[str] = []
    kept: list[str] = []
    batch: list[Trace] = []
    for row in rows:
        trace = load_full_trace(run_dir, row)
        if trace is row and row.trace_file:
            # Without its call log a unit would be judged on nothing: keep what it had.
            kept.append(row.unit_id)
        else:
            scenario = scenarios[trace.scenario]
            before = trace.status
            evaluate(trace, scenario.policies, scenario.scorers)
            if trace.status != before:
                changed.append(trace.unit_id)
        batch.append(trace)
        if len(batch) == WRITE_BATCH:  # shared fsyncs, as `wt run` writes units
            writer.write_many(batch)
            batch = []
    if batch:
        writer.write_many(batch)
    return RescoreReport(summary=writer.finish(), units=len(rows), changed=changed, kept=kept)
