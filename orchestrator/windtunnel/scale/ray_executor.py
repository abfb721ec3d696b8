"""Ray: every shard is one Ray task running the unchanged Trio runtime (`trio.run` in the task).

The driver puts the shipped tree (`ray_ship`: the pack, its universes, the agent's files) in
Ray's object store once; each task unpacks it into a temporary directory, loads the pack from
there, runs its shard into a temporary run directory, and sends the finished traces (call logs
included), the shard manifest and the event lines back to the driver, which writes them as
ordinary shard run directories for `merge_runs`. So a worker node needs only Wind Tunnel (and
what the agent runs on); nothing is read from or written to a shared disk. Each task runs in a
worker process of its own (`max_calls=1`): a Python pack or agent imported from one shard's
tree is never seen by another.

Ray is an optional dependency (`pip install 'windtunnel[ray]'`), imported only here, only when
this executor is used.
"""

from __future__ import annotations

import dataclasses
import io
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import msgspec
import trio

from ..actors.sinks import Sink
from ..atomic_write import atomic_write
from ..errors import ConfigError
from ..faults.spec import Fault
from ..otel.shipping import ShippedOtel, worker_sinks
from ..rundir.layout import EVENTS_FILE, read_run_file, run_path
from ..rundir.manifest import ShardManifest, check_resumable, write_manifest
from ..rundir.merge import write_run
from ..rundir.results import read_results
from ..runner.agent_spec import AgentSpec
from ..runner.pack_config import load_pack, load_pack_toml
from ..runner.pack_run import PackRunOptions, run_pack
from ..runner.progress import Progress
from ..runner.scenario import ScenarioPack
from ..runner.trace import Trace
from .ray_ship import ShippedPack, unpack
from .shard_run import prepare_shard
from .shards import ShardSpec, parse_shard

__all__ = ["RayShardOutcome", "ShardJob", "import_ray", "ray_cpus", "run_ray_shards"]


class ShardJob(msgspec.Struct, frozen=True, kw_only=True):
    """Everything a Ray task needs to run one shard (plain data, sent as JSON)."""

    pack: ShippedPack
    shard: str
    concurrency: int | None = None
    repeats: int | None = None
    scenario_filter: str | None = None
    agent: AgentSpec | None = None
    faults: list[Fault] = msgspec.field(default_factory=list)
    """`wt run --fault`: injected into every unit, besides its scenario's own."""
    skip: list[str] = msgspec.field(default_factory=list)
    """Units already finished in the driver's shard directory (`--resume`): not run again."""
    otel: ShippedOtel | None = None
    """The driver's OpenTelemetry export, when on: the task exports its own units."""


class ShardPayload(msgspec.Struct, kw_only=True):
    """What a task sends back: the shard's manifest, finished traces and event lines."""

    manifest: ShardManifest
    traces: list[Trace]
    events: str = ""


@dataclass
class RayShardOutcome:
    """One shard's end on Ray: finished (its directory written) or the task's error."""

    spec: ShardSpec
    finished: bool
    error: str | None = None


