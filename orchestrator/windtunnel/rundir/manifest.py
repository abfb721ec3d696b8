"""`shard.json`: what a shard run directory was asked to run, so a merge can check it.

    {"windtunnel_shard": 1, "scheme": "jump-sha256", "pack": "support-demo",
     "plan_hash": "9f2c...", "shard": "2/4", "plan": ["a#0", "b#0", ...], "units": ["b#0", ...]}

`plan` is every unit id of the whole plan in plan order (so a merge can name the units of a shard
that never arrived), `units` the ids this shard owns. `plan_hash` must equal `plan_hash(pack,
plan)`: a manifest edited by hand or cut short is refused.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import msgspec

from ..atomic_write import atomic_write
from ..errors import ConfigError, InputError
from ..runner.units import WorkUnit
from ..scale.shards import SHARD_SCHEME, ShardSpec, parse_shard, plan_hash, select_shard
from ..universe import _split_msgspec_error
from .layout import MANIFEST_FILE, has_results, read_run_file, run_path

__all__ = [
    "SHARD_FORMAT_VERSION",
    "ShardManifest",
    "build_manifest",
    "check_resumable",
    "read_manifest",
    "write_manifest",
]

SHARD_FORMAT_VERSION = 1


class ShardManifest(msgspec.Struct, frozen=True, kw_only=True):
    """The contents of `shard.json` (see the module docstring)."""

    pack: str
    plan_hash: str
    shard: str
    plan: list[str]
    units: list[str]
    scheme: str = SHARD_SCHEME
    windtunnel_shard: int = SHARD_FORMAT_VERSION

    @property
    def spec(self) -> ShardSpec:
        return parse_shard(self.shard)


def build_manifest(pack: str, plan: Sequence[WorkUnit], spec: ShardSpec) -> ShardManifest:
    """The manifest of shard `spec` of `plan`."""
    ids = [unit.id for unit in plan]
    return ShardManifest(
        pack=pack,
        plan_hash=plan_hash(pack, ids),
        shard=str(spec),
        plan=ids,
        units=[unit.id for unit in select_shard(plan, spec)],
    )


def check_resumable(run_dir: Path, manifest: ShardManifest) -> bool:
    """Whether `run_dir` already holds results, refusing results that are not `manifest`'s.

    A directory whose `results.jsonl` has lines must already carry this very manifest (a resumed
    shard); otherwise resuming would mix units of two plans or two shards.
    """
    if not has_results(run_dir):
        return False
    existing = read_manifest(run_dir) if os.path.lexists(run_path(run_dir, MANIFEST_FILE)) else None
    if existing != manifest:
        what = (
            f"shard {existing.shard} of plan {existing.plan_hash[:12]}"
            if existing is not None
            else "an unsharded run"
        )
        raise ConfigError(
            f"this run directory holds {what}, not shard {manifest.shard} of plan "
            f"{manifest.plan_hash[:12]}; use another -o",
            file=str(run_dir),
        )
    return True


def write_manifest(run_dir: Path, manifest: ShardManifest) -> None:
    """Write `run_dir/shard.json`, refusing a directory that holds another run's results
    (`check_resumable`)."""
    path = run_path(run_dir, MANIFEST_FILE)
    check_resumable(run_dir, manifest)
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(
            f"cannot create the run directory: {exc.strerror}", file=str(run_dir)
        ) from None
    data = msgspec.json.format(msgspec.json.encode(manifest), indent=2) + b"\n"
    atomic_write(path, data)


def read_manifest(run_dir: str | os.PathLike[str]) -> ShardManifest:
    """Read and check `run_dir/shard.json`; every problem is one `InputError` naming the file."""
    path = run_path(run_dir, MANIFEST_FILE)
    data = read_run_file(path, what="a shard manifest")
    if data is None:
        raise InputError(
            "not a shard run directory: no shard.json (run it with wt run --shard i/N)",
            file=os.fspath(run_dir),
        )
    try:
        manifest = msgspec.json.decode(data, type=ShardManifest)
    except msgspec.DecodeError as exc:
        message, where = _split_msgspec_error(exc, data)
        raise InputError(message, file=str(path), path=where) from None
    if manifest.windtunnel_shard != SHARD_FORMAT_VERSION:
        raise InputError(
            f"unknown shard.json version {manifest.windtunnel_shard}; this Wind Tunnel reads "
            f"version {SHARD_FORMAT_VERSION}",
            file=str(path),
            path="$.windtunnel_shard",
        )
    if manifest.scheme != SHARD_SCHEME:
        raise InputError(
            f"unknown shard scheme {manifest.scheme!r}; expected {SHARD_SCHEME!r}",
            file=str(path),
            path="$.scheme",
        )
    try:
        spec = manifest.spec
    except ConfigError as exc:
        raise InputError(exc.message, file=str(path), path="$.shard") from None
    if plan_hash(manifest.pack, manifest.plan) != manifest.plan_hash:
        raise InputError(
            "plan_hash does not match the plan's unit ids (edited or truncated)",
            file=str(path),
            path="$.plan_hash",
        )
    expected = [uid for uid in manifest.plan if spec.contains(uid)]
    if manifest.units != expected:
        raise InputError(
            f"units are not the units of shard {spec} of the plan",
            file=str(path),
            path="$.units",
        )
    return manifest
