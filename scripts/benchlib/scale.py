"""`scripts/bench scale`: `wt run -j` at -j 1 and -j 2, and a measured cost model for many machines.

    scripts/bench scale [--scenarios 200] [--small 40] [--repeats 3] [--diagnose-fsync]

A generated pack of `--scenarios` scenarios (the scripted agent, real MCP clients, two recorded
upstreams, two calls each) runs at -j 1 and -j 2, each `--repeats` times, interleaved; the report
gives the median wall times and the speed-up. Then the cost model, from measurements only:

- `a` (fixed cost of one shard: process start, imports, servers, reports) and `b` (cost of one
  unit on one core) from the -j 1 medians at two pack sizes (`--small` and `--scenarios`);
- `e`, the parallel efficiency of two shards on this machine: speed-up / 2;
- the cost of merging: `merge_runs` over the -j 2 run's shards, and over 10,000 copies of one of
  the run's real traces cut into 20 shards (measured, not extrapolated);
- the largest shard of `--target-units` (10,000) units cut K ways, computed with the real
  assignment (`shard_of`).

For M machines like this one (2 cores, so K = 2M one-core shards) the estimate is
`a + (b / e) * largest_shard(K) + merge(10,000)` (wall-time model, this machine's contention
included), and `a_cpu + b_cpu * largest_shard(K) + merge(10,000)` from CPU seconds (every shard
on a free core). Copying shard directories between machines is not measured and not included.

`--diagnose-fsync` also times -j 1 and -j 2 with `os.fsync` replaced by a no-op in every process
(a `sitecustomize` on PYTHONPATH): the live run fsyncs each unit 3 times, and on a disk where
concurrent fsyncs queue behind each other that, not CPU, is what limits local parallelism.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec

from windtunnel.rundir.manifest import ShardManifest, write_manifest
from windtunnel.rundir.merge import merge_runs, write_run
from windtunnel.rundir.results import read_results
from windtunnel.runner.trace import Trace
from windtunnel.scale.shards import ShardSpec, plan_hash, shard_of

from .report import BenchResult, finish_data, header, start_data

__all__ = ["HELP", "NAME", "add_arguments", "run"]

NAME = "scale"
HELP = "wt run -j 1 vs -j 2 on one pack, and a measured cost model for 10 and 100 machines"

ROOT = Path(__file__).resolve().parents[2]
UNIVERSES = ROOT / "configs" / "demo" / "universes"
WT = [sys.executable, "-m", "windtunnel"]
# The checkout this script lives in, whatever `windtunnel` the interpreter has installed.
WT_ENV = {**os.environ, "PYTHONPATH": str(ROOT / "orchestrator")}


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


def _machine_busy() -> float:
    """CPU seconds the whole machine has spent busy (all processes), from /proc/stat."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    ticks = os.sysconf("SC_CLK_TCK")
    return (user + nice + system + irq + softirq + steal) / ticks


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


NO_FSYNC = "import os\nos.fsync = lambda fd: None\n"
"""A `sitecustomize` for the diagnostic runs: every process of the run skips fsync."""


OTHERS: list[float] = []
"""Per timed run: cores used on average by processes that are not the benchmark's."""


def timed_run(
    pack: Path, jobs: int, out: Path, env: dict[str, str] | None = None
) -> tuple[float, float]:
    """Wall seconds and CPU seconds (all processes) of one `wt run PACK -j JOBS`, end to end."""
    busy0, cpu0, started = _machine_busy(), _children_cpu(), time.perf_counter()
    command = [*WT, "run", str(pack), "-j", str(jobs), "-o", str(out), "--progress", "plain"]
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env or WT_ENV)
    elapsed, cpu = time.perf_counter() - started, _children_cpu() - cpu0
    OTHERS.append(max(0.0, (_machine_busy() - busy0 - cpu) / elapsed))
    if done.returncode != 0:
        raise SystemExit(f"bench: {' '.join(command)} exited {done.returncode}:\n{done.stderr}")
    return elapsed, cpu


def largest_shard(units: int, shards: int) -> int:
    """The size of the largest of `shards` shards of `units` generated unit ids."""
    sizes = [0] * shards
    for i in range(units):
        sizes[shard_of(f"bench-{i:05d}#0", shards) - 1] += 1
    return max(sizes)


