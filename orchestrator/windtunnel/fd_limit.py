"""The open-file limit: every server holds a listening socket, plus one per open connection.

Many machines start processes with a soft limit of 1024 and a far higher hard one, so a fleet
raises the soft limit to the hard one when it opens. When descriptors still run out, messages say
which limit was hit, how high it is, and what to do.
"""

from __future__ import annotations

import errno
import resource

__all__ = ["fd_hint", "open_file_limit", "raise_open_file_limit"]


def raise_open_file_limit() -> int:
    """Raise the soft open-file limit to the hard one; return the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            return soft
        return hard
    return soft


def open_file_limit() -> int:
    """The soft open-file limit in force (-1 for unlimited)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return -1 if soft == resource.RLIM_INFINITY else soft


def fd_hint(error_number: int | None) -> str:
    """What to add to a message about `error_number`: a hint for running out of descriptors,
    else nothing."""
    if error_number == errno.EMFILE:
        return f" (open-file limit {open_file_limit()}; raise it with ulimit -n)"
    if error_number == errno.ENFILE:
        return " (the system's file table is full; see fs.file-max)"
    return ""
