"""One exact request shape, read without h11: `POST <target> HTTP/1.1` with a sized body.

h11's pure-Python parsing and validation were a large share of what a plain call cost inside
hypercorn's protocol (docs/benchmarks.md). `_fast_path_h11` reads the request shape an MCP client
sends for every call with this reader instead, and hands anything else to h11 untouched. The
reader accepts a strict subset of what h11 accepts, so no request means one thing here and
another there (`tests/mcp/test_http_head.py` checks every accepted head against h11):

- the request line is exactly `POST <target> HTTP/1.1`;
- lines end in CRLF; a bare CR or LF, a folded line or a space before a colon is not ours;
- header names are RFC 9110 tokens, values visible characters, spaces and tabs;
- no header appears twice, `Host` is present, `Content-Length` is digits, and there is no
  `Transfer-Encoding`, `Expect`, `Upgrade` or `Connection` other than `keep-alive`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = ["MAX_HEAD", "NEED_MORE", "Head", "read_head"]

MAX_HEAD: Final = 16 * 1024
"""A longer head is h11's to judge (its own limit, `h11_max_incomplete_size`, is the same)."""

NEED_MORE: Final = "need more"
"""The head so far is of the accepted shape, but incomplete."""

_FIELD = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+):([\t\x20-\x7e\x80-\xff]*)")
_DIGITS = re.compile(rb"[0-9]{1,18}")
_NOT_OURS = frozenset({"transfer-encoding", "expect", "upgrade"})


@dataclass(frozen=True, slots=True)
class Head:
    """A complete head of the accepted shape: the body starts at `size`."""

    size: int
    headers: dict[str, str]
    """Names lower-cased, values stripped, both decoded as Latin-1."""
    content_length: int


def read_head(data: bytes | bytearray, request_line: bytes) -> Head | str | None:
    """The head at the start of `data` if it has the accepted shape (`request_line` being
    `POST <target> HTTP/1.1`); `NEED_MORE` if it may still get it; None if it cannot."""
    end = data.find(b"\r\n\r\n", 0, MAX_HEAD)
    if end < 0:
        prefix = bytes(data[: len(request_line) + 2])
        if len(data) >= MAX_HEAD or not (request_line + b"\r\n").startswith(prefix):
            return None
        return NEED_MORE
    lines = bytes(data[:end]).split(b"\r\n")
    if lines[0] != request_line:
        return None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        field = _FIELD.fullmatch(line)
        if field is None:
            return None  # also a bare CR or LF, which the pattern does not take
        name = field[1].decode("latin-1").lower()
        if name in headers:
            return None
        headers[name] = field[2].strip(b" \t").decode("latin-1")
    length = headers.get("content-length")
    if (
        length is None
        or _DIGITS.fullmatch(length.encode("latin-1")) is None
        or "host" not in headers
        or not _NOT_OURS.isdisjoint(headers)
        or headers.get("connection", "keep-alive").lower() != "keep-alive"
    ):
        return None
    return Head(end + 4, headers, int(length))
