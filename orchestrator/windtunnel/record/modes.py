"""Record modes: how a replay treats the live upstream, one switch everywhere. Pure and light
(parsing a pack or `wt serve`'s options loads nothing else).

- `none` (the default, CI's): never reaches the upstream; a miss is a divergence, answered by
  its policy;
- `once`: records the universe when its file does not exist yet (as `wt record`), else replays
  as `none`;
- `new_episodes`: forwards each miss to the live upstream, serves its answer, appends it to the
  universe, and reports it as a `recorded_live` divergence;
- `all`: records the universe again, replacing the file.

The mode comes from the command line or the pack when given there, else from the
`WT_RECORD_MODE` environment variable (the one switch for CI), else `none`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, get_args

from ..errors import ConfigError

__all__ = [
    "RECORD_MODES",
    "RECORD_MODE_ENV",
    "RecordMode",
    "Served",
    "choose_record_mode",
    "served_as",
]

RecordMode = Literal["none", "once", "new_episodes", "all"]
RECORD_MODES: tuple[str, ...] = get_args(RecordMode)
RECORD_MODE_ENV = "WT_RECORD_MODE"

Served = Literal["replay", "live_misses", "record"]
"""What a server does under a mode: replay only, replay with misses forwarded, or record."""


def choose_record_mode(
    given: str | None, *, where: str, environ: Mapping[str, str] | None = None
) -> RecordMode:
    """The mode `given` (named by `where` in errors), else `WT_RECORD_MODE`, else `none`."""
    environ = os.environ if environ is None else environ
    if given is None:
        given = environ.get(RECORD_MODE_ENV) or None
        where = RECORD_MODE_ENV
    if given is None:
        return "none"
    if given not in RECORD_MODES:
        raise ConfigError(
            f"record mode {given!r}: expected one of {', '.join(RECORD_MODES)}", file=where
        )
    return given  # type: ignore[return-value]  # checked against the Literal's values


def served_as(mode: RecordMode, universe_path: str | os.PathLike[str]) -> Served:
    """What serving `universe_path` under `mode` means now."""
    if mode == "all" or (mode == "once" and not Path(universe_path).exists()):
        return "record"
    if mode == "new_episodes":
        return "live_misses"
    return "replay"
