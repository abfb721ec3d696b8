"""Where things live in a run directory, and how a path inside one is made.

A run directory is data: often a CI artifact someone downloaded. Every path this package writes
or reads is made here from the run directory and names of its own (`run_path`), each one plain
component, so no path leaves the directory; a sub-directory it writes into (`traces/`,
`shards/<i>-of-<n>/`, `rescored/`) must be a real directory (`ensure_dir`), not a link planted
to send the writes elsewhere; and files are written only through `atomic_write` and
`open_append`, which refuse a planted link by name. The run directory itself is the one the
user named, so a link there (`-o runs/latest`) is followed as the user asked.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

from ..errors import InputError
from ..input_files import LINK_REFUSED, file_kind, read_input

__all__ = [
    "EVENTS_FILE",
    "JUNIT_FILE",
    "MANIFEST_FILE",
    "MERGE_FILE",
    "PACK_REF_FILE",
    "REPORT_FILE",
    "RESCORED_DIR",
    "RESULTS_FILE",
    "SHARDS_DIR",
    "SUMMARY_FILE",
    "TRACES_DIR",
    "ensure_dir",
    "has_results",
    "open_for_reading",
    "read_run_file",
    "run_path",
    "trace_filename",
    "trace_relpath",
]

RESULTS_FILE = "results.jsonl"
TRACES_DIR = "traces"
SUMMARY_FILE = "summary.json"
JUNIT_FILE = "junit.xml"
REPORT_FILE = "report.html"
EVENTS_FILE = "events.jsonl"
PACK_REF_FILE = "pack.json"
MANIFEST_FILE = "shard.json"
MERGE_FILE = "merge.json"
SHARDS_DIR = "shards"
RESCORED_DIR = "rescored"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


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


def run_path(root: str | os.PathLike[str], *names: str) -> Path:
    """`root/names...`, each name one plain component: never `..`, `.`, empty or with a slash."""
    for name in names:
        if name in ("", ".", "..") or "/" in name or "\0" in name or os.sep in name:
            raise ValueError(f"{name!r} is not a plain name inside a run directory")
    return Path(root).joinpath(*names)


def ensure_dir(path: Path, *, create: bool = True) -> None:
    """Make sure `path` is a real directory (created when missing and `create`): a symbolic
    link or anything else in its place is an `InputError` naming it, nothing written."""
    if create:
        try:
            path.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            pass  # something else is there: named below
        except OSError as exc:
            raise InputError(
                f"cannot create the directory: {exc.strerror or exc}", file=os.fspath(path)
            ) from None
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=os.fspath(path)) from None
    if stat.S_ISLNK(info.st_mode):
        raise InputError(
            "is a symbolic link, not a directory: refusing to write through it",
            file=os.fspath(path),
        )
    if not stat.S_ISDIR(info.st_mode):
        raise InputError("is not a directory", file=os.fspath(path))


def open_for_reading(path: Path, *, what: str) -> int | None:
    """A descriptor reading the regular file `path`, or None when there is none; a symbolic
    link or anything but a regular file in its place is an `InputError` naming it (`what`
    names its role, as `read_input` does)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY)
    except (FileNotFoundError, NotADirectoryError):
        return None  # a run directory not made yet (or not makeable: said when it is made)
    except OSError as exc:
        if os.path.islink(path):
            raise InputError(LINK_REFUSED, file=os.fspath(path)) from None
        raise InputError(f"cannot read: {exc.strerror or exc}", file=os.fspath(path)) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise InputError(f"is {file_kind(info.st_mode)}, expected {what}", file=os.fspath(path))
    os.set_blocking(fd, True)
    return fd


def read_run_file(path: Path, *, what: str) -> bytes | None:
    """The bytes of the run directory's regular file `path` (at most `input_limit()`), or None
    when there is none; a link, anything but a regular file, or a file too large is an
    `InputError` naming it (`what` names its role)."""
    if not os.path.lexists(path):
        return None
    return read_input(path, what=what, nofollow=True)


def has_results(root: str | os.PathLike[str]) -> bool:
    """Whether the run directory `root` holds a non-empty `results.jsonl` (a link planted in
    its place is an `InputError` naming it)."""
    fd = open_for_reading(run_path(root, RESULTS_FILE), what="a results file")
    if fd is None:
        return False
    try:
        return os.fstat(fd).st_size > 0
    finally:
        os.close(fd)
