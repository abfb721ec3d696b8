"""`wt run` past one process: `--shard i/N`, `-j auto|N` (local worker processes) and `--executor
ray`: the options, checked and handed to `scale.parallel_run`, which does the work. Sharded and
parallel runs use the same runtime as a plain run; see docs/scale.md."""

from __future__ import annotations

import argparse
import os

from ..errors import ConfigError
from ..otel.config import otel_config
from ..otel.shipping import ship_otel
from ..runner.pack_run import PackRunOptions
from ..runner.progress import Progress
from ..runner.scenario import ScenarioPack
from ..runner.summary import Summary
from ..scale.parallel_run import ParallelRun, local_cores, run_parallel
from ..scale.shard_run import prepare_shard
from ..scale.shards import ShardSpec

__all__ = [
    "run_workers",
    "shard_options",
    "wants_workers",
]


def wants_workers(args: argparse.Namespace) -> bool:
    """Whether this run goes to worker processes or Ray; refuses options that cannot mix."""
    if args.ray_address and args.executor != "ray":
        raise ConfigError("--ray-address needs --executor ray")
    if args.ray_working_dir and args.executor != "ray":
        raise ConfigError("--ray-working-dir needs --executor ray")
    jobs = local_cores() if args.jobs == "auto" else (args.jobs or 1)
    parallel = args.executor == "ray" or jobs > 1
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
    for fault in args.fault:
        out += ["--fault", fault]
    if args.resume:
        out.append("--resume")
    # Each worker exports its own units (an endpoint in the environment reaches them anyway).
    if args.otel:
        out += ["--otel", args.otel]
    if args.otel_capture_content:
        out.append("--otel-capture-content")
    return out


def run_workers(
    args: argparse.Namespace, pack: ScenarioPack, options: PackRunOptions, progress: Progress
) -> tuple[bool, Summary]:
    """Run the pack as shards (worker processes or Ray tasks) merged into `-o DIR`:
    `(interrupted, merged summary)`."""
    run = ParallelRun(
        pack_spec=args.pack,
        executor="ray" if args.executor == "ray" else "local",
        jobs=args.jobs,
        ray_address=args.ray_address,
        ray_working_dir=args.ray_working_dir,
        worker_args=_worker_args(args),
        # A Ray task sees neither this environment nor the command line: its export goes along.
        otel=ship_otel(
            otel_config(os.environ, endpoint=args.otel, capture_content=args.otel_capture_content),
            os.environ,
        )
        if args.executor == "ray"
        else None,
    )
    return run_parallel(run, pack, options, progress)
