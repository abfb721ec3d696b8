"""A run directory read for comparison: its units (results rows) grouped by scenario.

A run directory is read from its `results.jsonl`; a parallel run (`wt run -j N`) that was never
merged is read from every `shards/*/results.jsonl` under it. Rows carry no call log: call logs are
read from `traces/` only for the units a diff shows.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..rundir.layout import RESULTS_FILE
from ..rundir.results import load_full_trace, read_results
from ..runner.trace import Trace

__all__ = ["RunData", "load_run"]

SHARDS_DIR = "shards"


@dataclass
class RunData:
    """One run's units: by scenario (first-seen order), each remembering its directory."""

    path: Path
    pack: str
    scenarios: dict[str, list[Trace]] = field(default_factory=dict)
    homes: dict[str, Path] = field(default_factory=dict)

    @property
    def units(self) -> int:
        return sum(len(rows) for rows in self.scenarios.values())

    def full_trace(self, row: Trace) -> Trace:
        """The unit with its call log (the row itself when its trace file is unusable)."""
        return load_full_trace(self.homes.get(row.unit_id, self.path), row)


def _result_dirs(path: Path) -> list[Path]:
    if (path / RESULTS_FILE).is_file():
        return [path]
    shards = path / SHARDS_DIR
    found = sorted(p.parent for p in shards.glob(f"*/{RESULTS_FILE}")) if shards.is_dir() else []
    return found


def _pack_name(path: Path) -> str:
    try:
        pack = json.loads((path / "summary.json").read_text(encoding="utf-8")).get("pack")
    except (OSError, ValueError, AttributeError):
        return path.name
    return pack if isinstance(pack, str) else path.name


def load_run(run_dir: str | os.PathLike[str]) -> RunData:
    """Read a run directory; an `InputError` names it when it holds no finished unit."""
    path = Path(run_dir)
    if not path.is_dir():
        raise InputError("not a run directory (no such directory)", file=os.fspath(path))
    dirs = _result_dirs(path)
    if not dirs:
        raise InputError(
            f"not a run directory: no {RESULTS_FILE} here nor under {SHARDS_DIR}/*/",
            file=os.fspath(path),
        )
    run = RunData(path=path, pack=_pack_name(path))
    for home in dirs:
        for row in read_results(home, with_calls=False):
            if row.unit_id not in run.homes:  # a unit in two shards: the first one counts
                run.scenarios.setdefault(row.scenario, []).append(row)
                run.homes[row.unit_id] = home
    if not run.units:
        raise InputError(f"no finished unit in {RESULTS_FILE}", file=os.fspath(path))
    return run
