"""Running out of file descriptors: one clear line, never a traceback. A server that cannot start
fails the command (exit 2); a running server keeps serving and accepts again once fds free up."""

from __future__ import annotations

import errno
import json
import logging
import resource
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import mcp
import trio
from structlog.testing import capture_logs

from tests.compat import BLUEWING, COMPAT_UNIVERSE
from tests.processes import WT, read_until
from windtunnel.cli.accept_errors import ACCEPT_LOGGER, AcceptRetryFilter

LIMIT = 48
HINT = f"(open-file limit {LIMIT}; raise it with ulimit -n)"


def fd_limit(limit: int) -> Callable[[], None]:
    def set_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    return set_limit


async def read_rest(stream: trio.abc.ReceiveStream) -> bytes:
    data = b""
    while chunk := await stream.receive_some():
        data += chunk
    return data


async def test_serve_out_of_fds_logs_one_line_and_keeps_serving() -> None:
    """More connections than the fd limit allows: one `accept_failed` line naming the limit, no
    traceback; once the connections close, a real client is served and SIGTERM exits 0."""
    with trio.fail_after(60):
        process = await trio.lowlevel.open_process(
            [*WT, "serve", "--log-format", "json", str(COMPAT_UNIVERSE)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=fd_limit(LIMIT),
        )
        try:
            assert process.stdout is not None and process.stderr is not None
            url = (await read_until(process.stdout, b"\n")).decode().strip()
            port = int(url.rsplit(":", 1)[1].split("/")[0])
            streams = [await trio.open_tcp_stream("127.0.0.1", port) for _ in range(LIMIT + 8)]
            seen = await read_until(process.stderr, b'"accept_failed"')
            for stream in streams:
                await stream.aclose()
            async with mcp.Client(url) as client:
                hit = await client.call_tool("client_lookup", {"query": "Bluewing Logistics"})
            process.send_signal(signal.SIGTERM)
            stderr = (seen + await read_rest(process.stderr)).decode()
            await process.wait()
        finally:
            if process.returncode is None:
                process.kill()
                with trio.CancelScope(shield=True):
                    await process.wait()
    assert process.returncode == 0, stderr
    assert hit.structured_content == BLUEWING
    assert "Traceback" not in stderr
    failures = [json.loads(line) for line in stderr.splitlines() if '"accept_failed"' in line]
    assert len(failures) == 1, stderr
    assert failures[0]["level"] == "error"
    assert failures[0]["errno"] == "EMFILE"
    assert failures[0]["error"] == f"EMFILE: Too many open files {HINT}"
    assert failures[0]["retries"] == 0


async def test_serve_that_cannot_open_its_listeners_fails_with_one_line(tmp_path: Path) -> None:
    """Sixty universes under a limit of 48 fds: exit 2, one `wt: error:` line with the limit."""
    universes = [f"u{i}={COMPAT_UNIVERSE}" for i in range(60)]
    with trio.fail_after(60):
        done = await trio.run_process(
            [*WT, "serve", "--log-format", "json", *universes],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            preexec_fn=fd_limit(LIMIT),
        )
    err = done.stderr.decode()
    assert done.returncode == 2, err
    last = err.splitlines()[-1]
    assert last.startswith("wt: error: server 'u"), err
    assert last.endswith(f"cannot listen on 127.0.0.1:0: Too many open files {HINT}"), err
    assert "Traceback" not in err
    assert done.stdout == b""


def _accept_failure(number: int) -> logging.LogRecord:
    """The record Trio's accept loop logs (with the traceback) before each retry."""
    error = OSError(number, "out")
    return logging.LogRecord(
        ACCEPT_LOGGER,
        logging.ERROR,
        __file__,
        1,
        "accept returned %s (%s); retrying in %s seconds",
        (errno.errorcode[number], "out", 0.1),
        (OSError, error, None),
    )


def test_accept_retries_become_one_line_a_minute() -> None:
    """Trio's retry records are swallowed; one `accept_failed` per minute says how many retries
    there were since the last; any other record of that logger passes unchanged."""
    now = [100.0]
    quiet = AcceptRetryFilter(every_s=60, clock=lambda: now[0])
    other = logging.LogRecord(ACCEPT_LOGGER, logging.ERROR, __file__, 1, "other", (), None)
    with capture_logs() as logs:
        shown = [quiet.filter(_accept_failure(errno.EMFILE))]
        for _ in range(30):
            now[0] += 0.1
            shown.append(quiet.filter(_accept_failure(errno.EMFILE)))
        now[0] += 60
        shown.append(quiet.filter(_accept_failure(errno.ENOBUFS)))
        passed = quiet.filter(other)
    assert shown == [False] * 32
    assert passed is True
    assert [(e["event"], e["errno"], e["retries"]) for e in logs] == [
        ("accept_failed", "EMFILE", 0),
        ("accept_failed", "ENOBUFS", 30),
    ]
    assert logs[0]["error"].startswith("EMFILE: Too many open files (open-file limit ")
    assert logs[1]["error"] == "ENOBUFS: No buffer space available"


def test_configuring_logging_twice_installs_one_filter() -> None:
    """Configuring logging twice (two commands in one process) leaves one filter."""
    from windtunnel.cli.logs import configure_logging

    accept = logging.getLogger(ACCEPT_LOGGER)
    before = list(accept.filters)
    try:
        configure_logging(fmt="json", stream=sys.stderr)
        configure_logging(fmt="json", stream=sys.stderr)
        assert sum(isinstance(f, AcceptRetryFilter) for f in accept.filters) == 1
    finally:
        accept.filters[:] = before
