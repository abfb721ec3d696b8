"""Where a large universe file's recordings lie, found by a child process.

`decode_universe` decodes recordings one at a time so that a load in a worker thread lets the
other threads (the Trio loop serving other units) run between them. What it could not cut was
the first step: one msgspec pass over the whole file to find the recordings, a single C call
that holds the GIL throughout (0.3-0.6 s for a 94 MB, 1,000,000-recording file; any pass,
even one that only skips the array, costs as much). For a file of `SCAN_AT` bytes or more,
`recording_spans` has that pass made by a child Python (`python -m windtunnel.universe_scan`,
the file's bytes on its stdin), which answers with the byte span of the recordings array and of
each recording in it; the parent then decodes the small rest of the file and each recording
from its span. The child only locates: every check and every error message stays the parent's.
Whenever the child cannot answer (the file does not decode, no recordings, the interpreter
cannot start it), the parent decodes the whole file itself, as before.
"""

from __future__ import annotations

import re
import subprocess
import sys
from array import array
from collections.abc import Iterator
from typing import Any

__all__ = ["SCAN_AT", "RecordingSpans", "recording_spans"]

SCAN_AT = 16 * 1024 * 1024
"""Files at least this large are scanned by a child (a pass over 16 MB in the parent holds the
GIL for 50-100 ms; starting the child costs about 0.3 s of wall time, not of GIL time)."""

_WORD = array("Q").itemsize


class RecordingSpans:
    """The file with its recordings array emptied (`head`), and each recording's bytes.

    The child answers with three words (where the array opens, where it closes, where the first
    recording starts), then each recording's length, then the gap before each next one: the
    offsets are summed here, in the loop that decodes the recordings anyway.
    """

    __slots__ = ("_data", "_gaps", "_lengths", "_start", "head")

    def __init__(self, data: bytes, words: array[int]) -> None:
        opening, closing, self._start = words[0], words[1], words[2]
        count = (len(words) - 2) // 2
        self._lengths = words[3 : 3 + count]
        self._gaps = words[3 + count :]
        self.head = data[:opening] + b"[]" + data[closing:]
        self._data = memoryview(data)

    def __len__(self) -> int:
        return len(self._lengths)

    def __iter__(self) -> Iterator[memoryview]:
        """Each recording's bytes as the file holds them (no copy), in file order."""
        data, gaps = self._data, self._gaps
        position = self._start
        for i, length in enumerate(self._lengths):
            yield data[position : position + length]
            position += length + (gaps[i] if i < len(gaps) else 0)


def recording_spans(data: bytes) -> RecordingSpans | None:
    """Where the recordings lie in `data`, found by a child process; None below `SCAN_AT`, or
    when the child cannot say (the caller then decodes `data` whole)."""
    if len(data) < SCAN_AT:
        return None
    try:
        done = subprocess.run(
            [sys.executable, "-m", "windtunnel.universe_scan"],
            input=data,
            capture_output=True,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    answer = done.stdout
    if done.returncode != 0 or len(answer) < 4 * _WORD or len(answer) % (2 * _WORD):
        return None
    words = array("Q")
    words.frombytes(answer)
    if not words[0] < words[2] < words[1] <= len(data):
        return None
    return RecordingSpans(data, words)


_SPACE = re.compile(rb"[ \t\r\n]*")
_COMMA = re.compile(rb"[ \t\r\n]*,[ \t\r\n]*")
_CLOSE = re.compile(rb"[ \t\r\n]*\]")


def _scan(data: bytes) -> array[int] | None:
    """The child's answer (see `RecordingSpans`), or None."""
    import msgspec  # the child's own imports: msgspec and the format, nothing that serves

    from .universe import decode_outline

    try:
        outline = decode_outline(data)
    except (msgspec.DecodeError, RecursionError):
        return None
    raws = outline.recordings
    if not raws:
        return None
    # The first recording's bytes, found after the last `[` before them; the others follow it,
    # each after a comma and JSON whitespace, each as long as its raw bytes.
    first = bytes(raws[0])
    start = data.find(first)
    opening = data.rfind(b"[", 0, start)
    if start < 0 or opening < 0 or _SPACE.match(data, opening + 1).end() != start:  # type: ignore[union-attr]  # `*` always matches
        return None
    lengths = array("Q", map(len, raws))
    gaps = _same_gaps(data, raws, start) or _gaps_one_by_one(data, raws, start)
    if gaps is None:
        return None
    end = start + sum(lengths) + sum(gaps)
    closing = _CLOSE.match(data, end)
    if closing is None:
        return None
    # The first match could lie in a value before the array holding the same bytes (a copy in
    # `meta`): then the rest of the file, with what was taken for the array emptied, differs.
    head = data[:opening] + b"[]" + data[closing.end() :]
    try:
        rest = decode_outline(head)
    except (msgspec.DecodeError, RecursionError):
        return None
    if rest != msgspec.structs.replace(outline, recordings=[]):
        return None
    return array("Q", [opening, closing.end(), start]) + lengths + gaps


def _same_gaps(data: bytes, raws: list[Any], start: int) -> array[int] | None:
    """The gaps when every recording is followed by the same separator (`,\n  ` in a file
    `encode_universe` wrote): checked with one comparison, no Python loop per recording. None
    when the separators differ."""
    if len(raws) == 1:
        return array("Q")
    end_of_first = start + len(raws[0])
    gap = _COMMA.match(data, end_of_first)
    if gap is None:
        return None
    separator = data[end_of_first : gap.end()]
    whole = separator.join(raws)
    if data[start : start + len(whole)] != whole:
        return None
    return array("Q", [len(separator)]) * (len(raws) - 1)


def _gaps_one_by_one(data: bytes, raws: list[Any], start: int) -> array[int] | None:
    gaps = array("Q")
    position = start + len(raws[0])
    for raw in raws[1:]:
        gap = _COMMA.match(data, position)
        if gap is None:
            return None
        gaps.append(gap.end() - position)
        position = gap.end() + len(raw)
    return gaps


def main() -> int:
    spans = _scan(sys.stdin.buffer.read())
    if spans is None:
        return 1
    sys.stdout.buffer.write(spans.tobytes())
    return 0


if __name__ == "__main__":
    sys.exit(main())
