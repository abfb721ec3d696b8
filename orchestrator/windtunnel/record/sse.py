"""Read the `data` of server-sent events from bytes as they stream past, without changing them.

The reverse proxy forwards an upstream's event stream byte for byte; this reader only watches it,
so the tap sees each JSON-RPC message when its event is complete (the blank line that ends it).
Field rules follow the HTML standard: `data:` lines join with newlines; one space after the colon
is dropped; lines may end in CRLF, LF or CR.
"""

from __future__ import annotations

import codecs
import re

__all__ = ["SSEDataReader"]

_LINE_END = re.compile(r"\r\n|\r|\n")


class SSEDataReader:
    """Feed chunks; get the data of each event completed by them."""

    def __init__(self, max_event: int = 64 * 1024 * 1024) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""
        self._data: list[str] = []
        self._size = 0
        self._max_event = max_event

    def feed(self, chunk: bytes) -> list[str]:
        text = self._pending + self._decoder.decode(chunk)
        # A trailing "\r" may be the first half of "\r\n": hold it back with the unfinished line.
        held = "\r" if text.endswith("\r") else ""
        lines = _LINE_END.split(text[: len(text) - len(held)])
        self._pending = lines.pop() + held
        events: list[str] = []
        for line in lines:
            if line == "":
                if self._data:
                    events.append("\n".join(self._data))
                self._data = []
                self._size = 0
                continue
            field, _, value = line.partition(":")
            if field == "data":
                value = value[1:] if value.startswith(" ") else value
                self._size += len(value)
                if self._size <= self._max_event:
                    self._data.append(value)
        return events
