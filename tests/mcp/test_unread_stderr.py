"""`wt serve` whose stderr is piped and never read keeps answering; the lines it could not write
are counted and the count reaches the reader (`events_dropped`)."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import mcp
import trio

from tests.compat import BLUEWING, COMPAT_UNIVERSE
from tests.processes import wt_serve, wt_serve_stdio

CALLS = 2000


async def read_all(stream: trio.abc.ReceiveStream, into: list[bytes]) -> None:
    while chunk := await stream.receive_some():
        into.append(chunk)


def parse_lines(chunks: list[bytes]) -> list[dict[str, Any]]:
    """Every line must be one whole JSON object: dropping never tears a line."""
    return [json.loads(line) for line in b"".join(chunks).decode().splitlines()]


async def test_http_serve_answers_every_call_while_nobody_reads_stderr() -> None:
    """2,000 calls, each one a `tool_call` line on a stderr nobody reads (a 64 KiB pipe): all
    answered; every event is either on stderr or counted in an `events_dropped` line."""
    chunks: list[bytes] = []
    with trio.fail_after(60):
        async with wt_serve(str(COMPAT_UNIVERSE)) as (process, first):
            async with mcp.Client(first.decode().strip()) as client:
                for _ in range(CALLS):
                    hit = await client.call_tool("client_lookup", {"query": "Bluewing Logistics"})
                    assert hit.structured_content == BLUEWING
            assert process.stderr is not None
            async with trio.open_nursery() as nursery:
                nursery.start_soon(read_all, process.stderr, chunks)
                process.send_signal(signal.SIGTERM)
                await process.wait()
    assert process.returncode == 0
    assert_every_event_written_or_counted(parse_lines(chunks))


def assert_every_event_written_or_counted(events: list[dict[str, Any]]) -> None:
    """Every event of the run is on stderr or counted in an `events_dropped` notice."""
    numbered = [e for e in events if "seq" in e]
    notices = [e for e in events if e["event"] == "events_dropped"]
    assert len(numbered) + len(notices) == len(events)
    # fleet_started, scenario_started, server_started, a tool_call per call, server_stopped,
    # scenario_finished, fleet_stopped.
    total = 3 + CALLS + 3
    dropped = sum(n["dropped"] for n in notices)
    assert dropped > 0
    assert len(numbered) + dropped == total
    seqs = [e["seq"] for e in numbered]
    assert seqs == sorted(seqs) and seqs[0] == 1
    # Each gap is announced just before the first event after it.
    for index, event in enumerate(events[:-1]):
        if event["event"] == "events_dropped":
            after = events[index + 1]
            before = max((e["seq"] for e in events[:index] if "seq" in e), default=0)
            assert after["seq"] - before - 1 == event["dropped"]
    # The end: `fleet_stopped` counting every drop, or (if it was dropped too) the last count.
    if events[-1]["event"] == "fleet_stopped":
        assert events[-1]["dropped"] == dropped
    else:
        assert events[-1]["event"] == "events_dropped"


async def test_stdio_serve_answers_every_call_while_nobody_reads_stderr(tmp_path: Path) -> None:
    """The same over stdio (an agent that spawns `wt serve --stdio` and pipes its stderr away):
    every call answered, every event either on stderr or counted."""
    fifo = tmp_path / "stderr.fifo"
    os.mkfifo(fifo)
    # Open for reading now (never read until the end), so the server's open for writing succeeds.
    reader = trio.lowlevel.FdStream(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
    params = wt_serve_stdio(fifo, "--log-format", "json", str(COMPAT_UNIVERSE))
    chunks: list[bytes] = []
    with trio.fail_after(60):
        async with reader, trio.open_nursery() as nursery:
            async with mcp.Client(params) as client:
                for _ in range(CALLS):
                    hit = await client.call_tool("client_lookup", {"query": "Bluewing Logistics"})
                    assert hit.structured_content == BLUEWING
                # Read from now on: the server's exit drains its last lines and the count.
                nursery.start_soon(read_all, reader, chunks)
    # The same events as over HTTP, lifecycle included.
    assert_every_event_written_or_counted(parse_lines(chunks))
