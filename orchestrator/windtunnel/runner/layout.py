"""Where things live in a run directory, and the confined file name of each unit's trace."""

from __future__ import annotations

import hashlib
import re

__all__ = ["RESULTS_FILE", "TRACES_DIR", "trace_filename", "trace_relpath"]

RESULTS_FILE = "results.jsonl"
TRACES_DIR = "traces"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def trace_filename(unit_id: str) -> str:
    """A file name for a unit's trace: a readable slug plus a hash of the exact id.

    Only `[A-Za-z0-9._-]` survive, leading dots are dropped and the slug is cut to 80 characters,
    so no unit id can name a path outside `traces/`; the hash keeps distinct ids distinct.
    """
    slug = _UNSAFE.sub("_", unit_id).lstrip(".")[:80] or "unit"
    digest = hashlib.sha256(unit_id.encode("utf-8")).hexdigest()[:10]
    return f"{slug}-{digest}.json"


def trace_relpath(unit_id: str) -> str:
    """The unit's trace file relative to the run directory (always `traces/<name>`)."""
    return f"{TRACES_DIR}/{trace_filename(unit_id)}"
