"""One run as many shards: local worker processes (`-j N`) or Ray tasks, merged into `-o DIR`.

    <run_dir>/shards/<i>-of-<n>/   one ordinary shard run directory per shard
    <run_dir>/results.jsonl ...    the merge of every shard (`rundir.merge`)

Each shard runs the unchanged runtime (`wt run --shard i/N` in a worker process, or a Ray task
running `trio.run`); this module cuts the run, starts the shards, shows one progress display and
merges what finished. `--resume` keeps each shard's finished units and merges again. The shard
directories live inside the run directory, so each is checked to be a real directory before a
worker is pointed at it: a link planted there would send the shard's writes elsewhere.
"""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import trio

from .._groups import unwrap_single_error
from ..errors import ConfigError, InputError
from ..otel.shipping import ShippedOtel
from ..rundir.layout import (
    EVENTS_FILE,
    JUNIT_FILE,
    MANIFEST_FILE,
    MERGE_FILE,
    REPORT_FILE,
    RESULTS_FILE,
    SHARDS_DIR,
    SUMMARY_FILE,
    TRACES_DIR,
    ensure_dir,
    has_results,
    run_path,
)
from ..rundir.manifest import build_manifest
from ..rundir.merge import merge_runs
from ..rundir.results import iter_rows
from ..runner.agent_spec import AgentSpec
from ..runner.pack_run import PackRunOptions
from ..runner.progress import Progress
from ..runner.scenario import ScenarioPack
from ..runner.summary import Summary
from ..runner.units import count_units, plan_units
from .local import ShardExit, run_local_shards
from .ray_connect import check_address, connect
from .ray_executor import ShardJob, import_ray, ray_cpus, run_ray_shards
from .ray_ship import ShippedPack, ship_pack
from .shard_run import finished_units
from .shards import ShardSpec, shard_dirname, shard_from_dirname

__all__ = ["ParallelRun", "local_cores", "run_parallel"]

Shards = list[tuple[ShardSpec, Path]]


@dataclass(frozen=True)
class ParallelRun:
    """How a run is spread: over local worker processes or a Ray cluster."""

    pack_spec: str
    """The pack as the user named it: each worker loads it again."""
    executor: Literal["local", "ray"] = "local"
    jobs: int | Literal["auto"] | None = None
    """Shards: a count, `auto` (the cores, or the Ray cluster's CPUs), or None (auto)."""
    ray_address: str | None = None
    ray_working_dir: str | None = None
    """The tree shipped to Ray tasks (default: the pack file's directory; `ray_ship`)."""
    worker_args: Sequence[str] = field(default_factory=list)
    """Options every local worker gets (`-c 8 --repeats 3 ...`)."""
    otel: ShippedOtel | None = None
    """The OpenTelemetry export every Ray task opens (local workers get `--otel` in
    `worker_args`, and the environment)."""


def local_cores() -> int:
    """The cores this process may run on (`-j auto` for local workers)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _check_fresh(root: Path, resume: bool) -> None:
    if resume:
        return
    if has_results(root) or os.path.lexists(run_path(root, SHARDS_DIR)):
        raise ConfigError(
            "this run directory already has results; use --resume to finish it, or another -o",
            file=str(root),
        )


def _clear_merged(root: Path) -> None:
    """A parallel run's merged files are derived from its shards: drop them before re-merging
    (a link among them is removed, never followed)."""
    for name in (RESULTS_FILE, MERGE_FILE, EVENTS_FILE, SUMMARY_FILE, JUNIT_FILE, REPORT_FILE):
        run_path(root, name).unlink(missing_ok=True)
    traces = run_path(root, TRACES_DIR)
    if traces.is_symlink():
        traces.unlink()
    else:
        shutil.rmtree(traces, ignore_errors=True)


def _shard_count(
    root: Path, jobs: int | Literal["auto"] | None, resume: bool, auto: Callable[[], int]
) -> int:
    """How many shards: `-j N`; with `-j auto`, `auto()`, except that a resumed run keeps the
    count its shard directories were cut for (the cores or the Ray cluster may have changed)."""
    if jobs not in (None, "auto"):
        return int(jobs)
    shards_dir = run_path(root, SHARDS_DIR)
    if resume and shards_dir.is_dir() and not shards_dir.is_symlink():
        counts = {
            spec.count
            for entry in shards_dir.iterdir()
            if (spec := shard_from_dirname(entry.name)) is not None
        }
        if len(counts) == 1:
            return counts.pop()
    return auto()


def _shards(root: Path, count: int) -> Shards:
    """Each shard's directory under `shards/`, made (or checked) a real directory here."""
    shards_dir = run_path(root, SHARDS_DIR)
    ensure_dir(shards_dir)
    shards = []
    for index in range(1, count + 1):
        spec = ShardSpec(index, count)
        directory = run_path(shards_dir, shard_dirname(spec))
        ensure_dir(directory)
        shards.append((spec, directory))
    return shards


