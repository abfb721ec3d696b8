"""One clear log line when accepting connections runs out of descriptors, instead of tracebacks.

Every server (hypercorn's Trio worker) and the event feed accept connections with Trio's
`serve_listeners`. When `accept` fails for lack of resources (EMFILE: the open-file limit; ENFILE,
ENOMEM, ENOBUFS) Trio logs the error with its full traceback and retries 100 ms later, for as long
as it lasts: ten tracebacks a second per listener. The retrying is right, and we keep it: the
listener and every open connection are fine, descriptors come back as clients disconnect, and a
waiting client sits in the kernel's accept queue meanwhile. Failing the server instead would drop
every call in flight and turn a burst into an outage. What the user needs is one line saying what
ran out and how to raise it, and a reminder (with how many retries since) while it lasts.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
import time
from collections.abc import Callable

import structlog

from ..fd_limit import fd_hint

__all__ = ["ACCEPT_LOGGER", "AcceptRetryFilter", "install_accept_filter"]

ACCEPT_LOGGER = "trio.serve_listeners"
REMIND_EVERY_S = 60.0
# The errors Trio's accept loop retries (trio._highlevel_serve_listeners.ACCEPT_CAPACITY_ERRNOS).
_CAPACITY = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS})

logger = structlog.get_logger("windtunnel")


class AcceptRetryFilter(logging.Filter):
    """Replaces Trio's accept-retry records with an `accept_failed` event, at most one per
    `every_s` for the whole process (all listeners fail together when descriptors run out)."""

    def __init__(
        self, *, every_s: float = REMIND_EVERY_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self.every_s = every_s
        self._clock = clock
        self._last: float | None = None
        self._retries = 0  # failures swallowed since the last line
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        number = exc.errno if isinstance(exc, OSError) else None
        if number not in _CAPACITY:
            return True  # anything else Trio says is shown as it is
        now = self._clock()
        with self._lock:
            if self._last is not None and now - self._last < self.every_s:
                self._retries += 1
                return False
            self._last, retries, self._retries = now, self._retries, 0
        code = errno.errorcode[number]
        logger.error(
            "accept_failed",
            error=f"{code}: {os.strerror(number)}{fd_hint(number)}",
            errno=code,
            retries=retries,
            detail="new connections wait in the accept queue, retried every 0.1 s; open "
            "connections are served",
        )
        return False


def install_accept_filter() -> None:
    """Put one `AcceptRetryFilter` on Trio's accept logger (again: no second one)."""
    accept = logging.getLogger(ACCEPT_LOGGER)
    if not any(isinstance(f, AcceptRetryFilter) for f in accept.filters):
        accept.addFilter(AcceptRetryFilter())
