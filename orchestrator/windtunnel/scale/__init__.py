"""Past one machine: deterministic shards, merged runs, local worker processes, Ray tasks.

    shards        unit id -> shard (jump consistent hash of sha256(id)), plan hash   (pure)
    shard_run     one shard in this process (the unchanged pack runner, `units=`)
    local         -j N: N `wt run --shard i/N` worker processes, one progress display
    ray_ship      --executor ray: the pack's tree as one archive, shipped through Ray's object store
    ray_connect   --executor ray: which addresses a driver joins a cluster through
    ray_executor  --executor ray: every shard a Ray task running `trio.run` (optional extra)
    parallel_run  one run as shards (local workers or Ray), merged into the run directory

Shard manifests (`shard.json`) and merges are files of the run directory: `windtunnel.rundir`.
docs/scale.md is the user guide.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .parallel_run import ParallelRun, run_parallel
    from .shard_run import prepare_shard
    from .shards import ShardSpec, parse_shard, plan_hash, select_shard, shard_dirname, shard_of

__all__ = [
    "ParallelRun",
    "ShardSpec",
    "parse_shard",
    "plan_hash",
    "prepare_shard",
    "run_parallel",
    "select_shard",
    "shard_dirname",
    "shard_of",
]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        ".parallel_run": ("ParallelRun", "run_parallel"),
        ".shard_run": ("prepare_shard",),
        ".shards": (
            "ShardSpec",
            "parse_shard",
            "plan_hash",
            "select_shard",
            "shard_dirname",
            "shard_of",
        ),
    },
)
