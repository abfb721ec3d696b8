"""`wt merge`: shard run directories -> one run directory, every unit of the plan exactly once.

The inputs must be shards of one plan (equal plan hashes and shard counts), each shard at most
once, each holding only its own units. Traces are written in plan order whatever the order of the
inputs, so a merge is order-independent; the summary (pass@k and pass^k too) is computed afresh
over every unit, so repeats of one scenario spread over several shards count together.
Anything missing or doubled is an `InputError` naming the unit ids.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from ..atomic_write import atomic_write
from ..errors import InputError
from ..runner.summary import Summary
from ..runner.trace import Trace
from ..scale.shards import ShardSpec
from .layout import EVENTS_FILE, MERGE_FILE, RESULTS_FILE, has_results, read_run_file, run_path
from .manifest import ShardManifest, read_manifest
from .results import RunWriter, encode_unit, read_results
from .shard_check import verified_trace

__all__ = ["MergeReport", "merge_runs", "name_units", "write_run"]


@dataclass(frozen=True)
class MergeReport:
    """What a merge wrote: the summary, the shards merged and the units still missing."""

    summary: Summary
    plan_hash: str
    count: int
    merged: list[ShardSpec]
    missing: list[str] = field(default_factory=list)


class _MergeRecord(msgspec.Struct, kw_only=True):
    pack: str
    plan_hash: str
    shards: int
    merged: list[str]
    units: int
    missing: list[str]
    sources: list[str]
    windtunnel_merge: int = 1


def name_units(ids: Iterable[str], limit: int = 10) -> str:
    """`a#0, b#0, c#1` — at most `limit` ids, then `and N more`."""
    listed = list(ids)
    shown = ", ".join(listed[:limit])
    rest = len(listed) - limit
    return f"{shown} and {rest} more" if rest > 0 else shown


def _check_one_plan(shards: list[tuple[Path, ShardManifest]]) -> ShardManifest:
    plans: dict[str, list[Path]] = {}
    for path, manifest in shards:
        plans.setdefault(manifest.plan_hash, []).append(path)
    if len(plans) > 1:
        described = "; ".join(
            f"plan {plan[:12]} in {', '.join(map(str, paths))}" for plan, paths in plans.items()
        )
        raise InputError(f"the shards come from different plans: {described}")
    first = shards[0][1]
    counts = {m.spec.count for _, m in shards}
    if len(counts) > 1:
        described = ", ".join(f"{m.shard} in {path}" for path, m in shards)
        raise InputError(f"the shards cut the plan into different counts: {described}")
    return first


def _check_no_doubles(shards: list[tuple[Path, ShardManifest]]) -> None:
    seen: dict[int, Path] = {}
    for path, manifest in shards:
        spec = manifest.spec
        if spec.index in seen:
            doubled = f" (units {name_units(manifest.units)} ran twice)" if manifest.units else ""
            raise InputError(f"shard {spec} given twice: {seen[spec.index]} and {path}{doubled}")
        seen[spec.index] = path


def _read_shard(path: Path, manifest: ShardManifest) -> list[Trace]:
    traces = [verified_trace(path, row) for row in read_results(path, with_calls=False)]
    owned = set(manifest.units)
    strays = [t.unit_id for t in traces if t.unit_id not in owned]
    if strays:
        raise InputError(
            f"holds units that are not shard {manifest.shard}'s: {name_units(strays)}",
            file=str(path),
        )
    return traces


def _missing_message(
    missing: list[str], absent: list[ShardSpec], shards: list[tuple[Path, ShardManifest]]
) -> str:
    parts = [f"{len(missing)} unit(s) of the plan are missing: {name_units(missing)}"]
    if absent:
        parts.append(f"shard(s) {', '.join(map(str, absent))} not given")
    missing_set = set(missing)
    short = [f"{m.shard} ({path})" for path, m in shards if missing_set.intersection(m.units)]
    if short:
        parts.append(f"unfinished: {', '.join(short)}")
    return "; ".join(parts)


def _concat_events(shards: list[tuple[Path, ShardManifest]], out: Path) -> None:
    chunks = []
    for path, _ in shards:
        data = read_run_file(run_path(path, EVENTS_FILE), what="an events file")
        if data is not None:
            chunks.append(data[: data.rfind(b"\n") + 1])
    if any(chunks):
        atomic_write(run_path(out, EVENTS_FILE), b"".join(chunks))


def write_run(target: Path, traces: list[Trace], pack: str) -> Summary:
    """Write a whole run at once (merge, Ray shards) as `write_traces` would, flushing once.

    The run is derived data (a merge can be redone from its shards), so traces are not fsynced
    one by one: every file is written, the OS flushes them all once, and only then
    `results.jsonl` appears (atomically), so a half-written merge never reads as finished.
    """
    writer = RunWriter(target, pack=pack)
    lines = []
    for trace in traces:
        data, line = encode_unit(trace)
        atomic_write(writer.trace_path(trace.unit_id), data, fsync=False, sync_dir=False)
        lines.append(line)
    os.sync()
    atomic_write(run_path(target, RESULTS_FILE), b"".join(lines))
    return RunWriter(target, pack=pack).finish()


def merge_runs(
    dirs: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    allow_missing: bool = False,
) -> MergeReport:
    """Merge shard run directories into `out` (results, traces, summary, JUnit, HTML, events).

    Refuses (an `InputError`, nothing written) shards of different plans or counts, a shard given
    twice, a shard holding units that are not its own, and, unless `allow_missing`, a plan unit
    that no shard finished. `out` must not already hold results.
    """
    if not dirs:
        raise InputError("nothing to merge: give at least one shard run directory")
    target = Path(out)
    if has_results(target):
        raise InputError("already holds results; merge into a new directory", file=str(target))
    loaded = [(Path(d), read_manifest(d)) for d in dirs]
    first = _check_one_plan(loaded)
    _check_no_doubles(loaded)
    shards = sorted(loaded, key=lambda item: item[1].spec)
    by_id: dict[str, Trace] = {}
    for path, manifest in shards:
        for trace in _read_shard(path, manifest):
            by_id[trace.unit_id] = trace
    missing = [uid for uid in first.plan if uid not in by_id]
    given = {m.spec.index for _, m in shards}
    count = first.spec.count
    absent = [ShardSpec(i, count) for i in range(1, count + 1) if i not in given]
    if missing and not allow_missing:
        raise InputError(_missing_message(missing, absent, shards))
    ordered = [by_id[uid] for uid in first.plan if uid in by_id]
    summary = write_run(target, ordered, first.pack)
    _concat_events(shards, target)
    record = _MergeRecord(
        pack=first.pack,
        plan_hash=first.plan_hash,
        shards=count,
        merged=[m.shard for _, m in shards],
        units=len(ordered),
        missing=missing,
        sources=[str(path) for path, _ in shards],
    )
    atomic_write(
        run_path(target, MERGE_FILE), msgspec.json.format(msgspec.json.encode(record)) + b"\n"
    )
    return MergeReport(
        summary=summary,
        plan_hash=first.plan_hash,
        count=count,
        merged=[m.spec for _, m in shards],
        missing=missing,
    )