def import_ray() -> Any:
    """The `ray` module, or a `ConfigError` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ConfigError("the Ray executor needs Ray: pip install 'windtunnel[ray]'") from None
    return ray


def load_shipped(shipped: ShippedPack, tree: Path) -> ScenarioPack:
    """The pack from an unpacked tree: a TOML pack reads its universes' shipped copies; a
    Python pack is imported from the tree."""
    if shipped.toml:
        relocated = {written: str(tree / name) for written, name in shipped.universes.items()}
        return load_pack_toml(tree / shipped.pack, relocated=relocated)
    if str(tree) not in sys.path:
        sys.path.insert(0, str(tree))
    module, sep, attr = shipped.pack.rpartition(":")
    spec = f"{tree / module}{sep}{attr}" if module.endswith(".py") else shipped.pack
    return load_pack(spec, import_from_cwd=False)


@contextmanager
def _working_dir(path: Path) -> Iterator[None]:
    """Run in the shipped tree, as the driver ran in it (a pack's own relative paths)."""
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def run_shard_task(job_json: bytes, archive: bytes) -> bytes:
    """The body of a Ray task: unpack the shipped tree, run one shard with the Trio runtime,
    return its payload as JSON."""
    job = msgspec.json.decode(job_json, type=ShardJob)
    with tempfile.TemporaryDirectory(prefix="windtunnel-ray-") as tmp:
        tree = Path(tmp) / "tree"
        unpack(archive, tree)
        with _working_dir(tree):
            return _run_shard(job, load_shipped(job.pack, tree), Path(tmp) / "run")


def _run_shard(job: ShardJob, pack: ScenarioPack, run_dir: Path) -> bytes:
    options = PackRunOptions(
        run_dir=run_dir,
        concurrency=job.concurrency,
        repeats=job.repeats,
        scenario_filter=job.scenario_filter,
        agent=job.agent,
        faults=tuple(job.faults),
    )
    options, manifest = prepare_shard(pack, parse_shard(job.shard), options)
    if job.skip:
        skip = set(job.skip)
        units = [unit for unit in options.units or [] if unit.id not in skip]
        options = dataclasses.replace(options, units=units)
    quiet = Progress(io.StringIO(), live=False)
    with worker_sinks(job.otel, pack=pack.name) as sinks:
        trio.run(_run_pack, pack, options, quiet, sinks)
    events = run_dir / EVENTS_FILE
    payload = ShardPayload(
        manifest=manifest,
        traces=read_results(run_dir),
        events=events.read_text("utf-8") if events.exists() else "",
    )
    return msgspec.json.encode(payload)


async def _run_pack(
    pack: Any, options: PackRunOptions, progress: Progress, sinks: list[Sink]
) -> None:
    await run_pack(pack, options, progress=progress, sinks=sinks)


def _write_shard(run_dir: Path, payload: ShardPayload) -> None:
    """Write a returned shard as a shard run directory, after the units a resumed shard already
    had there (the task skipped those, so the two never overlap)."""
    earlier = read_results(run_dir) if check_resumable(run_dir, payload.manifest) else []
    write_manifest(run_dir, payload.manifest)
    write_run(run_dir, [*earlier, *payload.traces], payload.manifest.pack)
    if payload.events:
        events = run_path(run_dir, EVENTS_FILE)
        kept = (read_run_file(events, what="an events file") or b"") if earlier else b""
        # A run killed mid-line leaves a partial last line: it goes, the new lines follow.
        kept = kept[: kept.rfind(b"\n") + 1]
        atomic_write(events, kept + payload.events.encode("utf-8"))


def ray_cpus(ray: Any) -> int:
    """CPUs of the connected Ray cluster (at least 1): the shard count of `-j auto`."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM stops the gathering like Ctrl-C does (only the main thread can install it)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_ray_shards(
    jobs: Sequence[tuple[ShardJob, Path]],
    archive: bytes,
    progress: Progress,
    *,
    on_interrupt: Callable[[], None] | None = None,
) -> tuple[bool, list[RayShardOutcome]]:
    """Submit one task per `(job, sub-run dir)` to the connected Ray cluster, each with the
    shipped tree `archive` (put in the object store once); gather them as they end.

    Each finished shard is written to its directory at once, and its units are fed to
    `progress`. Ctrl-C or SIGTERM cancels the tasks still running and returns what finished:
    `(interrupted, outcomes)`. The caller connects (`ray.init`) and disconnects.
    """
    ray = import_ray()
    task = ray.remote(num_cpus=1, max_retries=0, max_calls=1)(run_shard_task)
    pending: dict[Any, tuple[ShardSpec, Path]] = {}
    tree = ray.put(archive) if jobs else None
    for job, run_dir in jobs:
        ref = task.remote(msgspec.json.encode(job), tree)
        pending[ref] = (parse_shard(job.shard), run_dir)
    outcomes: dict[ShardSpec, RayShardOutcome] = {}
    interrupted = False
    with _sigterm_as_interrupt():
        try:
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    spec, run_dir = pending.pop(ref)
                    outcomes[spec] = _collect(ray, ref, spec, run_dir, progress)
        except KeyboardInterrupt:
            interrupted = True
            if on_interrupt is not None:
                on_interrupt()
            for ref in pending:
                ray.cancel(ref, force=True)
    for spec, _ in pending.values():
        outcomes[spec] = RayShardOutcome(spec, finished=False, error="cancelled")
    ordered = [outcomes[parse_shard(job.shard)] for job, _ in jobs]
    return interrupted, ordered


def _collect(
    ray: Any, ref: Any, spec: ShardSpec, run_dir: Path, progress: Progress
) -> RayShardOutcome:
    try:
        data = ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        message = str(cause) if cause is not None else str(exc).strip().splitlines()[-1]
        return RayShardOutcome(spec, finished=False, error=message)
    payload = msgspec.json.decode(data, type=ShardPayload)
    _write_shard(run_dir, payload)
    for trace in payload.traces:
        progress.unit_started()
        progress.unit_finished(trace)
    return RayShardOutcome(spec, finished=True)
