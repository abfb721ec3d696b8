"""`wt diff`: what changed between a base run and a new run of the same pack.

runs      run directories (merged, or a parallel run's shards) -> units by scenario
fisher    Fisher's exact test for pass-rate changes over small repeat counts
model     RunDiff: status flips, pass rates, divergences new / gone / unchanged, call diffs
render_*  the terminal table, markdown for a PR comment, JSON, one self-contained HTML page
"""

from __future__ import annotations

from .fisher import ALPHA, fisher_exact_p
from .model import FAIL_ON, DivergenceDiff, RunDiff, ScenarioDiff, diff_runs, regressions
from .runs import RunData, load_run

__all__ = [
    "ALPHA",
    "FAIL_ON",
    "DivergenceDiff",
    "RunData",
    "RunDiff",
    "ScenarioDiff",
    "diff_runs",
    "fisher_exact_p",
    "load_run",
    "regressions",
]
