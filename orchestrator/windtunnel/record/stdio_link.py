"""The upstream is a stdio MCP server that the proxy spawns: one JSON-RPC message per line.

Lines go to its stdin exactly as the agent sent them; its stdout lines come back exactly as it
wrote them: a response goes to the request that waits for it, anything else (its notifications and
requests, a response nobody waits for any more) to `server_messages`. Its stderr is ours. When it
exits, every waiting request fails with the exit code, and so does every later one.
"""

from __future__ import annotations

import math
import subprocess
from collections.abc import Sequence
from typing import Any

import msgspec
import structlog
import trio

from .lines import LineTooLong, read_lines
from .link import UpstreamFailure
from .tap import SessionTap, decode_messages

__all__ = ["MAX_LINE", "StdioLink"]

MAX_LINE = 64 * 1024 * 1024
"""A line longer than this from the upstream ends the link (it is not an MCP server)."""

_log = structlog.get_logger("windtunnel.record")


class StdioLink:
    """A spawned stdio server, one message per line both ways."""

    def __init__(
        self, name: str, command: Sequence[str], *, tap: SessionTap, timeout_s: float | None
    ) -> None:
        self.name = name
        self.command = list(command)
        self.tap = tap
        self.timeout_s = timeout_s
        self._process: trio.Process | None = None
        self._write_lock = trio.Lock()
        self._waiters: dict[bytes, trio.MemorySendChannel[bytes]] = {}
        self._abandoned: set[bytes] = set()
        """Requests the agent already got a timeout error for: their late answers are recorded
        but not sent (the agent must not get two answers to one request)."""
        self._gone: str | None = None
        self._to_agent, self.server_messages = trio.open_memory_channel[bytes](math.inf)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Spawn the server, read its stdout until it exits; stop it when cancelled."""
        try:
            process = await trio.lowlevel.open_process(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
        except OSError as exc:
            raise UpstreamFailure(
                f"cannot start {self.command[0]!r}: {exc.strerror or exc}"
            ) from None
        self._process = process
        try:
            task_status.started()
            await self._read(process)
            code = await process.wait()
            self._fail_all(f"exited with code {code}")
            _log.warning("upstream_exited", upstream=self.name, code=code)
        finally:
            with trio.CancelScope(shield=True):
                await self._stop(process)

    async def _read(self, process: trio.Process) -> None:
        assert process.stdout is not None
        try:
            async for line in read_lines(process.stdout, MAX_LINE):
                self._deliver(line)
        except LineTooLong:
            self._fail_all(f"wrote a line longer than {MAX_LINE} bytes")

    def _deliver(self, line: bytes) -> None:
        messages = decode_messages(line)
        for message in messages:
            self.tap.observe("s2c", message)
        if len(messages) == 1 and "method" not in messages[0] and "id" in messages[0]:
            key = _id_key(messages[0]["id"])
            waiter = self._waiters.pop(key, None)
            if waiter is not None:
                waiter.send_nowait(line)
                return
            if key in self._abandoned:
                self._abandoned.discard(key)
                return
        self._to_agent.send_nowait(line)

    def _fail_all(self, reason: str) -> None:
        self._gone = reason
        for waiter in self._waiters.values():
            waiter.close()
        self._waiters.clear()
        self._to_agent.close()

    async def _stop(self, process: trio.Process) -> None:
        """Close its stdin (a stdio server's signal to exit), then terminate, then kill."""
        if process.stdin is not None:
            await process.stdin.aclose()
        with trio.move_on_after(2.0):
            await process.wait()
            return
        process.terminate()
        with trio.move_on_after(2.0):
            await process.wait()
            return
        process.kill()
        await process.wait()

    async def _write(self, line: bytes) -> None:
        process = self._process
        if self._gone is not None or process is None or process.stdin is None:
            raise UpstreamFailure(self._gone or "is not running")
        async with self._write_lock:
            try:
                await process.stdin.send_all(line + b"\n")
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                raise UpstreamFailure(self._gone or "closed its stdin") from None

    async def request(self, line: bytes, message: dict[str, Any]) -> bytes:
        key = _id_key(message["id"])
        send, receive = trio.open_memory_channel[bytes](1)
        self._waiters[key] = send
        self.tap.observe("c2s", message)
        try:
            await self._write(line)
            with trio.fail_after(self.timeout_s if self.timeout_s is not None else math.inf):
                try:
                    return await receive.receive()
                except trio.EndOfChannel:
                    raise UpstreamFailure(self._gone or "stopped") from None
        except trio.TooSlowError:
            self._abandoned.add(key)
            raise UpstreamFailure(f"did not answer within {self.timeout_s:g} s") from None
        finally:
            if self._waiters.get(key) is send:
                del self._waiters[key]

    async def send(self, line: bytes, messages: list[dict[str, Any]]) -> None:
        for message in messages:
            self.tap.observe("c2s", message)
        await self._write(line)

    async def aclose(self) -> None:
        if self._process is not None and self._process.stdin is not None:
            await self._process.stdin.aclose()


def _id_key(request_id: Any) -> bytes:
    return msgspec.json.encode(request_id)
