"""`wt run` past one process: `--shard i/N`, `-j auto|N` (local worker processes) and `--executor
ray`. Sharded and parallel runs use the same runtime as a plain run; see docs/scale.md."""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import signal
from collections.abc import Callable
from pathlib import Path

import trio

from .._groups import unwrap_single_error
from ..errors import ConfigError, InputError
from ..runner.agent_spec import AgentSpec
from ..runner.layout import RESULTS_FILE, TRACES_DIR
from ..runner.pack_run import PackRunOptions
from ..runner.progress import Progress
from ..runner.results import read_results
from ..runner.scenario import ScenarioPack
from ..runner.summary import Summary
from ..runner.units import count_units, plan_units
from ..scale.local import ShardExit, run_local_shards
from ..scale.manifest import MANIFEST_FILE, build_manifest
from ..scale.merge import EVENTS_FILE, MERGE_FILE, merge_runs
from ..scale.ray_executor import ShardJob, import_ray, ray_cpus, run_ray_shards
from ..scale.shard_run import finished_units, prepare_shard
from ..scale.shards import ShardSpec, shard_dirname, shard_from_dirname
from .argument_types import Jobs

__all__ = [
    "run_workers",
    "shard_options",
    "wants_workers",
]

SHARDS_DIR = "shards"


def _local_jobs(jobs: Jobs | None) -> int:
    if jobs == "auto":
        return (
            len(os.sched_getaffinity(0))
            if hasattr(os, "sched_getaffinity")
            else os.cpu_count() or 1
        )
    return jobs or 1


def wants_workers(args: argparse.Namespace) -> bool:
    """Whether this run goes to worker processes or Ray; refuses options that cannot mix."""
    if args.ray_address and args.executor != "ray":
        raise ConfigError("--ray-address needs --executor ray")
    parallel = args.executor == "ray" or _local_jobs(args.jobs) > 1
    if args.shard is not None and (args.jobs is not None or args.executor == "ray"):
        raise ConfigError(
            "--shard runs one shard here; it cannot be combined with -j or --executor"
        )
    if parallel and args.feed_port is not None:
        raise ConfigError("--feed-port serves one process's events; it cannot be combined with -j")
    return parallel


def shard_options(pack: ScenarioPack, spec: ShardSpec, options: PackRunOptions) -> PackRunOptions:
    """Options running only shard `spec` of the plan, after writing its `shard.json`."""
    return prepare_shard(pack, spec, options)[0]


def _check_fresh(root: Path, resume: bool) -> None:
    if resume:
        return
    results = root / RESULTS_FILE
    if (results.exists() and results.stat().st_size) or (root / SHARDS_DIR).exists():
        raise ConfigError(
            "this run directory already has results; use --resume to finish it, or another -o",
            file=str(root),
        )


def _clear_merged(root: Path) -> None:
    """A parallel run's merged files are derived from its shards: drop them before re-merging."""
    for name in (RESULTS_FILE, MERGE_FILE, EVENTS_FILE, "summary.json", "junit.xml", "report.html"):
        (root / name).unlink(missing_ok=True)
    shutil.rmtree(root / TRACES_DIR, ignore_errors=True)


def _worker_args(args: argparse.Namespace) -> list[str]:
    out: list[str] = []
    if args.concurrency is not None:
        out += ["-c", str(args.concurrency)]
    if args.repeats is not None:
        out += ["--repeats", str(args.repeats)]
    if args.scenario is not None:
        out += ["-k", args.scenario]
    if args.agent_command:
        out += ["--agent-command", args.agent_command]
    if args.agent_callable:
        out += ["--agent-callable", args.agent_callable]
    if args.resume:
        out.append("--resume")
    return out


def _shard_count(root: Path, jobs: Jobs | None, resume: bool, auto: Callable[[], int]) -> int:
    """How many shards: `-j N`; with `-j auto`, `auto()`, except that a resumed run keeps the
    count its shard directories were cut for (the cores or the Ray cluster may have changed)."""
    if jobs not in (None, "auto"):
        return int(jobs)
    if resume and (root / SHARDS_DIR).is_dir():
        counts = {
            spec.count
            for entry in (root / SHARDS_DIR).iterdir()
            if (spec := shard_from_dirname(entry.name)) is not None
        }
        if len(counts) == 1:
            return counts.pop()
    return auto()


def _shards(root: Path, count: int) -> list[tuple[ShardSpec, Path]]:
    specs = [ShardSpec(i, count) for i in range(1, count + 1)]
    return [(spec, root / SHARDS_DIR / shard_dirname(spec)) for spec in specs]


