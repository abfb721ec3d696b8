"""`scripts/bench memory`: peak memory of `wt run` as a pack grows to 100,000 units (issue #18).

Each size runs in a fresh process (`memory_worker.py`) so its peak RSS (VmHWM) is its own. Two
series: the runner and writer alone (units with no upstream, an in-process agent that answers at
once: planning, scheduling, trace files, `results.jsonl`, events, the streamed summary, JUnit and
report), and units that each serve one recorded upstream and make one `tools/call` through the
official SDK client. 100 scenarios, repeats = units / 100. The run directory goes to /dev/shm
when it exists: the benchmark measures memory, and tmpfs keeps 100,000 fsyncs from dominating the
time on a shared disk.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .report import BenchResult, finish_data, header, render_section, start_data
from .targets import write_weather_universe

__all__ = ["HELP", "NAME", "add_arguments", "run"]

NAME = "memory"
HELP = "peak RSS of a scripted pack of 1,000 / 10,000 / 100,000 units (takes ~20 min)"

WORKER = Path(__file__).resolve().parent / "memory_worker.py"
SCENARIOS = 100
CONCURRENCY = 32
FULL_SIZES, QUICK_SIZES = (1_000, 10_000, 100_000), (200, 1_000)
FULL_CALL_SIZES, QUICK_CALL_SIZES = (1_000, 10_000), (100,)


def _sizes(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in text.split(","))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sizes", type=_sizes, help="units, runner alone (default 1000,10000,100000)"
    )
    parser.add_argument(
        "--call-sizes", type=_sizes, help="units with one upstream call each (default 1000,10000)"
    )


def _one(units: int, calls: int, universe: Path | None, scratch: Path) -> dict[str, Any]:
    run_dir = scratch / f"run-{units}-{calls}"
    done = subprocess.run(
        [
            sys.executable,
            str(WORKER),
            str(SCENARIOS),
            str(max(units // SCENARIOS, 1)),
            str(calls),
            str(CONCURRENCY),
            str(universe) if universe is not None else "-",
            str(run_dir),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=7200,
    )
    subprocess.run(["rm", "-rf", str(run_dir)], check=False)
    if done.returncode != 0:
        raise RuntimeError(f"memory worker for {units} units failed:\n{done.stderr[-3000:]}")
    sample: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if sample["passed"] != sample["units"]:
        raise RuntimeError(f"{units} units: only {sample['passed']} passed")
    sample["peak_mb"] = sample["peak_rss_kb"] / 1024
    sample["before_mb"] = sample["rss_before_kb"] / 1024
    sample["growth_mb"] = (sample["peak_rss_kb"] - sample["rss_before_kb"]) / 1024
    sample["units_per_s"] = sample["units"] / sample["wall_s"]
    print(json.dumps({"units": units, "calls": calls, **sample}), file=sys.stderr, flush=True)
    return sample


def _slope(series: dict[str, dict[str, Any]]) -> float | None:
    """Bytes of peak RSS per added unit, from the smallest size to the largest."""
    sizes = sorted(series, key=int)
    if len(sizes) < 2:
        return None
    low, high = series[sizes[0]], series[sizes[-1]]
    added = high["units"] - low["units"]
    return (high["peak_rss_kb"] - low["peak_rss_kb"]) * 1024 / added if added else None


def run(options: argparse.Namespace) -> BenchResult:
    sizes = options.sizes or (QUICK_SIZES if options.quick else FULL_SIZES)
    call_sizes = options.call_sizes or (QUICK_CALL_SIZES if options.quick else FULL_CALL_SIZES)
    data = start_data(NAME, options)
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(prefix="bench-memory-", dir=base) as tmp:
        scratch = Path(tmp)
        universe = write_weather_universe(scratch / "weather.universe.json")
        alone = {str(n): _one(n, 0, None, scratch) for n in sizes}
        calls = {str(n): _one(n, 1, universe, scratch) for n in call_sizes}
    data.update(
        scenarios=SCENARIOS,
        concurrency=CONCURRENCY,
        run_dir_on=base or "the temporary directory",
        alone=alone,
        calls=calls,
        slope_bytes_per_unit={"alone": _slope(alone), "calls": _slope(calls)},
    )
    finish_data(data)
    return render_section(data, options, "bench-memory.png", _plot, markdown)


def _table(series: dict[str, dict[str, Any]]) -> list[str]:
    rows = [
        "| units | peak RSS | RSS before the run | growth | wall | units/s |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for size in sorted(series, key=int):
        s = series[size]
        rows.append(
            f"| {s['units']:,} | {s['peak_mb']:.1f} MB | {s['before_mb']:.1f} MB | "
            f"{s['growth_mb']:.1f} MB | {s['wall_s']:.0f} s | {s['units_per_s']:.0f} |"
        )
    return rows


def markdown(data: dict[str, Any], plot: str | None) -> str:
    out = header("Memory: a pack of 100,000 units", data)
    slope = data["slope_bytes_per_unit"]
    out += [
        f"Workload: {data['scenarios']} scripted scenarios x (units / {data['scenarios']}) "
        f"repeats, `run_pack` at concurrency {data['concurrency']}, each size in a fresh "
        f"process; run directory on {data['run_dir_on']}. Peak RSS is the process's VmHWM.",
        "",
        "Runner and writer alone (no upstream; the agent answers at once):",
        "",
        *_table(data["alone"]),
        "",
        "One recorded upstream per unit, one `tools/call` through the official SDK client:",
        "",
        *_table(data["calls"]),
        "",
    ]
    for name, label in (("alone", "runner alone"), ("calls", "with calls")):
        if slope.get(name) is not None:
            out.append(f"- Peak RSS per added unit ({label}): {slope[name]:.0f} bytes.")
    if plot:
        out += ["", f"![memory]({plot})"]
    return "\n".join(out) + "\n"


def _plot(data: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for key, label, style in (
        ("alone", "runner alone", "o-"),
        ("calls", "one upstream call each", "s-"),
    ):
        series = data[key]
        sizes = sorted(series, key=int)
        if sizes:
            ax.plot(
                [series[s]["units"] for s in sizes],
                [series[s]["peak_mb"] for s in sizes],
                style,
                label=label,
            )
    ax.set(
        xscale="log",
        xlabel="units in the pack",
        ylabel="peak RSS (MB)",
        title="Peak memory of wt run",
    )
    ax.set_ylim(bottom=0)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
