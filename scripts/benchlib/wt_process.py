"""A `wt` command that serves over HTTP, in a subprocess of its own: its URL read from the
first line it prints, its CPU time read from /proc, stopped with SIGTERM."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["WtProcess"]


class WtProcess:
    """`python -m windtunnel ARGS...` printing its URL first (`wt serve`, `wt record`)."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "windtunnel", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http"):
            self.stop()
            raise RuntimeError(f"wt {args[0]} did not start: {self.url!r}")

    def cpu_seconds(self) -> float:
        """User + system CPU time of the process so far."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
