"""Reading an input file that may be anything: a FIFO, a device, a sparse 2 GiB file.

Every file Wind Tunnel reads on a user's behalf (universes, packs, traces, a shard directory's
files) goes through `read_input`, which refuses up front, with one line naming the file, what
never ends or never comes: it opens without blocking (a FIFO with no writer would wait forever in
`open`), refuses anything but a regular file (FIFOs, sockets, `/dev/zero`, terminals), refuses a
file larger than the limit from its size before reading a byte, and reads at most the limit plus
one byte, so a file that grows while it is read cannot take memory without bound either.
"""

from __future__ import annotations

import os
import stat
from typing import Final

from .errors import InputError

__all__ = [
    "LINK_REFUSED",
    "MAX_INPUT_BYTES",
    "MAX_PACK_BYTES",
    "file_kind",
    "input_limit",
    "read_input",
]

MAX_INPUT_BYTES: Final = 256 * 1024 * 1024
"""Default limit of a universe, trace or run file (`WT_MAX_INPUT_BYTES` overrides it)."""
MAX_PACK_BYTES: Final = 16 * 1024 * 1024
"""Limit of a TOML pack: scenarios and paths, never recorded data."""
LIMIT_VARIABLE: Final = "WT_MAX_INPUT_BYTES"
LINK_REFUSED: Final = "is a symbolic link, not a regular file: a run directory's files are its own"
"""Why a file read with `nofollow` (a run directory's) is refused when it is a link."""
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def input_limit() -> int:
    """The size limit of data files: `WT_MAX_INPUT_BYTES` when set (a positive integer)."""
    text = os.environ.get(LIMIT_VARIABLE)
    if text is None:
        return MAX_INPUT_BYTES
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise InputError(f"{LIMIT_VARIABLE} must be a positive number of bytes, got {text!r}")
    return value


def file_kind(mode: int) -> str:
    """What a file that is not a regular one is, for messages ("a FIFO (named pipe)")."""
    return _kind(mode)


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def read_input(
    path: str | os.PathLike[str],
    *,
    what: str,
    error: type[InputError] = InputError,
    limit: int | None = None,
    nofollow: bool = False,
) -> bytes:
    """The bytes of the regular file `path`, at most `limit` of them (default `input_limit()`).

    `what` names the file's role in messages ("a universe file"); every refusal is an `error`
    naming the file. With `nofollow`, a symbolic link is refused too (`LINK_REFUSED`).
    """
    file = os.fspath(path)
    cap = input_limit() if limit is None else limit
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
    try:
        fd = os.open(file, flags | (_NOFOLLOW if nofollow else 0))
    except FileNotFoundError:
        raise error("no such file", file=file) from None
    except OSError as exc:
        if nofollow and os.path.islink(file):
            raise error(LINK_REFUSED, file=file) from None
        raise error(f"cannot read: {exc.strerror or exc}", file=file) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(f"is {_kind(info.st_mode)}, expected {what}", file=file)
        if info.st_size > cap:
            raise error(_too_large(f"is {info.st_size:,} bytes", cap, what, limit), file=file)
        chunks: list[bytes] = []
        size = 0
        while size <= cap:
            chunk = os.read(fd, min(cap + 1 - size, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > cap:
            raise error(_too_large("grew while read", cap, what, limit), file=file)
        return b"".join(chunks)
    except OSError as exc:
        raise error(f"cannot read: {exc.strerror or exc}", file=file) from None
    finally:
        os.close(fd)


def _too_large(found: str, cap: int, what: str, fixed_limit: int | None) -> str:
    hint = "" if fixed_limit is not None else f" (set {LIMIT_VARIABLE} to allow more)"
    return f"{found}; {what} may have at most {cap:,} bytes{hint}"
