"""Newline-delimited messages from a byte stream (the MCP stdio framing)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import trio

__all__ = ["LineTooLong", "read_lines"]


class LineTooLong(Exception):
    """A line grew past the limit without its newline."""


async def read_lines(stream: trio.abc.ReceiveStream, max_line: int) -> AsyncIterator[bytes]:
    """Every non-blank line, without its line ending, until the stream ends or breaks."""
    buffer = bytearray()
    while True:
        try:
            chunk = await stream.receive_some(65536)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            chunk = b""
        if not chunk:
            if bytes(buffer).strip():
                yield bytes(buffer).rstrip(b"\r")
            return
        start = len(buffer)
        buffer += chunk
        if buffer.find(b"\n", start) < 0:
            if len(buffer) > max_line:
                raise LineTooLong
            continue
        *lines, rest = bytes(buffer).split(b"\n")
        buffer = bytearray(rest)
        for line in lines:
            if line.strip():
                yield line.rstrip(b"\r")