def merge_at_scale(template: Trace, units: int, shards: int, work: Path) -> float:
    """Seconds `merge_runs` takes for `units` copies of a real trace cut into `shards` shards."""
    ids = [f"bench-{i:05d}#0" for i in range(units)]
    digest = plan_hash("bench", ids)
    dirs = []
    for index in range(1, shards + 1):
        spec = ShardSpec(index, shards)
        mine = [uid for uid in ids if spec.contains(uid)]
        run_dir = work / "synthetic" / f"{index}-of-{shards}"
        manifest = ShardManifest(
            pack="bench", plan_hash=digest, shard=str(spec), plan=ids, units=mine
        )
        write_manifest(run_dir, manifest)
        traces = [
            msgspec.structs.replace(template, unit_id=uid, scenario=uid.partition("#")[0])
            for uid in mine
        ]
        write_run(run_dir, traces, "bench")
        dirs.append(run_dir)
    started = time.perf_counter()
    merge_runs(dirs, work / "synthetic-merged")
    return time.perf_counter() - started


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    big = write_pack(work, args.scenarios, args.concurrency)
    small = write_pack(work, args.small, args.concurrency)
    times: dict[str, list[float]] = {"j1": [], "j2": [], "j1_small": []}
    cpu: dict[str, list[float]] = {"j1": [], "j2": [], "j1_small": []}
    loads = [os.getloadavg()[0]]
    for r in range(args.repeats):
        for key, pack, jobs in (("j1", big, 1), ("j2", big, 2), ("j1_small", small, 1)):
            wall, used = timed_run(pack, jobs, work / f"{key}-{r}")
            times[key].append(wall)
            cpu[key].append(used)
        loads.append(os.getloadavg()[0])
    merges = []
    shards = sorted((work / "j2-0" / "shards").iterdir())
    for r in range(args.repeats):
        started = time.perf_counter()
        merge_runs(shards, work / f"merge-{r}")
        merges.append(time.perf_counter() - started)
    if args.diagnose_fsync:
        site = work / "no-fsync"
        site.mkdir()
        (site / "sitecustomize.py").write_text(NO_FSYNC)
        env = {**WT_ENV, "PYTHONPATH": os.pathsep.join([str(site), *sys.path])}
        for key in ("j1_nofsync", "j2_nofsync"):
            times[key], cpu[key] = [], []
        for r in range(args.repeats):
            for key, jobs in (("j1_nofsync", 1), ("j2_nofsync", 2)):
                wall, used = timed_run(big, jobs, work / f"{key}-{r}", env)
                times[key].append(wall)
                cpu[key].append(used)
    med = {name: statistics.median(values) for name, values in times.items()}
    med_cpu = {name: statistics.median(values) for name, values in cpu.items()}
    speedup = med["j1"] / med["j2"]
    span = args.scenarios - args.small
    b = (med["j1"] - med["j1_small"]) / span
    a = med["j1_small"] - b * args.small
    b_cpu = (med_cpu["j1"] - med_cpu["j1_small"]) / span
    a_cpu = med_cpu["j1_small"] - b_cpu * args.small
    m = statistics.median(merges) / args.scenarios
    template = read_results(work / "j1-0")[0]
    target = args.target_units
    merge_10k = merge_at_scale(template, target, 20, work)
    efficiency = speedup / 2
    estimates = []
    for machines in (1, 10, 100):
        shards_k = 2 * machines
        largest = largest_shard(target, shards_k)
        merge_s = merge_10k
        estimates.append(
            {
                "machines": machines,
                "shards": shards_k,
                "largest_shard": largest,
                "mean_shard": target / shards_k,
                "merge_s": merge_s,
                # Wall-time model: this machine's own -j 2 efficiency, contention included.
                "total_s": a + (b / efficiency) * largest + merge_s,
                # CPU-time model: every shard on a core of its own.
                "total_cpu_model_s": a_cpu + b_cpu * largest + merge_s,
            }
        )
    for key in ("total_s", "total_cpu_model_s"):
        base = estimates[0][key]
        for row in estimates:
            row[key.replace("total", "speedup")] = base / row[key]
    return {
        "target_units": target,
        "scenarios": args.scenarios,
        "small": args.small,
        "concurrency": args.concurrency,
        "repeats": args.repeats,
        "times_s": times,
        "cpu_s": cpu,
        "median_s": med,
        "median_cpu_s": med_cpu,
        "load_average_1m": loads,
        "other_processes_cores": OTHERS,
        "speedup_j2": speedup,
        "speedup_j2_nofsync": (med["j1_nofsync"] / med["j2_nofsync"])
        if args.diagnose_fsync
        else None,
        "model": {
            "a_s": a,
            "b_s": b,
            "a_cpu_s": a_cpu,
            "b_cpu_s": b_cpu,
            "efficiency": efficiency,
            "merge_per_unit_s": m,
            "merge_10k_s": merge_10k,
        },
        "merge_s": merges,
        "estimates_10k": estimates,
    }


