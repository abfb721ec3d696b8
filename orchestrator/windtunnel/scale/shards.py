"""Cutting a plan into shards: which unit runs where, the same answer on every machine.

A shard is written `i/N`, 1-based (`1/4` .. `4/4`), like a CI matrix index; Kubernetes' 0-based
`JOB_COMPLETION_INDEX` is `i - 1`. A unit goes to the shard chosen by *jump consistent hashing*
(Lamping & Veach, 2014) keyed by the first 8 bytes of sha256(unit id):

- it depends on the unit id alone, never on the unit's position, so adding or removing a scenario
  moves no other unit;
- going from N to N+1 shards moves only about 1/(N+1) of the units (the minimum possible);
- it needs no table and no coordination: every machine computes the same assignment.

The plan hash is sha256 over the pack name and the plan's unit ids in plan order; two shard run
directories belong to one run exactly when their plan hashes (and shard counts) are equal.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..errors import ConfigError
from ..runner.units import WorkUnit

__all__ = [
    "SHARD_SCHEME",
    "ShardSpec",
    "parse_shard",
    "plan_hash",
    "select_shard",
    "shard_dirname",
    "shard_from_dirname",
    "shard_of",
]

SHARD_SCHEME = "jump-sha256"
"""The assignment rule recorded in every `shard.json`; merge refuses to mix schemes."""

_MASK64 = (1 << 64) - 1
_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True, order=True)
class ShardSpec:
    """Shard `index` of `count`, 1-based: `ShardSpec(1, 4)` is written `1/4`."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ConfigError(f"shard count must be at least 1, got {self.count}")
        if not 1 <= self.index <= self.count:
            raise ConfigError(f"shard index must be in 1..{self.count} (1-based), got {self.index}")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def contains(self, unit_id: str) -> bool:
        return shard_of(unit_id, self.count) == self.index


def parse_shard(text: str) -> ShardSpec:
    """`"2/4"` -> `ShardSpec(2, 4)`; anything else is a `ConfigError` saying what is expected."""
    match = _SHARD.match(text)
    if match is None:
        raise ConfigError(f"--shard expects i/N with 1 <= i <= N (e.g. 1/4), got {text!r}")
    return ShardSpec(int(match.group(1)), int(match.group(2)))


def _jump(key: int, buckets: int) -> int:
    """Jump consistent hash: a bucket in 0..buckets-1 for a 64-bit key."""
    b, j = -1, 0
    while j < buckets:
        b = j
        key = (key * 2862933555777941757 + 1) & _MASK64
        j = int((b + 1) * (float(1 << 31) / float((key >> 33) + 1)))
    return b


def shard_of(unit_id: str, count: int) -> int:
    """The 1-based shard of `count` that runs `unit_id`."""
    if count < 1:
        raise ConfigError(f"shard count must be at least 1, got {count}")
    key = int.from_bytes(hashlib.sha256(unit_id.encode("utf-8")).digest()[:8], "big")
    return _jump(key, count) + 1


def select_shard(units: Iterable[WorkUnit], spec: ShardSpec) -> list[WorkUnit]:
    """The units of `spec`, in plan order."""
    return [unit for unit in units if spec.contains(unit.id)]


def plan_hash(pack: str, unit_ids: Sequence[str]) -> str:
    """sha256 (hex) of the pack name and the unit ids in plan order."""
    doc = json.dumps({"pack": pack, "units": list(unit_ids)}, separators=(",", ":"))
    return hashlib.sha256(doc.encode("utf-8")).hexdigest()


def shard_dirname(spec: ShardSpec) -> str:
    """The sub-run directory name of a shard under `<run>/shards/`: `2-of-4`."""
    return f"{spec.index}-of-{spec.count}"


def shard_from_dirname(name: str) -> ShardSpec | None:
    """The shard a `shard_dirname` names, or None for any other name."""
    index, sep, count = name.partition("-of-")
    try:
        return parse_shard(f"{index}/{count}") if sep else None
    except ConfigError:
        return None
