"""Read the `data` of server-sent events from bytes as they stream past, without changing them.

The reverse proxy forwards an upstream's event stream byte for byte; this reader only watches it,
so the tap sees each JSON-RPC message when its event is complete (the blank line that ends it).
Field rules follow the HTML standard: `data:` lines join with newlines; one space after the colon
is dropped; lines may end in CRLF, LF or CR.

Linear in the bytes: each chunk is scanned once, and the pieces of an unfinished line are kept in
a list and joined once, when the line ends (re-scanning the held line with every chunk made a
16 MiB event cost 20 s). An event's data past `max_event` characters is not kept, nor is a line
longer than that: memory stays bounded by one event however long the stream.
"""

from __future__ import annotations

import codecs
import re

__all__ = ["SSEDataReader"]

_LINE_END = re.compile(r"\r\n|\r|\n")
_FIELD_NAME_ROOM = 64
"""A line may be this much longer than an event's data (`data: ` and the like)."""


class SSEDataReader:
    """Feed chunks; get the data of each event completed by them."""

    def __init__(self, max_event: int = 64 * 1024 * 1024) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._line: list[str] = []
        self._line_size = 0
        self._line_too_long = False
        self._after_cr = False
        """The last chunk ended in CR: an LF first in the next one belongs to that line end."""
        self._data: list[str] = []
        self._size = 0
        self._max_event = max_event

    def feed(self, chunk: bytes) -> list[str]:
        text = self._decoder.decode(chunk)
        if text and self._after_cr:
            self._after_cr = False
            if text.startswith("\n"):
                text = text[1:]
        events: list[str] = []
        start = 0
        for end in _LINE_END.finditer(text):
            self._hold(text[start : end.start()])
            line = "".join(self._line) if not self._line_too_long else None
            self._line, self._line_size, self._line_too_long = [], 0, False
            self._take(line, events)
            start = end.end()
            self._after_cr = end.group(0) == "\r" and start == len(text)
        self._hold(text[start:])
        return events

    def _hold(self, piece: str) -> None:
        if not piece or self._line_too_long:
            return
        self._line_size += len(piece)
        if self._line_size > self._max_event + _FIELD_NAME_ROOM:
            self._line, self._line_too_long = [], True
        else:
            self._line.append(piece)

    def _take(self, line: str | None, events: list[str]) -> None:
        if line is None:
            return  # longer than an event may be: not kept
        if line == "":
            if self._data:
                events.append("\n".join(self._data))
            self._data = []
            self._size = 0
            return
        field, _, value = line.partition(":")
        if field == "data":
            value = value[1:] if value.startswith(" ") else value
            self._size += len(value)
            if self._size <= self._max_event:
                self._data.append(value)
