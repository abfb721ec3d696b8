"""`StderrLines`: whole lines, never a wait on a full pipe, long lines cut to one atomic write."""

from __future__ import annotations

import subprocess
import sys

import pytest

from windtunnel.cli.stderr_lines import StderrLines

WRITER = """
import sys
from windtunnel.cli.stderr_lines import StderrLines
stream = StderrLines()
for text in sys.argv[1:]:
    stream.write(text.replace("N", "\\n"))
stream.flush()
print(stream.dropped)
"""


def run_writer(*texts: str, pipe_size: int | None = None) -> tuple[int, bytes]:
    """(lines dropped, what reached stderr) when a child writes `texts` (N: a newline) to a stderr
    pipe read only after it exits."""
    import fcntl
    import os

    read_end, write_end = os.pipe()
    if pipe_size is not None:
        fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, pipe_size)
    try:
        done = subprocess.run(
            [sys.executable, "-c", WRITER, *texts],
            stdout=subprocess.PIPE,
            stderr=write_end,
            timeout=30,
            check=True,
        )
    finally:
        os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        return int(done.stdout), pipe.read()


def test_pieces_of_a_line_are_written_together() -> None:
    """structlog and print write a message and its newline apart: they reach the pipe as one line."""
    assert run_writer("one", " two", "N", "threeNfo", "urN") == (0, b"one two\nthree\nfour\n")


def test_a_line_longer_than_an_atomic_pipe_write_is_cut_to_one() -> None:
    dropped, received = run_writer("x" * 10_000 + "N", "tailN")
    assert dropped == 0
    assert received == b"x" * 4092 + b"...\n" + b"tail\n"


def test_lines_that_do_not_fit_a_full_pipe_are_dropped_and_counted() -> None:
    """A one-page pipe nobody reads takes what fits now (whole lines, from the first on); the
    others are counted, not waited on (Linux takes one write into a full-looking pipe)."""
    lines = [f"line {i}\n" for i in range(2_000)]  # 17 KiB: more than the pipe holds
    dropped, received = run_writer(*(line.replace("\n", "N") for line in lines), pipe_size=4096)
    kept = received.decode().splitlines(keepends=True)
    assert len(kept) > 0 and kept == lines[: len(kept)]
    assert dropped == len(lines) - len(kept) > 0


def test_other_streams_are_written_as_they_are(capsys: pytest.CaptureFixture[str]) -> None:
    """An in-process capture (not the process's own stderr) gets every line, however many."""
    stream = StderrLines()
    for i in range(10_000):
        stream.write(f"line {i}\n")
    stream.flush()
    assert capsys.readouterr().err.splitlines() == [f"line {i}" for i in range(10_000)]
    assert stream.dropped == 0
