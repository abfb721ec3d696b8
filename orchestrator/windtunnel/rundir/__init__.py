"""The run directory: what `wt run` writes, `wt merge` joins and `wt score` / `wt diff` read.

    layout        where each file lives; paths confined to the directory, links refused
    results       results.jsonl + traces/: written unit by unit, read back and checked
    summary_file  summary.json, one scenario at a time
    pack_ref      pack.json: the pack a run came from, never loaded from inside the run
    manifest      shard.json: the plan and the units a shard run directory owns
    shard_check   a shard's trace files checked against its results lines
    merge         shard run directories -> one run directory, every unit exactly once

A run directory is data, often a CI artifact from elsewhere: nothing in it is imported or run,
and every write goes through `atomic_write` / `open_append`, which never follow a link planted
there. docs/run-directory.md describes the files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .layout import RESULTS_FILE, TRACES_DIR, trace_filename
    from .manifest import ShardManifest, build_manifest, read_manifest, write_manifest
    from .merge import MergeReport, merge_runs
    from .pack_ref import RecordedPack, load_recorded_pack, resolve_pack_ref, write_pack_ref
    from .results import RunUnits, RunWriter, iter_rows, read_results, write_traces

__all__ = [
    "RESULTS_FILE",
    "TRACES_DIR",
    "MergeReport",
    "RecordedPack",
    "RunUnits",
    "RunWriter",
    "ShardManifest",
    "build_manifest",
    "iter_rows",
    "load_recorded_pack",
    "merge_runs",
    "read_manifest",
    "read_results",
    "resolve_pack_ref",
    "trace_filename",
    "write_manifest",
    "write_pack_ref",
    "write_traces",
]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        ".layout": ("RESULTS_FILE", "TRACES_DIR", "trace_filename"),
        ".manifest": ("ShardManifest", "build_manifest", "read_manifest", "write_manifest"),
        ".merge": ("MergeReport", "merge_runs"),
        ".pack_ref": ("RecordedPack", "load_recorded_pack", "resolve_pack_ref", "write_pack_ref"),
        ".results": ("RunUnits", "RunWriter", "iter_rows", "read_results", "write_traces"),
    },
)
