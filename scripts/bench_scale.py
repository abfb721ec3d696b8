"""Benchmark `wt run -j`: one pack at -j 1 and -j 2, and a measured cost model for many machines.

    .venv/bin/python scripts/bench_scale.py [--scenarios 200] [--small 40] [--repeats 3] [--json]

A generated pack of `--scenarios` scenarios (the scripted agent, real MCP clients, two recorded
upstreams, two calls each) runs at -j 1 and -j 2, each `--repeats` times, interleaved; the report
gives the median wall times and the speed-up. Then the cost model, from measurements only:

- `a` (fixed cost of one shard: process start, imports, servers, reports) and `b` (cost of one
  unit on one core) from the -j 1 medians at two pack sizes (`--small` and `--scenarios`);
- `e`, the parallel efficiency of two shards on this machine: speed-up / 2;
- `m`, the cost of merging one unit, from `merge_runs` over the -j 2 run's shards;
- the largest shard of 10,000 units cut K ways, computed with the real assignment (`shard_of`).

For M machines like this one (2 cores, so K = 2M one-core shards) the estimate is
`a + (b / e) * largest_shard(K) + m * 10,000`; copying shard directories between machines is not
measured and not included.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from windtunnel.scale.merge import merge_runs
from windtunnel.scale.shards import shard_of

ROOT = Path(__file__).resolve().parents[1]
UNIVERSES = ROOT / "configs" / "demo" / "universes"
WT = [sys.executable, "-m", "windtunnel"]
TARGET_UNITS = 10_000


def write_pack(directory: Path, scenarios: int, concurrency: int) -> Path:
    """A scripted pack: every scenario looks a client up, then lists its charges."""
    parts = [
        f'[pack]\nname = "bench"\nconcurrency = {concurrency}\ntimeout_s = 60\n',
        '[agent]\nkind = "scripted"\n',
    ]
    for i in range(scenarios):
        parts.append(
            f'[[scenario]]\nname = "bench-{i:05d}"\ntask = "refund the duplicate charge"\n'
            f'[scenario.upstreams]\ncrm = "{UNIVERSES / "crm.universe.json"}"\n'
            f'billing = "{UNIVERSES / "billing.universe.json"}"\n'
            '[[scenario.policies]]\nkind = "no_divergence"\n'
            '[[scenario.plan]]\nupstream = "crm"\ntool = "client_lookup"\n'
            'args = { query = "Bluewing Logistics" }\n'
            '[[scenario.plan]]\nupstream = "billing"\ntool = "list_charges"\n'
            'args = { account_id = "ACC-1042", invoice_id = "INV-7" }\n'
            '[scenario.scripted]\nfinal_answer = "RF-88"\n'
        )
    path = directory / f"pack-{scenarios}.toml"
    path.write_text("\n".join(parts))
    return path


def timed_run(pack: Path, jobs: int, out: Path) -> float:
    """Seconds for one `wt run PACK -j JOBS` in a fresh process, end to end."""
    started = time.perf_counter()
    command = [*WT, "run", str(pack), "-j", str(jobs), "-o", str(out), "--progress", "plain"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"bench: {' '.join(command)} exited {done.returncode}:\n{done.stderr}")
    return elapsed


def largest_shard(units: int, shards: int) -> int:
    """The size of the largest of `shards` shards of `units` generated unit ids."""
    sizes = [0] * shards
    for i in range(units):
        sizes[shard_of(f"bench-{i:05d}#0", shards) - 1] += 1
    return max(sizes)


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    big = write_pack(work, args.scenarios, args.concurrency)
    small = write_pack(work, args.small, args.concurrency)
    times: dict[str, list[float]] = {"j1": [], "j2": [], "j1_small": []}
    for r in range(args.repeats):
        times["j1"].append(timed_run(big, 1, work / f"j1-{r}"))
        times["j2"].append(timed_run(big, 2, work / f"j2-{r}"))
        times["j1_small"].append(timed_run(small, 1, work / f"j1-small-{r}"))
    merges = []
    shards = sorted((work / "j2-0" / "shards").iterdir())
    for r in range(args.repeats):
        started = time.perf_counter()
        merge_runs(shards, work / f"merge-{r}")
        merges.append(time.perf_counter() - started)
    med = {name: statistics.median(values) for name, values in times.items()}
    speedup = med["j1"] / med["j2"]
    b = (med["j1"] - med["j1_small"]) / (args.scenarios - args.small)
    a = med["j1_small"] - b * args.small
    m = statistics.median(merges) / args.scenarios
    efficiency = speedup / 2
    estimates = []
    for machines in (1, 10, 100):
        shards_k = 2 * machines
        largest = largest_shard(TARGET_UNITS, shards_k)
        run_s = a + (b / efficiency) * largest
        merge_s = m * TARGET_UNITS
        estimates.append(
            {
                "machines": machines,
                "shards": shards_k,
                "largest_shard": largest,
                "mean_shard": TARGET_UNITS / shards_k,
                "shard_s": run_s,
                "merge_s": merge_s,
                "total_s": run_s + merge_s,
            }
        )
    base = estimates[0]["total_s"]
    for row in estimates:
        row["speedup_vs_1"] = base / row["total_s"]
    return {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "scenarios": args.scenarios,
        "small": args.small,
        "concurrency": args.concurrency,
        "repeats": args.repeats,
        "times_s": times,
        "median_s": med,
        "speedup_j2": speedup,
        "model": {"a_s": a, "b_s": b, "efficiency": efficiency, "merge_per_unit_s": m},
        "merge_s": merges,
        "estimates_10k": estimates,
    }


def render(result: dict[str, Any]) -> str:
    med, model = result["median_s"], result["model"]
    n = result["scenarios"]
    lines = [
        f"pack: {n} scenarios x 1 repeat, scripted agent, 2 upstreams, concurrency "
        f"{result['concurrency']} per worker; {result['repeats']} runs each; "
        f"{result['machine']['cpus']} CPUs, Python {result['machine']['python']}",
        "",
        "| run | median wall (s) | all runs (s) |",
        "|---|---|---|",
    ]
    for key, label in (("j1", f"-j 1, {n} units"), ("j2", f"-j 2, {n} units")):
        runs = ", ".join(f"{t:.2f}" for t in result["times_s"][key])
        lines.append(f"| {label} | {med[key]:.2f} | {runs} |")
    runs = ", ".join(f"{t:.2f}" for t in result["times_s"]["j1_small"])
    lines.append(f"| -j 1, {result['small']} units | {med['j1_small']:.2f} | {runs} |")
    lines += [
        "",
        f"speed-up of -j 2 over -j 1: {result['speedup_j2']:.2f}x "
        f"(parallel efficiency {model['efficiency']:.2f})",
        f"fixed cost per shard a = {model['a_s']:.2f} s; per unit on one core "
        f"b = {model['b_s'] * 1000:.1f} ms; merge per unit m = "
        f"{model['merge_per_unit_s'] * 1000:.2f} ms",
        "",
        "10,000 scenarios on M machines like this one (2 one-core shards per machine):",
        "",
        "| machines | shards | largest shard (mean) | shard time (s) | merge (s) | total (s) | "
        "speed-up vs 1 |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in result["estimates_10k"]:
        lines.append(
            f"| {row['machines']} | {row['shards']} | {row['largest_shard']} "
            f"({row['mean_shard']:.0f}) | {row['shard_s']:.1f} | {row['merge_s']:.1f} | "
            f"{row['total_s']:.1f} | {row['speedup_vs_1']:.1f}x |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_scale", description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=200, help="pack size (default 200)")
    parser.add_argument("--small", type=int, default=40, help="second size for the fit (40)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per setting (>= 3)")
    parser.add_argument("--concurrency", type=int, default=8, help="units in flight per worker")
    parser.add_argument("--json", action="store_true", help="print the raw numbers as JSON")
    args = parser.parse_args(argv)
    if args.repeats < 3 or not 0 < args.small < args.scenarios:
        parser.error("need --repeats >= 3 and 0 < --small < --scenarios")
    with tempfile.TemporaryDirectory(prefix="wt-bench-scale-") as tmp:
        result = measure(args, Path(tmp))
    print(json.dumps(result, indent=2) if args.json else render(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
