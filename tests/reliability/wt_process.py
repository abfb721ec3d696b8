"""Running `wt` as a real process for fault tests: exit code, output, peak memory, duration."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.processes import WT

__all__ = ["RAW_CONTROL", "WtOutcome", "run_wt"]

# What `escape_terminal` never lets through: C0 controls but tab and newline, DEL, C1 controls
# and the bidirectional marks and overrides.
RAW_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


@dataclass(frozen=True)
class WtOutcome:
    """How one `wt` process ended."""

    code: int
    stdout: str
    stderr: str
    max_rss_mib: float
    seconds: float

    def one_error_line(self) -> str:
        """The only line on stderr (asserting there is exactly one, and no traceback)."""
        lines = self.stderr.splitlines()
        assert "Traceback" not in self.stderr, self.stderr
        assert len(lines) == 1, self.stderr
        return lines[0]


# Linux charges a child the peak RSS of the image it was forked from (and of the one it exec'd
# from), so a child of a large test process would report that process's peak. A small launcher
# forks and execs `wt`, waits for it and writes its peak RSS (KiB) and exit code to the file in
# argv[1] (nothing there: the deadline killed both).
_LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(f"{usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}")
"""


def run_wt(args: Sequence[str], *, cwd: Path | None = None, deadline_s: float = 60.0) -> WtOutcome:
    """Run `wt ARGS` with stdin closed; a process still running at the deadline is killed (and
    the outcome then shows -9). Peak RSS is the kernel's figure for that process alone."""
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.NamedTemporaryFile("r") as rss,
    ):
        t0 = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-c", _LAUNCHER, rss.name, *WT, *args],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            cwd=cwd,
            start_new_session=True,
        )
        timer = threading.Timer(deadline_s, os.killpg, (process.pid, signal.SIGKILL))
        timer.start()
        try:
            process.wait()
        finally:
            timer.cancel()
        seconds = time.monotonic() - t0
        out.seek(0)
        err.seek(0)
        peak, _, code = (rss.read() or f"0 {-signal.SIGKILL}").partition(" ")
        return WtOutcome(
            code=int(code),
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
            max_rss_mib=int(peak or 0) / 1024,
            seconds=seconds,
        )
