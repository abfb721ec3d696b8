"""The one way Wind Tunnel writes a file: atomically, and never through a link.

`atomic_write` / `atomic_stream` write `.<name>.tmp` in the target's own directory, fsync it and
rename it over the target, so a reader sees the old file or the new one, never half of one. The
temporary file is created with `O_CREAT | O_EXCL | O_NOFOLLOW`: a name planted in its place (a
symbolic link to a file elsewhere, a FIFO) is refused, never written through. A target that is a
symbolic link or not a regular file is refused too, naming it: renaming over a link would not
follow it, but a link where a file of ours belongs is a planted file, and the user should hear of
it. `open_append` is the same rule for files that grow line by line (`results.jsonl`,
`events.jsonl`): no link followed, no file shared with another name (a hard link) written.

This module sits at the bottom of the import graph (only `errors`), so the pure universe format
can use it as well as the run directory, `wt record` and `wt import`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from .errors import InputError

__all__ = ["atomic_stream", "atomic_write", "fsync_dir", "open_append", "refuse_planted"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def refuse_planted(path: Path, *, error: type[InputError] = InputError) -> bool:
    """Whether `path` exists (not following a link); an `error` naming it when it is anything
    but a regular file of its own (a symbolic link, a directory, a FIFO, a device)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise error(f"cannot write: {exc.strerror or exc}", file=os.fspath(path)) from None
    if not stat.S_ISREG(info.st_mode):
        raise error(
            f"is {_kind(info.st_mode)}, not a regular file: refusing to write through it",
            file=os.fspath(path),
        )
    return True


def _cannot_write(exc: OSError, path: Path, error: type[InputError]) -> InputError:
    hint = "; raise the open-file limit (ulimit -n)" if exc.errno == errno.EMFILE else ""
    if exc.errno == errno.ELOOP:
        return error(
            "is a symbolic link, not a regular file: refusing to write through it",
            file=os.fspath(path),
        )
    return error(f"cannot write: {exc.strerror or exc}{hint}", file=os.fspath(path))


def atomic_write(
    path: str | os.PathLike[str],
    data: bytes,
    *,
    fsync: bool = True,
    sync_dir: bool = True,
    error: type[InputError] = InputError,
) -> None:
    """Write `data` to `path` atomically (see the module docstring).

    `sync_dir=False` leaves making the rename durable to the caller (one directory fsync for a
    batch of files); `fsync=False` is for derived files the caller flushes all at once
    (`os.sync`). Every failure is one `error` naming the file; the target is then untouched.
    """
    with atomic_stream(path, fsync=fsync, sync_dir=sync_dir, error=error) as f:
        f.write(data)


@contextlib.contextmanager
def atomic_stream(
    path: str | os.PathLike[str],
    *,
    fsync: bool = True,
    sync_dir: bool = True,
    error: type[InputError] = InputError,
) -> Iterator[BinaryIO]:
    """`atomic_write` for data written piece by piece: write to the yielded file."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp")
    refuse_planted(target, error=error)
    if refuse_planted(tmp, error=error):
        # A regular file of that name is what an interrupted write leaves behind.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | os.O_CLOEXEC, 0o666)
    except FileExistsError:
        raise error(
            "appeared while writing (planted?): refusing to write through it",
            file=os.fspath(tmp),
        ) from None
    except OSError as exc:
        # A link planted at the temporary name is named; any other failure is the target's.
        raise _cannot_write(exc, tmp if exc.errno == errno.ELOOP else target, error) from None
    written = False
    try:
        with open(fd, "wb") as f:
            yield f
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        os.replace(tmp, target)
        written = True
    except OSError as exc:
        raise _cannot_write(exc, target, error) from None
    finally:
        if not written:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    if sync_dir:
        fsync_dir(target.parent)


def open_append(path: str | os.PathLike[str], *, error: type[InputError] = InputError) -> int:
    """A descriptor appending to the regular file `path` (created if missing), never through a
    symbolic link and never to a file another name shares (a hard link): each is an `error`
    naming the file. Also for truncating: the descriptor is opened read-write."""
    try:
        fd = os.open(
            path,
            os.O_RDWR | os.O_APPEND | os.O_CREAT | _NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
            0o644,
        )
    except OSError as exc:
        raise _cannot_write(exc, Path(path), error) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(
                f"is {_kind(info.st_mode)}, not a regular file: refusing to write to it",
                file=os.fspath(path),
            )
        if info.st_nlink > 1:
            raise error(
                f"has {info.st_nlink} names (a hard link): refusing to write to it",
                file=os.fspath(path),
            )
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def fsync_dir(directory: str | os.PathLike[str]) -> None:
    """Make a rename or a new file in `directory` durable (POSIX; a no-op where unsupported)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
