"""`scripts/bench core`: the pure universe core at 1,000 / 10,000 / 100,000 recordings.

Measured at each size, as medians over repeats with min/max and IQR: `load_universe`, building a
`UniverseIndex`, exact and keyed `resolve` throughput, `RecordedMCPServer.call_tool` throughput
(resolve plus call-log bookkeeping) and `nearest` latency on misses. The baseline, measured in the
same run over the same calls, is a plain dict lookup of a precomputed key: resolve/dict is the cost
of canonicalization and dispatch.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from windtunnel.canonical import args_key
from windtunnel.matching import UniverseIndex
from windtunnel.mcp.recorded import RecordedMCPServer
from windtunnel.universe import Universe, load_universe, write_universe

from . import core_render
from .core_data import (
    Call,
    adversarial_universe,
    exact_calls,
    keyed_calls,
    make_universe,
    miss_calls,
)
from .measure import Samples, Spread, percentile, time_interleaved, turns
from .report import BenchResult, load_average, machine

__all__ = ["HELP", "METRICS", "NAME", "TARGETS", "add_arguments", "run"]

NAME = "core"
HELP = (
    "universe core: load, index build, resolve, call_tool and nearest "
    "at 1,000 / 10,000 / 100,000 recordings"
)

FULL_SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (100, 1_000)
FULL_REPEATS, QUICK_REPEATS = 5, 3
FULL_MISSES, QUICK_MISSES = 400, 40
ADVERSARIAL_CALLS = 10


@dataclass(frozen=True)
class Metric:
    label: str
    unit: str  # "s" (a duration, lower is better), "/s" (a rate), "us" (a latency)


METRICS: dict[str, Metric] = {
    "load_s": Metric("load_universe", "s"),
    "index_build_s": Metric("UniverseIndex(universe)", "s"),
    "dict_lookup_per_s": Metric("baseline: dict lookup of a precomputed key", "/s"),
    "exact_resolve_per_s": Metric("exact index.resolve", "/s"),
    "keyed_resolve_per_s": Metric("keyed index.resolve (extra non-key arg)", "/s"),
    "call_tool_per_s": Metric("RecordedMCPServer.call_tool (exact hits)", "/s"),
    "nearest_us": Metric("index.nearest on a miss, mean", "us"),
    "nearest_p99_us": Metric("index.nearest on a miss, p99", "us"),
    "nearest_adversarial_us": Metric("index.nearest, worst case: 3 disjoint flags", "us"),
}

# Ratio name -> (numerator, denominator): how many times slower than the dict baseline.
RATIOS: dict[str, tuple[str, str]] = {
    "exact_vs_dict": ("dict_lookup_per_s", "exact_resolve_per_s"),
    "keyed_vs_dict": ("dict_lookup_per_s", "keyed_resolve_per_s"),
    "call_tool_vs_dict": ("dict_lookup_per_s", "call_tool_per_s"),
}


@dataclass(frozen=True)
class Target:
    """A requirement from the issue, checked at `size` recordings."""

    text: str
    metric: str
    op: str  # ">=" or "<"
    limit: float
    size: int = 100_000

    def verdict(self, value: float) -> str:
        ok = value >= self.limit if self.op == ">=" else value < self.limit
        return "PASS" if ok else "MISS"


TARGETS = (
    Target("≥ 200,000 exact resolutions/s in-process", "exact_resolve_per_s", ">=", 200_000),
    Target("nearest under 1 ms per call (mean over misses)", "nearest_us", "<", 1_000),
    Target("load under 1 s", "load_s", "<", 1.0),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sizes",
        type=lambda text: tuple(int(n) for n in text.split(",")),
        help=f"recording counts, comma-separated (default {','.join(map(str, FULL_SIZES))})",
    )
    parser.add_argument("--repeats", type=int, help=f"repeats per metric (default {FULL_REPEATS})")
    parser.add_argument("--seed", type=int, default=0, help="universe and call-order seed")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also print cProfile's top functions for each phase at the largest size",
    )


def _nearest_timings(
    samples: Samples,
    contenders: Mapping[str, Callable[[str, dict[str, Any]], object]],
    calls: list[Call],
    repeats: int,
) -> dict[str, list[float]]:
    """Time `nearest` over `calls` per contender (taking turns); every call's own latency (µs).

    The per-call clock is wall time (per-call CPU time costs more to read than a fast `nearest`
    takes); its reads, ~0.2 µs a call, are inside the batch time too.
    """
    latencies: dict[str, list[float]] = {f"{prefix}nearest_us": [] for prefix in contenders}
    clock = time.perf_counter
    for repeat in range(repeats):
        for prefix in turns(list(contenders), repeat):
            nearest, name = contenders[prefix], f"{prefix}nearest_us"
            every = latencies[name]
            with samples.timing(name):
                for tool, args in calls:
                    start = clock()
                    nearest(tool, args)
                    every.append((clock() - start) * 1e6)
    return latencies


def _loop(
    resolve: Callable[[str, dict[str, Any]], object], calls: list[Call]
) -> Callable[[], None]:
    def run() -> None:
        for tool, args in calls:
            resolve(tool, args)

    return run


def _measure_size(n: int, repeats: int, misses: int, workdir: Path, seed: int) -> dict[str, Any]:
    """Every metric at `n` recordings. Contenders whose ratio matters take turns (interleaved)."""
    rng = random.Random(seed)
    path = workdir / f"universe-{n}.json"
    write_universe(make_universe(n, seed=seed), path)
    samples = Samples()

    runs: dict[str, Callable[[], object]] = {"load_s": lambda: load_universe(path)}
    time_interleaved(samples, runs, repeats)
    universe = load_universe(path)
    runs = {"index_build_s": lambda: UniverseIndex(universe)}
    time_interleaved(samples, runs, repeats)

    index = UniverseIndex(universe)
    exact, keyed = exact_calls(universe, rng), keyed_calls(universe, rng)
    missed = miss_calls(universe, rng, misses)
    _time_call_tool(samples, universe, exact, repeats)

    runs = {
        "dict_lookup_per_s": _dict_baseline(universe, exact),
        "exact_resolve_per_s": _loop(index.resolve, exact),
        "keyed_resolve_per_s": _loop(index.resolve, keyed),
    }
    time_interleaved(samples, runs, repeats)
    del runs  # the baseline's tables
    latencies = _nearest_timings(samples, {"": index.nearest}, missed, repeats)

    # The worst case, on its own universe of the same size: every flag posting list is long and
    # no two intersect, so no early exit helps.
    worst, probe = adversarial_universe(n)
    worst_index = UniverseIndex(worst)
    worst_samples = Samples()
    _nearest_timings(worst_samples, {"": worst_index.nearest}, [probe] * ADVERSARIAL_CALLS, repeats)
    for clock in ("cpu", "wall"):
        for name, values in getattr(worst_samples, clock).items():
            getattr(samples, clock)[name.replace("nearest", "nearest_adversarial")] = values
    del worst, worst_index

    counts = {"exact": len(exact), "keyed": len(keyed), "misses": len(missed)}
    counts["adversarial"] = ADVERSARIAL_CALLS
    metrics = _metrics(samples.cpu, counts)
    wall = _metrics(samples.wall, counts)
    # A p99 already summarizes every call of every repeat: no spread of its own; wall time.
    tail = percentile(latencies["nearest_us"], 99)
    metrics["nearest_p99_us"] = Spread(tail, tail, tail, tail, tail, 1).to_json()
    wall["nearest_p99_us"] = metrics["nearest_p99_us"]
    values = {name: _values(samples.cpu, counts, name) for name in samples.cpu}
    return {
        "recordings": n,
        "file_bytes": path.stat().st_size,
        "calls": counts,
        "metrics": metrics,
        "metrics_wall": wall,
        "nearest_max_us": max(latencies["nearest_us"]),
        # Per repeat, then the median: the contenders took turns, so each ratio compares
        # measurements made under the same background load.
        "ratios": {
            name: statistics.median(a / b for a, b in zip(values[num], values[den], strict=True))
            for name, (num, den) in RATIOS.items()
        },
    }


def _count(counts: dict[str, int], name: str) -> int:
    """How many calls one sample of metric `name` made."""
    if "adversarial" in name:
        return counts["adversarial"]
    if "nearest" in name:
        return counts["misses"]
    return counts["keyed"] if "keyed" in name else counts["exact"]


def _values(seconds: dict[str, list[float]], counts: dict[str, int], name: str) -> list[float]:
    """Raw seconds per sample in the metric's unit: seconds, calls per second or µs per call."""
    unit = METRICS[name].unit
    if unit == "s":
        return seconds[name]
    count = _count(counts, name)
    if unit == "/s":
        return [count / s for s in seconds[name]]
    return [s / count * 1e6 for s in seconds[name]]


