"""The agent speaks stdio to the proxy (`wt record --stdio`), as it would to the real server.

Each line from the agent goes to the upstream as it came; a request waits for its answer on a task
of its own, so calls overlap as they would against the server itself. Answers and everything else
the upstream sends are written back one line each, never interleaved. A request the upstream
cannot answer gets a JSON-RPC error naming the upstream. Serving ends when the agent closes stdin
(after the requests already sent are answered or time out) or the proxy is cancelled.
"""

from __future__ import annotations

from typing import Any

import structlog
import trio

from .lines import LineTooLong, read_lines
from .link import Link, UpstreamFailure, error_response
from .stdio_link import MAX_LINE
from .tap import decode_messages

__all__ = ["serve_link_stdio"]

_log = structlog.get_logger("windtunnel.record")


async def serve_link_stdio(
    link: Link, stdin: trio.abc.ReceiveStream, stdout: trio.abc.SendStream
) -> None:
    """Relay between the agent's stdin/stdout and `link` until stdin closes."""
    write_lock = trio.Lock()

    async def write(line: bytes) -> None:
        async with write_lock:
            await stdout.send_all(line + b"\n")

    async def relay_server_messages() -> None:
        async for line in link.server_messages:
            await write(line)

    async def answer(line: bytes, message: dict[str, Any]) -> None:
        try:
            response = await link.request(line, message)
        except UpstreamFailure as exc:
            _log.warning("upstream_failed", upstream=link.name, error=str(exc))
            response = error_response(message["id"], link.name, str(exc))
        await write(response)

    async with trio.open_nursery() as outer:
        outer.start_soon(relay_server_messages)
        async with trio.open_nursery() as requests:
            try:
                async for line in read_lines(stdin, MAX_LINE):
                    messages = decode_messages(line)
                    if _is_request(messages):
                        requests.start_soon(answer, line, messages[0])
                        continue
                    try:
                        await link.send(line, messages)
                    except UpstreamFailure as exc:
                        _log.warning("upstream_failed", upstream=link.name, error=str(exc))
            except LineTooLong:
                _log.error("agent_line_too_long", upstream=link.name, limit=MAX_LINE)
        outer.cancel_scope.cancel()


def _is_request(messages: list[dict[str, Any]]) -> bool:
    return len(messages) == 1 and isinstance(messages[0].get("method"), str) and "id" in messages[0]