def _done(directory: Path) -> int:
    return len({row.unit_id for _, row in iter_rows(directory)})


def _start_progress(progress: Progress, total: int, shards: Shards, resume: bool) -> None:
    done = sum(_done(d) for _, d in shards) if resume else 0
    progress.start(total - done, skipped=done)


async def _local(
    pack_spec: str, shards: Shards, worker_args: Sequence[str], progress: Progress
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


def _on_local(
    run: ParallelRun, options: PackRunOptions, progress: Progress, total: int
) -> tuple[bool, Shards, list[str]]:
    root = options.run_dir
    count = _shard_count(root, run.jobs, options.resume, local_cores)
    shards = _shards(root, count)
    _start_progress(progress, total, shards, options.resume)
    try:
        interrupted, exits = trio.run(_local, run.pack_spec, shards, run.worker_args, progress)
    finally:
        progress.close()
    failures = [
        f"shard {e.spec} failed (exit {e.returncode}): {e.tail[-1] if e.tail else 'no output'}"
        for e in exits
        if not e.ok and not interrupted
    ]
    return interrupted, shards, failures


def _ray_jobs(
    shipped: ShippedPack,
    pack: ScenarioPack,
    options: PackRunOptions,
    agent: AgentSpec | None,
    shards: Shards,
    otel: ShippedOtel | None = None,
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
            pack=shipped,
            shard=str(spec),
            concurrency=options.concurrency,
            repeats=options.repeats,
            scenario_filter=options.scenario_filter,
            agent=agent,
            faults=list(options.faults),
            skip=done,
            otel=otel,
        )
        jobs.append((job, run_dir))
    return jobs


def _on_ray(
    run: ParallelRun,
    pack: ScenarioPack,
    options: PackRunOptions,
    progress: Progress,
    total: int,
) -> tuple[bool, Shards, list[str]]:
    agent = options.agent
    if agent is not None and not isinstance(agent, AgentSpec):
        raise ConfigError("the Ray executor runs agents given as data (a command or MODULE:ATTR)")
    check_address(run.ray_address)
    # Shipped (and checked against Ray's limit) before anything connects or is sent.
    shipment = ship_pack(
        run.pack_spec, pack, working_dir=run.ray_working_dir, run_dir=options.run_dir
    )
    ray = import_ray()
    started = connect(ray, run.ray_address)
    try:
        count = _shard_count(options.run_dir, run.jobs, options.resume, lambda: ray_cpus(ray))
        shards = _shards(options.run_dir, count)
        jobs = _ray_jobs(shipment.pack, pack, options, agent, shards, run.otel)
        _start_progress(progress, total, shards, options.resume)
        interrupted, outcomes = run_ray_shards(jobs, shipment.archive, progress)
    finally:
        progress.close()
        if started:
            ray.shutdown()
    failures = [f"shard {o.spec} failed: {o.error}" for o in outcomes if not o.finished]
    return interrupted, shards, [] if interrupted else failures


def run_parallel(
    run: ParallelRun, pack: ScenarioPack, options: PackRunOptions, progress: Progress
) -> tuple[bool, Summary]:
    """Run the pack as shards (worker processes or Ray tasks), then merge them into the run
    directory.

    Returns `(interrupted, merged summary)`. A shard that failed (not just failing scenarios)
    is an `InputError` after what finished has been merged.
    """
    root = options.run_dir
    _check_fresh(root, options.resume)
    total = count_units(pack, scenario_filter=options.scenario_filter, repeats=options.repeats)
    if run.executor == "ray":
        interrupted, shards, failures = _on_ray(run, pack, options, progress, total)
    else:
        interrupted, shards, failures = _on_local(run, options, progress, total)
    if options.resume:
        _clear_merged(root)
    started = [d for _, d in shards if os.path.lexists(run_path(d, MANIFEST_FILE))]
    if not started:
        raise InputError(failures[0] if failures else "no shard started")
    report = merge_runs(started, root, allow_missing=interrupted or bool(failures))
    if failures:
        raise InputError("; ".join(failures))
    return interrupted, report.summary
