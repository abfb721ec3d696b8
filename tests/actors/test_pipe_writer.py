"""`PipeWriter` on real pipes: offers never wait, full buffers drop and count, gaps are announced."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from windtunnel.actors import PipeTextStream, PipeWriter

LINES = [b"line %05d %s\n" % (i, b"x" * 88) for i in range(2000)]  # 100 bytes each


def notice(count: int) -> bytes:
    return b"dropped %d\n" % count


def full_pipe() -> tuple[int, int, bytes]:
    """A pipe already full to the brim: `(read end, write end, what is in it)`."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    filler = b""
    with contextlib.suppress(BlockingIOError):
        while True:
            filler += b"f" * os.write(write_end, b"f" * 4096)
    os.set_blocking(write_end, True)
    return read_end, write_end, filler


@contextmanager
def reading(fd: int) -> Iterator[list[bytes]]:
    """Read `fd` to its end in a thread; the chunks are complete once the block exits."""
    chunks: list[bytes] = []

    def read() -> None:
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        yield chunks
    finally:
        reader.join(timeout=30)
        assert not reader.is_alive()


@pytest.mark.timeout(30)
def test_offers_never_wait_on_a_full_pipe_and_the_gap_is_counted() -> None:
    """200 KB offered over a pipe nobody reads: offers return at once, what passes the 8 KiB
    limit is dropped, and closing (once someone reads) writes the kept lines, then the count."""
    read_end, write_end, filler = full_pipe()
    writer = PipeWriter(write_end, notice=notice, limit=8192)
    os.close(write_end)  # the writer holds its own duplicate
    accepted = [writer.offer(line) for line in LINES]
    assert accepted == [True] * 81 + [False] * (len(LINES) - 81)
    assert writer.dropped == len(LINES) - 81
    with reading(read_end) as chunks:
        assert writer.close(deadline_s=10) is True
    os.close(read_end)
    assert b"".join(chunks) == filler + b"".join(LINES[:81]) + notice(len(LINES) - 81)


@pytest.mark.timeout(30)
def test_the_next_line_that_fits_is_preceded_by_the_drop_count() -> None:
    """After a gap, once the reader catches up, the next line arrives right after the notice."""
    read_end, write_end, filler = full_pipe()
    writer = PipeWriter(write_end, notice=notice, limit=8192)
    os.close(write_end)
    for line in LINES:
        writer.offer(line)
    with reading(read_end) as chunks:
        assert writer.drain(timeout_s=10) is True
        assert writer.offer(b"after\n") is True
        assert writer.close(deadline_s=10) is True
    os.close(read_end)
    expected = filler + b"".join(LINES[:81]) + notice(len(LINES) - 81) + b"after\n"
    assert b"".join(chunks) == expected


@pytest.mark.timeout(30)
def test_close_gives_up_after_its_deadline_when_nobody_ever_reads() -> None:
    """A full pipe nobody reads cannot hold the process: `close` returns False at its deadline."""
    read_end, write_end, _ = full_pipe()
    writer = PipeWriter(write_end, notice=notice, limit=8192)
    os.close(write_end)
    assert writer.offer(LINES[0]) is True
    started = time.monotonic()
    assert writer.close(deadline_s=0.2) is False
    assert time.monotonic() - started < 5
    assert writer.offer(b"late\n") is False
    os.close(read_end)


@pytest.mark.timeout(30)
def test_a_reader_that_went_away_is_an_error_not_an_exception() -> None:
    """With the read end closed, writes fail (EPIPE): every line is counted as dropped."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    writer = PipeWriter(write_end, notice=notice)
    os.close(write_end)
    for line in LINES[:50]:
        writer.offer(line)
    assert writer.close(deadline_s=10) is False
    assert isinstance(writer.error, BrokenPipeError)
    assert writer.dropped == 50


@pytest.mark.timeout(30)
def test_text_stream_offers_whole_lines_only() -> None:
    """Logging writes a message and its newline separately; the pipe gets whole lines."""
    read_end, write_end = os.pipe()
    writer = PipeWriter(write_end, notice=notice)
    os.close(write_end)
    stream = PipeTextStream(writer)
    with reading(read_end) as chunks:
        stream.write("first")
        stream.write(" half\nsecond")
        stream.write("\n")
        stream.write("é\n")
        assert writer.close(deadline_s=10) is True
    os.close(read_end)
    assert b"".join(chunks) == "first half\nsecond\né\n".encode()
    assert stream.isatty() is False


@pytest.mark.timeout(30)
def test_the_writer_lingers_after_a_first_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """After the first line the thread waits (up to `LINGER_S`) for more before it writes, so a
    stream of events costs a few wake-ups and writes, not one each (each wake-up takes the GIL
    from the serving thread); `close` cuts the wait short."""
    from windtunnel.actors import pipe_writer

    writes: list[bytes] = []
    wrote = threading.Event()
    real_write_all = pipe_writer._write_all

    def counting(fd: int, data: bytes) -> None:
        writes.append(data)
        wrote.set()
        real_write_all(fd, data)

    monkeypatch.setattr(pipe_writer, "_write_all", counting)
    monkeypatch.setattr(pipe_writer, "LINGER_S", 60.0)
    read_end, write_end = os.pipe()
    with reading(read_end) as chunks:
        writer = PipeWriter(write_end, notice=notice)
        os.close(write_end)
        lines = [b"event %03d\n" % i for i in range(50)]
        assert writer.offer(lines[0])
        # Without the linger the thread writes the first line at once.
        assert not wrote.wait(0.5)
        for line in lines[1:]:
            assert writer.offer(line)
        assert writer.close(deadline_s=10)
    assert b"".join(chunks) == b"".join(lines)
    assert writes == [b"".join(lines)]
    os.close(read_end)
