"""`wt serve --stdio --events FILE`: a call answered is a call recorded, however the process stops."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest
import trio

from tests.compat import COMPAT_UNIVERSE
from tests.mcp.stdio_session import INITIALIZE, INITIALIZED, MODERN_META, encode
from tests.processes import WT

AT_ONCE = 4
CALLS = 3


def motd(request_id: int) -> bytes:
    call = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "motd", "arguments": {}, "_meta": MODERN_META},
    }
    return json.dumps(call).encode() + b"\n"


async def _one_run(events_file: Path, stop: signal.Signals | None) -> tuple[int, int, bytes]:
    """Three calls answered, then stdin closed and `stop` sent at once, as MCP clients shut a
    server down; the tool_call events written, the exit code, stderr."""
    process = await trio.lowlevel.open_process(
        [*WT, "serve", "--stdio", "--events", str(events_file), str(COMPAT_UNIVERSE)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    assert process.stderr is not None
    # The first call opens the connection's era on the SDK path; the rest take the fast path.
    await process.stdin.send_all(motd(0))
    answered = b""
    while answered.count(b"\n") < 1:
        answered += await process.stdout.receive_some()
    await process.stdin.send_all(b"".join(motd(i) for i in range(1, CALLS)))
    while answered.count(b"\n") < CALLS:
        answered += await process.stdout.receive_some()
    await process.stdin.aclose()
    if stop is not None:
        process.send_signal(stop)
    stderr = b""
    while chunk := await process.stderr.receive_some():
        stderr += chunk
    code = await process.wait()
    lines = (await trio.Path(events_file).read_text()).splitlines()
    return sum(json.loads(line)["event"] == "tool_call" for line in lines), code, stderr


@pytest.mark.parametrize(
    ("stop", "runs"),
    [(signal.SIGTERM, 40), (signal.SIGINT, 4), (signal.SIGHUP, 4), (None, 4)],
)
async def test_every_answered_call_is_in_the_events_file_whatever_stops_the_server(
    stop: signal.Signals | None, runs: int, tmp_path: Path
) -> None:
    """In 40 runs (4 for the rarer stops), stdin closed and a signal sent right after the last
    answer: every answered call has its tool_call event in --events FILE, the exit code is 0,
    no traceback."""
    results: list[tuple[int, int, bytes]] = []

    async def batch(first: int) -> None:
        for n in range(first, runs, AT_ONCE):
            results.append(await _one_run(tmp_path / f"events-{n}.jsonl", stop))

    with trio.fail_after(240):
        async with trio.open_nursery() as nursery:
            for first in range(AT_ONCE):
                nursery.start_soon(batch, first)
    assert [(events, code) for events, code, _ in results] == [(CALLS, 0)] * runs
    assert not [stderr for _, _, stderr in results if b"Traceback" in stderr]


async def _answers_after_eof(first_calls: int) -> list[object]:
    """The ids answered when a client writes a handshake and `first_calls` calls at once and
    closes stdin straight after, without reading: the calls reach the SDK while `initialize` is
    pending, and stdin ends while they are being answered."""
    calls = [
        {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "motd"}}
        for n in range(first_calls)
    ]
    process = await trio.lowlevel.open_process(
        [*WT, "serve", "--stdio", str(COMPAT_UNIVERSE)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    await process.stdin.send_all(
        b"".join(encode(m) + b"\n" for m in [INITIALIZE, INITIALIZED, *calls])
    )
    await process.stdin.aclose()
    answered = b""
    while chunk := await process.stdout.receive_some():
        answered += chunk
    assert await process.wait() == 0
    return [json.loads(line)["id"] for line in answered.splitlines()]


async def test_requests_in_flight_when_stdin_ends_are_answered_before_the_server_exits() -> None:
    """MCP clients shut a stdio server down by closing its stdin, sometimes right after their
    last request: in 8 runs, every request read before the end gets its answer (the session used
    to close at once and cancel the calls the SDK was still answering)."""
    runs: list[list[object]] = []

    async def run() -> None:
        runs.append(sorted(await _answers_after_eof(3), key=str))

    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            for _ in range(8):
                nursery.start_soon(run)
    assert runs == [[0, 1, 2, INITIALIZE["id"]]] * 8