def _start_progress(
    progress: Progress, total: int, shards: list[tuple[ShardSpec, Path]], resume: bool
) -> None:
    done = sum(len(read_results(d, with_calls=False)) for _, d in shards) if resume else 0
    progress.start(total - done, skipped=done)


async def _local(
    pack_spec: str, shards: list[tuple[ShardSpec, Path]], worker_args: list[str], progress: Progress
) -> tuple[bool, list[ShardExit]]:
    stop = trio.Event()
    interrupted = False
    with (
        unwrap_single_error(),
        trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals,
    ):
        async with trio.open_nursery() as nursery:

            async def stop_on_signal() -> None:
                nonlocal interrupted
                async for _ in signals:
                    interrupted = True
                    stop.set()

            nursery.start_soon(stop_on_signal)
            exits = await run_local_shards(pack_spec, shards, worker_args, progress, stop=stop)
            nursery.cancel_scope.cancel()
    return interrupted, exits


def _ray_pack_spec(spec: str) -> str:
    return os.path.abspath(spec) if os.path.exists(spec) else spec


def _ray_jobs(
    args: argparse.Namespace,
    pack: ScenarioPack,
    options: PackRunOptions,
    agent: AgentSpec | None,
    shards: list[tuple[ShardSpec, Path]],
) -> list[tuple[ShardJob, Path]]:
    """One job per shard; resuming, each skips the units its directory already holds, and a
    shard with nothing left is not sent at all."""
    plan = plan_units(pack, scenario_filter=options.scenario_filter, repeats=options.repeats)
    jobs = []
    for spec, run_dir in shards:
        manifest = build_manifest(pack.name, plan, spec)
        done = finished_units(run_dir, manifest) if options.resume else []
        if done and len(done) == len(manifest.units):
            continue
        job = ShardJob(
            pack=_ray_pack_spec(args.pack),
            shard=str(spec),
            cwd=os.getcwd(),
            concurrency=options.concurrency,
            repeats=options.repeats,
            scenario_filter=options.scenario_filter,
            agent=agent,
            skip=done,
        )
        jobs.append((job, run_dir))
    return jobs


def _on_ray(
    args: argparse.Namespace,
    pack: ScenarioPack,
    options: PackRunOptions,
    progress: Progress,
    total: int,
) -> tuple[bool, list[tuple[ShardSpec, Path]], list[str]]:
    agent = options.agent
    if agent is not None and not isinstance(agent, AgentSpec):
        raise ConfigError("the Ray executor runs agents given as data (a command or MODULE:ATTR)")
    ray = import_ray()
    started = not ray.is_initialized()
    if started:
        ray.init(
            address=args.ray_address,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.WARNING,
        )
    try:
        count = _shard_count(options.run_dir, args.jobs, options.resume, lambda: ray_cpus(ray))
        shards = _shards(options.run_dir, count)
        jobs = _ray_jobs(args, pack, options, agent, shards)
        _start_progress(progress, total, shards, options.resume)
        interrupted, outcomes = run_ray_shards(jobs, progress)
    finally:
        progress.close()
        if started:
            ray.shutdown()
    failures = [f"shard {o.spec} failed: {o.error}" for o in outcomes if not o.finished]
    return interrupted, shards, [] if interrupted else failures


def run_workers(
    args: argparse.Namespace, pack: ScenarioPack, options: PackRunOptions, progress: Progress
) -> tuple[bool, Summary]:
    """Run the pack as shards (worker processes or Ray tasks), then merge them into `-o DIR`.

    Returns `(interrupted, merged summary)`. A shard that failed (not just failing scenarios)
    is an `InputError` after what finished has been merged.
    """
    root = options.run_dir
    _check_fresh(root, options.resume)
    total = count_units(pack, scenario_filter=options.scenario_filter, repeats=options.repeats)
    if args.executor == "ray":
        interrupted, shards, failures = _on_ray(args, pack, options, progress, total)
    else:
        count = _shard_count(root, args.jobs, options.resume, lambda: _local_jobs("auto"))
        shards = _shards(root, count)
        _start_progress(progress, total, shards, options.resume)
        try:
            interrupted, exits = trio.run(_local, args.pack, shards, _worker_args(args), progress)
        finally:
            progress.close()
        failures = [
            f"shard {e.spec} failed (exit {e.returncode}): {e.tail[-1] if e.tail else 'no output'}"
            for e in exits
            if not e.ok and not interrupted
        ]
    if options.resume:
        _clear_merged(root)
    started = [d for _, d in shards if (d / MANIFEST_FILE).exists()]
    if not started:
        raise InputError(failures[0] if failures else "no shard started")
    report = merge_runs(started, root, allow_missing=interrupted or bool(failures))
    if failures:
        raise InputError("; ".join(failures))
    return interrupted, report.summary
