"""Write a recording: the universe and the capture log, each atomically (temp file, rename).

A write that fails (disk full, no permission) leaves whatever was there before untouched and
raises one `InputError` naming the file and the reason; the recording stays in memory, so the
caller can report it and write elsewhere.
"""

from __future__ import annotations

import os

from ..atomic_write import atomic_write
from ..universe import write_universe
from .build import Recording

__all__ = ["save_recording", "write_atomically"]


def write_atomically(path: str | os.PathLike[str], data: bytes) -> None:
    atomic_write(path, data)


def save_recording(
    recording: Recording,
    path: str | os.PathLike[str],
    *,
    log: str | os.PathLike[str] | None = None,
) -> None:
    """The log first (it holds everything), then the universe."""
    if log is not None:
        write_atomically(log, b"".join(line + b"\n" for line in recording.log_lines))
    write_universe(recording.universe, path)