def _metrics(seconds: dict[str, list[float]], counts: dict[str, int]) -> dict[str, Any]:
    return {name: Spread.of(_values(seconds, counts, name)).to_json() for name in seconds}


def _dict_baseline(universe: Universe, calls: list[Call]) -> Callable[[], None]:
    """The baseline: the same calls, their keys computed ahead, a dict of the same size."""
    table = {(r.tool_name, args_key(r.args)): i for i, r in enumerate(universe.recordings)}
    keys = [(tool, args_key(args)) for tool, args in calls]

    def lookups() -> None:
        for key in keys:
            table[key]

    return lookups


def _time_call_tool(samples: Samples, universe: Universe, calls: list[Call], repeats: int) -> None:
    """`call_tool` over every call; each repeat gets a fresh server (built untimed), so each
    starts with an empty call log."""
    for _ in range(repeats):
        call_tool = RecordedMCPServer(universe).call_tool
        with samples.timing("call_tool_per_s"):
            for tool, args in calls:
                call_tool(tool, args)
        del call_tool


def _profile(n: int, workdir: Path, seed: int, misses: int) -> None:
    """Print where the time goes in each phase at size `n` (cProfile, top functions)."""
    rng = random.Random(seed)
    path = workdir / f"universe-{n}.json"
    universe = load_universe(path)
    index = UniverseIndex(universe)
    server = RecordedMCPServer(universe)
    exact, missed = exact_calls(universe, rng), miss_calls(universe, rng, misses)
    phases: dict[str, Callable[[], object]] = {
        "load_universe": lambda: load_universe(path),
        "UniverseIndex": lambda: UniverseIndex(universe),
        "exact resolve": _loop(index.resolve, exact),
        "call_tool": _loop(server.call_tool, exact),
        "nearest": _loop(index.nearest, missed),
    }
    for phase, fn in phases.items():
        print(f"\n=== profile: {phase} at {n:,} recordings ===")
        profiler = cProfile.Profile()
        profiler.runcall(fn)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(8)


