"""The event-stream reader the proxy watches streams with: every way of cutting a stream into
chunks gives the same events, and its cost is linear in the bytes."""

from __future__ import annotations

import itertools
import time

from hypothesis import given
from hypothesis import strategies as st

from windtunnel.record.sse import SSEDataReader

STREAM = (
    b": keep-alive\r\n\r\n"
    b'event: message\r\ndata: {"id": 1}\r\n\r\n'
    b"id: 7\rdata: first\rdata:second\r\r"
    b"data: caf\xc3\xa9\n\n"
    b"retry: 10\n\n"
    b"data:  two spaces\n: comment\ndata\n\n"
)
EVENTS = ['{"id": 1}', "first\nsecond", "café", " two spaces\n"]


def read(chunks: list[bytes]) -> list[str]:
    reader = SSEDataReader()
    return [event for chunk in chunks for event in reader.feed(chunk)]


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    """CRLF, CR and LF line ends, a CRLF or a UTF-8 character split across chunks, comments,
    fields without a colon: the events are the same however the bytes arrive."""
    edges = [0, *sorted(cuts), len(STREAM)]
    chunks = [STREAM[start:end] for start, end in itertools.pairwise(edges)]
    assert read(chunks) == EVENTS


def test_a_16_mib_event_in_small_chunks_is_read_in_linear_time() -> None:
    """16 MiB of one `data:` line in 1 KiB chunks: the reader that re-scanned its held line with
    every chunk did about 1.4e11 character copies here (minutes); a linear one takes well under
    a second, so the loose bound cannot flake and still fails the quadratic reader."""
    size = 16 * 1024 * 1024
    stream = b"data: " + b"x" * size + b"\n\n"
    reader = SSEDataReader()
    started = time.perf_counter()
    events = [e for i in range(0, len(stream), 1024) for e in reader.feed(stream[i : i + 1024])]
    took = time.perf_counter() - started
    print(f"16 MiB event in 1 KiB chunks: {took:.2f} s")
    assert [len(event) for event in events] == [size]
    assert took < 30


def test_an_event_or_line_past_the_limit_is_not_kept() -> None:
    """Memory stays bounded: data past `max_event` is dropped, and so is a line longer than that
    (it may never end); the events after it are read as usual."""
    reader = SSEDataReader(max_event=8)
    assert reader.feed(b"data: 12345\ndata: 67890\n\n") == ["12345"]
    assert reader.feed(b"data: " + b"y" * 100) == []
    assert reader.feed(b"y" * 100 + b"\n\ndata: ok\n\n") == ["ok"]
