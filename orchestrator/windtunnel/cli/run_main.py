"""`wt run PACK`: run a pack of scenarios and gate CI on the result (options: `run_command`)."""

from __future__ import annotations

import argparse
import re
import shlex
import signal
import time
from pathlib import Path

import trio

from .._gc import tune_gc_for_serving
from .._groups import unwrap_single_error
from ..actors.sinks import Sink
from ..errors import ConfigError
from ..faults.spec import parse_faults
from ..rundir.pack_ref import write_pack_ref
from ..runner.agent_spec import AgentSpec
from ..runner.pack_config import load_pack
from ..runner.pack_run import PackRunOptions, run_pack
from ..runner.progress import Progress
from ..runner.scenario import ScenarioPack
from ..runner.summary import Summary, status_counts
from ..terminal_text import escape_terminal
from . import scale_run
from .logs import configure_logging
from .otel_options import open_otel_sink
from .stderr_lines import StderrLines

__all__ = ["run_run"]

EXIT_INTERRUPTED = 130


def _agent(args: argparse.Namespace) -> AgentSpec | None:
    if args.agent_command:
        return AgentSpec(kind="command", command=shlex.split(args.agent_command))
    if args.agent_callable:
        return AgentSpec(kind="python", callable=args.agent_callable)
    return None


def _check_resumable(args: argparse.Namespace) -> None:
    """`--resume` finishes a run that exists; anything else is a mistake worth stopping for."""
    if not args.resume:
        return
    if not args.output:
        raise ConfigError("--resume needs -o DIR, the run directory to finish")
    if not Path(args.output).is_dir():
        raise ConfigError(
            "no such run directory to resume (leave out --resume to start a new run)",
            file=args.output,
        )


def run_run(args: argparse.Namespace) -> int:
    _check_resumable(args)
    stderr = StderrLines()  # progress and logs: a full pipe nobody reads must not stall the run
    configure_logging(stream=stderr)
    pack = load_pack(args.pack)
    # The pack's name is data from the pack file: it must not steer the default outside runs/.
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", pack.name).lstrip(".")[:80] or "pack"
    run_dir = Path(args.output or f"runs/{slug}-{time.strftime('%Y%m%d-%H%M%S')}")
    options = PackRunOptions(
        run_dir=run_dir,
        concurrency=args.concurrency,
        repeats=args.repeats,
        scenario_filter=args.scenario,
        resume=args.resume,
        agent=_agent(args),
        feed_port=args.feed_port,
        faults=tuple(parse_faults(args.fault)),
    )
    live = {"auto": None, "live": True, "plain": False}[args.progress]
    progress = Progress(stderr, live=live)
    parallel = scale_run.wants_workers(args)
    if args.shard is not None:
        options = scale_run.shard_options(pack, args.shard, options)
    if parallel:
        interrupted, summary = scale_run.run_workers(args, pack, options, progress)
    else:
        # The pack, its universes and the imports live as long as the run: out of the GC's
        # sight, and fewer full passes over in-flight units (A/B, 200 scenarios x 2 upstreams:
        # 82 -> 99 scenarios/s at concurrency 8, 70 -> 106 at 128).
        tune_gc_for_serving()
        with open_otel_sink(args, units=True, pack=pack.name) as otel:
            sinks: list[Sink] = [otel] if otel is not None else []
            interrupted, summary = trio.run(_run, pack, options, progress, sinks)
    write_pack_ref(run_dir, pack, args.pack)
    _report(summary, run_dir, interrupted, stderr)
    if interrupted:
        return EXIT_INTERRUPTED
    return 0 if summary.ok else 1


async def _run(
    pack: ScenarioPack, options: PackRunOptions, progress: Progress, sinks: list[Sink]
) -> tuple[bool, Summary]:
    stop = trio.Event()
    with (
        unwrap_single_error(),
        trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals,
    ):
        async with trio.open_nursery() as nursery:

            async def stop_on_signal() -> None:
                async for _ in signals:
                    stop.set()
                    return

            nursery.start_soon(stop_on_signal)
            # Stopped, run_pack still writes the summary over what finished, and returns it.
            summary = await run_pack(pack, options, progress=progress, stop=stop, sinks=sinks)
            nursery.cancel_scope.cancel()
    return stop.is_set(), summary


def _report(summary: Summary, run_dir: Path, interrupted: bool, stderr: StderrLines) -> None:
    state = "interrupted" if interrupted else ("passed" if summary.ok else "FAILED")
    pack = escape_terminal(summary.pack)
    print(
        f"{pack}: {state}: {status_counts(summary)} of {summary.total}; "
        f"divergences {summary.divergences}"
        + (f"; faults injected {summary.faults_injected}" if summary.faults_injected else ""),
        file=stderr,
    )
    print(f"report: {run_dir / 'report.html'}", file=stderr)
    if stderr.dropped:
        print(f"wt: {stderr.dropped} stderr line(s) dropped: nobody read the pipe", file=stderr)
    stderr.flush()
    print(str(run_dir))