def _growth(results: dict[str, Any], sizes: tuple[int, ...]) -> dict[str, float]:
    first, last = results[str(sizes[0])]["metrics"], results[str(sizes[-1])]["metrics"]
    return {name: last[name]["median"] / first[name]["median"] for name in METRICS}


def _targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for target in TARGETS:
        entry = results.get(str(target.size))
        value = entry["metrics"][target.metric]["median"] if entry else None
        rows.append(
            {
                "text": target.text,
                "metric": target.metric,
                "size": target.size,
                "op": target.op,
                "limit": target.limit,
                "value": value,
                "verdict": target.verdict(value) if value is not None else "n/a",
                "value_wall": entry["metrics_wall"][target.metric]["median"] if entry else None,
            }
        )
    return rows


def run(options: argparse.Namespace) -> BenchResult:
    sizes = options.sizes or (QUICK_SIZES if options.quick else FULL_SIZES)
    repeats = options.repeats or (QUICK_REPEATS if options.quick else FULL_REPEATS)
    misses = QUICK_MISSES if options.quick else FULL_MISSES
    started, host = time.time(), machine()  # the load average before we add ours
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-core-") as tmp:
        workdir = Path(tmp)
        for n in sizes:
            print(f"core: {n:,} recordings ...", flush=True)
            results[str(n)] = _measure_size(n, repeats, misses, workdir, options.seed)
        if options.profile:
            _profile(sizes[-1], workdir, options.seed, misses)
    data: dict[str, Any] = {
        "benchmark": NAME,
        "command": options.command,
        "quick": options.quick,
        "machine": host,
        "started_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
        "duration_s": time.time() - started,
        "load_average_1m_end": load_average(),
        "sizes": list(sizes),
        "repeats": repeats,
        "metrics": {name: {"label": m.label, "unit": m.unit} for name, m in METRICS.items()},
        "results": results,
        "growth": _growth(results, sizes),
        "targets": _targets(results),
    }
    print(core_render.console(data))
    plot = None
    if options.out is not None:
        plot = options.out.parent / "bench-core.png"
        try:
            core_render.plot(data, plot)
        except ImportError:
            print("matplotlib is not installed: no plot", file=sys.stderr)
            plot = None
        else:
            print(f"wrote {plot}")
    return BenchResult(data, core_render.markdown(data, plot.name if plot else None))
