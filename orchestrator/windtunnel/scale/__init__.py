"""Past one machine: deterministic shards, merged runs, local worker processes, Ray tasks.

    shards        unit id -> shard (jump consistent hash of sha256(id)), plan hash   (pure)
    manifest      shard.json: the plan and the units a shard run directory owns
    shard_run     one shard in this process (the unchanged pack runner, `units=`)
    merge         shard run directories -> one run directory, every unit exactly once
    local         -j N: N `wt run --shard i/N` worker processes, one progress display
    ray_executor  --executor ray: every shard a Ray task running `trio.run` (optional extra)

docs/scale.md is the user guide.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .manifest import (
        MANIFEST_FILE,
        ShardManifest,
        build_manifest,
        read_manifest,
        write_manifest,
    )
    from .merge import MergeReport, merge_runs
    from .shard_run import prepare_shard
    from .shards import ShardSpec, parse_shard, plan_hash, select_shard, shard_dirname, shard_of

__all__ = [
    "MANIFEST_FILE",
    "MergeReport",
    "ShardManifest",
    "ShardSpec",
    "build_manifest",
    "merge_runs",
    "parse_shard",
    "plan_hash",
    "prepare_shard",
    "read_manifest",
    "select_shard",
    "shard_dirname",
    "shard_of",
    "write_manifest",
]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        ".manifest": (
            "MANIFEST_FILE",
            "ShardManifest",
            "build_manifest",
            "read_manifest",
            "write_manifest",
        ),
        ".merge": ("MergeReport", "merge_runs"),
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
