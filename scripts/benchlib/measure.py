"""Timing and summary statistics shared by the benchmarks."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

__all__ = ["Samples", "Spread", "percentile", "rss_kb", "time_interleaved", "turns"]

T = TypeVar("T")


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


class Samples:
    """Raw timings per metric, repeat by repeat, on two clocks.

    CPU time (`time.process_time`) is what the single-threaded code under test costs: on a
    shared machine it leaves out the time the OS gave the core to other work, which wall time
    (`time.perf_counter`) bills to us. On an idle machine the two agree.
    """

    def __init__(self) -> None:
        self.cpu: dict[str, list[float]] = {}
        self.wall: dict[str, list[float]] = {}

    @contextmanager
    def timing(self, name: str) -> Iterator[None]:
        """Time the block as one sample of `name`, after collecting the previous garbage."""
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        yield
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        self.cpu.setdefault(name, []).append(cpu)
        self.wall.setdefault(name, []).append(wall)


def turns(names: list[T], repeat: int) -> list[T]:
    """The order contenders take their turn in repeat `repeat`: rotated, so none is always first.

    On a shared machine the background load drifts over a run; taking turns exposes every
    contender to the same drift, so their ratios stay meaningful.
    """
    shift = repeat % len(names)
    return names[shift:] + names[:shift]


def time_interleaved(samples: Samples, runs: dict[str, Callable[[], object]], repeats: int) -> None:
    """Time each of `runs` `repeats` times, taking turns within each repeat.

    The heap is collected before each run so one run's garbage is not billed to the next; the
    GC stays enabled while timing because it runs in production too.
    """
    for repeat in range(repeats):
        for name in turns(list(runs), repeat):
            with samples.timing(name):
                runs[name]()


def rss_kb(field: str) -> int:
    """A memory figure of this process from /proc/self/status, in kB (`VmRSS`, `VmHWM`, ...)."""
    from pathlib import Path

    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0
