"""Running `wt` as a real process for fault tests: exit code, output, peak memory, duration."""

from __future__ import annotations

import os
import re
import subprocess
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


def run_wt(args: Sequence[str], *, cwd: Path | None = None, deadline_s: float = 60.0) -> WtOutcome:
    """Run `wt ARGS` with stdin closed; a process still running at the deadline is killed (and
    the outcome then shows -9). Peak RSS comes from the kernel's accounting of that process."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        process = subprocess.Popen(
            [*WT, *args], stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=cwd
        )
        timer = threading.Timer(deadline_s, process.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            timer.cancel()
        process.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.monotonic() - t0
        out.seek(0)
        err.seek(0)
        return WtOutcome(
            code=process.returncode,
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
            max_rss_mib=usage.ru_maxrss / 1024,
            seconds=seconds,
        )
