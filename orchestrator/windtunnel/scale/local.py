"""Local cores: N shards as N `wt run --shard i/N` worker processes, with one progress display.

Each worker is an ordinary shard run writing its own sub-run directory, started in its own
session (so a terminal's Ctrl-C reaches only the parent, which then stops every worker the same
way). Workers print `--progress plain` lines on stderr (`PASS  <unit> (1.23s)`); the parent
parses them into one aggregate display (whose "running" counts live workers) and passes any
other line through, tagged with the shard.

Stopping is graceful, then hard: when `stop` is set every worker gets SIGTERM (a `wt run` then
writes what finished and exits 130); one still alive after `grace_s` is killed.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio

from ..group_reaper import forget_group, watch_group
from ..runner.progress import MARKS, Progress
from ..runner.trace import Status, Trace
from ..terminal_text import escape_terminal
from .shards import ShardSpec

__all__ = ["WORKER_COMMAND", "ShardExit", "parse_progress_line", "run_local_shards"]

WORKER_COMMAND: tuple[str, ...] = (sys.executable, "-m", "windtunnel")
"""How a worker starts Wind Tunnel: this interpreter, so workers share the parent's install."""

_PROGRESS = re.compile(r"^(PASS|FAIL|ERROR|INVALID)\s+(.+) \((\d+(?:\.\d+)?)s\)(?: - (.*))?$")
_STATUS: dict[str, Status] = {mark: status for status, mark in MARKS.items()}
# A worker's closing lines (its own summary and report path) say nothing the parent won't.
_CLOSING = re.compile(r"^(report: |.+: (passed|FAILED|interrupted): \d+ passed, )")


@dataclass
class ShardExit:
    """How one worker ended: its exit code and its last lines of other output."""

    spec: ShardSpec
    returncode: int
    tail: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Finished its units (0: all passed, 1: some failed)."""
        return self.returncode in (0, 1)


def parse_progress_line(line: str) -> Trace | None:
    """A worker's `PASS|FAIL|ERROR|INVALID  <unit id> (<seconds>s)[ - <reason>]` line as a stub
    trace."""
    match = _PROGRESS.match(line)
    if match is None:
        return None
    mark, unit_id, seconds, reason = match.groups()
    return Trace(
        unit_id=unit_id,
        scenario=unit_id.rpartition("#")[0] or unit_id,
        status=_STATUS[mark],
        duration_s=float(seconds),
        error=reason or None,
    )


def _say(progress: Progress, text: str) -> None:
    if progress.live:
        progress.stream.write("\r\x1b[2K")
    progress.stream.write(escape_terminal(text) + "\n")
    progress.stream.flush()


async def _pump(stream: trio.abc.ReceiveStream, spec: ShardSpec, progress: Progress) -> list[str]:
    """Read a worker's stderr to its end; feed progress lines to the display, pass others on."""
    tail: deque[str] = deque(maxlen=5)
    buffer = b""
    while True:
        chunk = await stream.receive_some()
        if not chunk:
            break
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for raw in lines:
            line = raw.decode("utf-8", "replace").rstrip("\r")
            stub = parse_progress_line(line)
            if stub is not None:
                progress.unit_started()
                progress.unit_finished(stub)
            elif line.strip() and not _CLOSING.match(line):
                tail.append(line)
                _say(progress, f"[shard {spec}] {line}")
    if buffer.strip():
        tail.append(buffer.decode("utf-8", "replace"))
    return list(tail)


async def _run_worker(
    command: list[str], spec: ShardSpec, progress: Progress, stop: trio.Event, grace_s: float
) -> ShardExit:
    process = await trio.lowlevel.open_process(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    watch_group(process.pid)  # the worker and its agents die with this process, even on SIGKILL
    tail: list[str] = []
    progress.running += 1  # the display's "running" counts live workers here

    async def pump() -> None:
        nonlocal tail
        assert process.stderr is not None
        async with process.stderr:
            tail = await _pump(process.stderr, spec, progress)

    async def stop_when_asked() -> None:
        await stop.wait()
        process.send_signal(signal.SIGTERM)
        with trio.move_on_after(grace_s):
            await process.wait()
        if process.returncode is None:
            process.kill()

    try:
        async with trio.open_nursery() as outer:
            outer.start_soon(pump)
            async with trio.open_nursery() as watcher:
                watcher.start_soon(stop_when_asked)
                await process.wait()
                watcher.cancel_scope.cancel()
            # A grandchild that inherited stderr could hold it open past the worker's exit.
            outer.cancel_scope.deadline = trio.current_time() + grace_s
    finally:
        progress.running -= 1
        if process.returncode is None:
            process.kill()
            with trio.CancelScope(shield=True):
                await process.wait()
        forget_group(process.pid)
    assert process.returncode is not None
    return ShardExit(spec, process.returncode, tail)


async def run_local_shards(
    pack_spec: str,
    shards: Sequence[tuple[ShardSpec, Path]],
    worker_args: Sequence[str],
    progress: Progress,
    *,
    stop: trio.Event | None = None,
    grace_s: float = 30.0,
) -> list[ShardExit]:
    """Run each `(shard, sub-run dir)` as a `wt run PACK --shard i/N -o DIR` worker, all at once.

    `worker_args` are passed to every worker (e.g. `-c 8 --repeats 3 -k 'billing-*'`). Returns
    how each worker ended, in shard order; never raises for a worker's failure.
    """
    stop = stop if stop is not None else trio.Event()
    exits: dict[ShardSpec, ShardExit] = {}

    async def one(spec: ShardSpec, run_dir: Path) -> None:
        command = [
            *WORKER_COMMAND,
            "run",
            pack_spec,
            "--shard",
            str(spec),
            "-o",
            str(run_dir),
            "--progress",
            "plain",
            *worker_args,
        ]
        exits[spec] = await _run_worker(command, spec, progress, stop, grace_s)

    async with trio.open_nursery() as nursery:
        for spec, run_dir in shards:
            nursery.start_soon(one, spec, run_dir)
    return [exits[spec] for spec, _ in shards]
