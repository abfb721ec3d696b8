"""Process groups that must not outlive this process, even when it is killed with SIGKILL.

Agents and shard workers run in process groups of their own, which Wind Tunnel kills when a unit
ends, times out or is interrupted. SIGKILL leaves no chance for that: without help the agents of
a killed `wt run` would run on, orphaned. Linux's `PR_SET_PDEATHSIG` does not fit, because Trio
starts processes from a worker thread and the signal fires when that *thread* exits.

So the first group to watch starts a reaper: a tiny Python process, in a session of its own
(a Ctrl-C at the terminal does not reach it), that reads `+PGID` / `-PGID` lines from a pipe only
this process holds. When this process dies, however it dies, the kernel closes the pipe; the
reaper reads end-of-file, sends SIGKILL to every group still listed, and exits. On a normal exit
the list is empty and the reaper simply exits.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from typing import IO

__all__ = ["forget_group", "watch_group"]

_REAPER = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
groups = set()
for line in sys.stdin.buffer:
    pgid = int(line[1:])
    if line[:1] == b"+":
        groups.add(pgid)
    else:
        groups.discard(pgid)
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
"""


class _Reaper:
    """The reaper process of this process, started on first use (and again if it died)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._groups: set[int] = set()

    def watch(self, pgid: int) -> None:
        with self._lock:
            self._groups.add(pgid)
            self._send(f"+{pgid}\n")

    def forget(self, pgid: int) -> None:
        with self._lock:
            if pgid in self._groups:
                self._groups.discard(pgid)
                self._send(f"-{pgid}\n")

    def forked(self) -> None:
        """In a forked child: the parent's reaper watches the parent, not this process."""
        self._lock = threading.Lock()
        self._process = None
        self._groups = set()

    def _send(self, line: str) -> None:
        for _ in range(2):
            pipe = self._pipe()
            try:
                pipe.write(line.encode())
                pipe.flush()
                return
            except OSError:  # the reaper was killed: start another that knows every group
                self._process = None

    def _pipe(self) -> IO[bytes]:
        if self._process is not None and self._process.poll() is None:
            assert self._process.stdin is not None
            return self._process.stdin
        self._process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _REAPER],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        assert self._process.stdin is not None
        # Already-listed groups first (a restarted reaper); the caller's line follows.
        self._process.stdin.write("".join(f"+{g}\n" for g in self._groups).encode())
        return self._process.stdin


_reaper = _Reaper()
os.register_at_fork(after_in_child=_reaper.forked)


def watch_group(pgid: int) -> None:
    """Kill process group `pgid` with SIGKILL if this process dies before `forget_group(pgid)`."""
    _reaper.watch(pgid)


def forget_group(pgid: int) -> None:
    """Group `pgid` is gone (or no longer ours): the reaper stops watching it."""
    _reaper.forget(pgid)
