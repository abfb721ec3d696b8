"""Run one shard in this process: record its `shard.json`, then run exactly its units.

The runtime is the unchanged pack runner: a shard is a `PackRunOptions(units=...)` run.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ..rundir.manifest import ShardManifest, build_manifest, check_resumable, write_manifest
from ..rundir.results import read_results
from ..runner.pack_run import PackRunOptions
from ..runner.scenario import ScenarioPack
from ..runner.units import plan_units
from .shards import ShardSpec, select_shard

__all__ = ["finished_units", "prepare_shard"]


def prepare_shard(
    pack: ScenarioPack, spec: ShardSpec, options: PackRunOptions
) -> tuple[PackRunOptions, ShardManifest]:
    """Write `shard.json` into the run directory and return options that run only this shard.

    The plan honours the options' `repeats` and `scenario_filter`, exactly as an unsharded run
    would; a run directory holding another shard's or another plan's results is refused.
    """
    plan = plan_units(pack, scenario_filter=options.scenario_filter, repeats=options.repeats)
    manifest = build_manifest(pack.name, plan, spec)
    write_manifest(options.run_dir, manifest)
    units = select_shard(plan, spec)
    return dataclasses.replace(options, units=units), manifest


def finished_units(run_dir: Path, manifest: ShardManifest) -> list[str]:
    """The units of shard `manifest` already finished in `run_dir`, in plan order.

    For a shard resumed somewhere else (a Ray task) than the directory it is kept in: refuses,
    as `prepare_shard` would, a directory holding another shard's or another plan's results.
    """
    if not check_resumable(run_dir, manifest):
        return []
    done = {trace.unit_id for trace in read_results(run_dir, with_calls=False)}
    return [uid for uid in manifest.units if uid in done]