def render(result: dict[str, Any]) -> str:
    med, model = result["median_s"], result["model"]
    n, target = result["scenarios"], result["target_units"]
    lines = [
        f"pack: {n} scenarios x 1 repeat, scripted agent, 2 upstreams, concurrency "
        f"{result['concurrency']} per worker; {result['repeats']} runs each; "
        f"{result['machine']['nproc']} CPUs, Python {result['machine']['python']}",
        "",
        "load average (1 min) before and after each round: "
        + ", ".join(f"{x:.2f}" for x in result["load_average_1m"]),
        "cores busy with other processes during the timed runs: median "
        f"{statistics.median(result['other_processes_cores']):.2f}, max "
        f"{max(result['other_processes_cores']):.2f}",
        "",
        "| run | median wall (s) | all runs, wall (s) | median CPU (s) |",
        "|---|---|---|---|",
    ]
    labels = {
        "j1": f"-j 1, {n} units",
        "j2": f"-j 2, {n} units",
        "j1_small": f"-j 1, {result['small']} units",
        "j1_nofsync": f"-j 1, {n} units, fsync off (diagnostic)",
        "j2_nofsync": f"-j 2, {n} units, fsync off (diagnostic)",
    }
    for key, label in labels.items():
        if key not in result["times_s"]:
            continue
        runs = ", ".join(f"{t:.2f}" for t in result["times_s"][key])
        lines.append(f"| {label} | {med[key]:.2f} | {runs} | {result['median_cpu_s'][key]:.2f} |")
    lines += [
        "",
        f"speed-up of -j 2 over -j 1: {result['speedup_j2']:.2f}x "
        f"(parallel efficiency {model['efficiency']:.2f})",
        *(
            [f"speed-up with fsync off (diagnostic): {result['speedup_j2_nofsync']:.2f}x"]
            if result["speedup_j2_nofsync"] is not None
            else []
        ),
        f"wall: fixed cost per shard a = {model['a_s']:.2f} s, per unit b = "
        f"{model['b_s'] * 1000:.1f} ms; CPU: a = {model['a_cpu_s']:.2f} s, b = "
        f"{model['b_cpu_s'] * 1000:.1f} ms; merge per unit m = "
        f"{model['merge_per_unit_s'] * 1000:.2f} ms at {n} units; merging {target:,} units "
        f"(20 shards, measured): {model['merge_10k_s']:.1f} s",
        "",
        f"{target:,} scenarios on M machines like this one (2 one-core shards per machine):",
        "",
        "| machines | shards | largest shard (mean) | merge (s) | wall model (s) | speed-up | "
        "CPU model (s) | speed-up |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in result["estimates_10k"]:
        lines.append(
            f"| {row['machines']} | {row['shards']} | {row['largest_shard']} "
            f"({row['mean_shard']:.0f}) | {row['merge_s']:.1f} | {row['total_s']:.0f} | "
            f"{row['speedup_s']:.1f}x | {row['total_cpu_model_s']:.0f} | "
            f"{row['speedup_cpu_model_s']:.1f}x |"
        )
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scenarios", type=int, default=200, help="pack size (default 200)")
    parser.add_argument("--small", type=int, default=40, help="second size for the fit (40)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per setting (>= 3)")
    parser.add_argument("--concurrency", type=int, default=8, help="units in flight per worker")
    parser.add_argument(
        "--target-units",
        type=int,
        default=10_000,
        help="pack size the model estimates for, merge measured at (default 10,000)",
    )
    parser.add_argument(
        "--diagnose-fsync",
        action="store_true",
        help="also time -j 1 and -j 2 with fsync off in every process (a diagnostic)",
    )


def run(options: argparse.Namespace) -> BenchResult:
    if options.quick:
        options.scenarios, options.small, options.repeats, options.target_units = 6, 3, 3, 200
    if options.repeats < 3 or not 0 < options.small < options.scenarios:
        raise SystemExit("scripts/bench scale: need --repeats >= 3 and 0 < --small < --scenarios")
    data = start_data(NAME, options)
    with tempfile.TemporaryDirectory(prefix="wt-bench-scale-") as tmp:
        data.update(measure(options, Path(tmp)))
    finish_data(data)
    text = "\n".join([*header("Past one machine (`scripts/bench scale`)", data), render(data)])
    print(text)
    return BenchResult(data, text)
