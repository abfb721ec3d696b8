"""`CommandAgent`: run any program as the agent under test."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import trio

from ..group_reaper import forget_group, watch_group
from .base import AgentContext, AgentError, AgentResult, agent_env, write_mcp_config
from .command_template import TEMPLATE_FIELDS, render_command, template_fields

__all__ = ["TEMPLATE_FIELDS", "CommandAgent", "render_command", "template_fields"]

TaskVia = Literal["stdin", "file", "arg"]
MAX_STDOUT = 4 * 1024 * 1024
STDERR_TAIL = 16 * 1024
KILL_GRACE_S = 2.0


class CommandAgent:
    """A command template such as `["my-agent", "--mcp-config", "{mcp_config}"]`.

    The program gets the upstreams as an `mcpServers` JSON file (`{mcp_config}`, also
    `$WT_MCP_CONFIG`) and as `$WT_MCP_URL_<NAME>` variables; the task on stdin (default), in a file
    (`{task_file}`) or as an argument (`{task}`). Its stdout is the final answer. The command runs
    in its own process group, which is killed as a whole when the run times out. `{python}` is
    `python` (the agent's own interpreter, e.g. its venv's) when given, else Wind Tunnel's.
    """

    def __init__(
        self,
        command: Sequence[str],
        *,
        task_via: TaskVia = "stdin",
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        name: str | None = None,
        python: str | os.PathLike[str] | None = None,
    ) -> None:
        if not command:
            raise ValueError("a command agent needs a non-empty command")
        self.command = list(command)
        self.python = os.fspath(python) if python is not None else sys.executable
        self.task_via = task_via
        self.env = dict(env or {})
        self.cwd = cwd
        self.name = name or os.path.basename(self.command[0])

    def argv(self, ctx: AgentContext) -> list[str]:
        values = {
            "mcp_config": str(ctx.mcp_config_path),
            "task_file": str(ctx.workdir / "task.txt"),
            "task": ctx.task,
            "scenario": ctx.scenario,
            "seed": str(ctx.seed),
            "workdir": str(ctx.workdir),
            "python": self.python,
        }
        return render_command(self.command, values)

    async def run(self, ctx: AgentContext) -> AgentResult:
        write_mcp_config(ctx)
        (ctx.workdir / "task.txt").write_text(ctx.task)
        env = {**os.environ, **agent_env(ctx), **self.env}
        try:
            process = await trio.lowlevel.open_process(
                self.argv(ctx),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=self.cwd,
                start_new_session=True,
            )
        except OSError as exc:
            raise AgentError(f"cannot start agent {self.command[0]!r}: {exc.strerror}") from None
        watch_group(process.pid)  # killed even if this process is SIGKILLed
        stdout = bytearray()
        stderr = bytearray()
        truncated = False
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._feed, process, ctx.task)

                async def read_stdout() -> None:
                    nonlocal truncated
                    assert process.stdout is not None
                    async for chunk in process.stdout:
                        room = MAX_STDOUT - len(stdout)
                        if len(chunk) > room:
                            truncated = True
                        stdout.extend(chunk[: max(room, 0)])

                async def read_stderr() -> None:
                    assert process.stderr is not None
                    async for chunk in process.stderr:
                        stderr.extend(chunk)
                        del stderr[:-STDERR_TAIL]

                nursery.start_soon(read_stdout)
                nursery.start_soon(read_stderr)
                await process.wait()
        finally:
            # Also after a normal exit: whatever the agent left running in its group is a leak.
            if process.returncode is None or _group_running(process.pid):
                with trio.CancelScope(shield=True):
                    await _kill_group(process)
            forget_group(process.pid)
        err_text = stderr.decode(errors="replace")
        if process.returncode != 0:
            tail = err_text.strip().splitlines()[-1:] or ["(no stderr)"]
            raise AgentError(f"agent exited with code {process.returncode}: {tail[0][:500]}")
        output = stdout.decode(errors="replace")
        if truncated:
            raise AgentError(f"agent printed more than {MAX_STDOUT} bytes on stdout")
        return AgentResult(output=output.strip(), stderr=err_text, exit_code=process.returncode)

    async def _feed(self, process: trio.Process, task: str) -> None:
        assert process.stdin is not None
        async with process.stdin:
            if self.task_via == "stdin":
                # An agent that does not read stdin is fine: that is its business.
                with contextlib.suppress(trio.BrokenResourceError):
                    await process.stdin.send_all(task.encode())


async def _kill_group(process: trio.Process) -> None:
    """SIGTERM the whole process group; SIGKILL what is left after a grace period.

    Returns once no member of the group is still running, so no agent child outlives its run.
    """
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        with trio.move_on_after(KILL_GRACE_S):
            await process.wait()
            # Grandchildren are not ours to wait for: nothing signals their exit, so poll.
            while _group_running(process.pid):  # noqa: ASYNC110
                await trio.sleep(0.01)
            return


def _group_running(pgid: int) -> bool:
    """Any process of group `pgid` not yet dead (zombies waiting to be reaped count as dead)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return False
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            return True
    return False
