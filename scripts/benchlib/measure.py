"""Timing and summary statistics shared by the benchmarks."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Spread", "percentile", "time_interleaved", "time_repeats"]


@dataclass(frozen=True)
class Spread:
    """Median of repeated measurements with their min, max and interquartile range."""

    median: float
    min: float
    max: float
    q1: float
    q3: float
    n: int

    @classmethod
    def of(cls, samples: Sequence[float]) -> Spread:
        ordered = sorted(samples)
        if len(ordered) >= 2:
            q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
        else:
            q1 = q3 = ordered[0]
        return cls(
            median=statistics.median(ordered),
            min=ordered[0],
            max=ordered[-1],
            q1=q1,
            q3=q3,
            n=len(ordered),
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def percentile(samples: Sequence[float], p: float) -> float:
    """The `p`-th percentile (0-100) by the nearest-rank method."""
    ordered = sorted(samples)
    rank = max(1, min(len(ordered), round(p / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def time_repeats(
    run: Callable[[], object],
    repeats: int,
    *,
    setup: Callable[[], object] | None = None,
) -> list[float]:
    """Wall time of `run()` in seconds, `repeats` times; `setup()` runs untimed before each.

    The heap is collected before each repeat so one repeat's garbage is not billed to the next;
    the GC stays enabled while timing because it runs in production too.
    """
    samples = []
    for _ in range(repeats):
        if setup is not None:
            setup()
        gc.collect()
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return samples


def time_interleaved(runs: dict[str, Callable[[], object]], repeats: int) -> dict[str, list[float]]:
    """Like `time_repeats` for several contenders, taking turns within each repeat.

    On a shared machine the background load drifts over a run; taking turns (in a rotating
    order) exposes every contender to the same drift, so their ratios stay meaningful.
    """
    samples: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for r in range(repeats):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            gc.collect()
            start = time.perf_counter()
            runs[name]()
            samples[name].append(time.perf_counter() - start)
    return samples
