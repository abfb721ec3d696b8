"""`delay:recorded` end to end: a real upstream whose tool takes a known time is recorded (each
recording's `meta.duration_ms`), and the replay answers that late. The recording runs on the
real clock (the upstream really waits); the replay on Trio's mock clock, so the test never
sleeps."""

from __future__ import annotations

from pathlib import Path

import mcp
import pytest
import trio
import trio.testing

from tests.record.upstreams import SDK_UPSTREAM
from windtunnel.faults import FAULT_EXTRA_KEY
from windtunnel.mcp import RecordedMCPServer
from windtunnel.record import RecordingProxy
from windtunnel.record.saving import save_recording
from windtunnel.universe import load_universe

pytestmark = pytest.mark.timeout(60)

SLOW_S = 0.25
"""How long the upstream's `slow` tool waits before it answers (`anyio.sleep`)."""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The universe `wt record`'s proxy writes after a session with the SDK's stdio server:
    `slow` (at least `SLOW_S`), then `lookup` (no wait)."""
    path = tmp_path_factory.mktemp("pace") / "sdk.universe.json"

    async def record() -> None:
        proxy = RecordingProxy(SDK_UPSTREAM, name="sdk")
        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                url = await proxy.start(nursery)
                async with mcp.Client(url, mode="legacy") as client:
                    await client.call_tool("slow", {"seconds": SLOW_S})
                    await client.call_tool("lookup", {"query": "acme"})
                await proxy.stop()
        save_recording(proxy.recording(), path)

    trio.run(record)
    return path


def test_each_recording_keeps_how_long_the_upstream_took(recorded: Path) -> None:
    """`meta.duration_ms` of `slow` is at least the upstream's wait, in milliseconds to the
    microsecond; every recording has one."""
    recordings = load_universe(recorded).recordings
    assert [r.tool_name for r in recordings] == ["slow", "lookup"]
    durations = [r.meta["duration_ms"] for r in recordings if isinstance(r.meta, dict)]
    assert len(durations) == 2
    assert durations[0] >= SLOW_S * 1000
    assert all(d == round(d, 3) and d >= 0 for d in durations)
    assert b'"meta": {\n        "duration_ms": ' in recorded.read_bytes()


@pytest.fixture
def clock() -> trio.testing.MockClock:
    """Autojump once every task has been blocked for a moment of real time: loopback I/O in
    flight is never mistaken for a wait."""
    return trio.testing.MockClock(autojump_threshold=0.05)


async def test_delay_recorded_replays_the_recorded_duration(
    recorded: Path, clock: trio.testing.MockClock
) -> None:
    """Served with `slow=delay:recorded`, the official client gets the recorded answer after the
    recorded duration (virtual seconds), and the evidence says how long it waited."""
    duration_ms = load_universe(recorded).recordings[0].meta["duration_ms"]  # type: ignore[index]
    server = RecordedMCPServer(recorded, faults=["slow=delay:recorded"])
    server.log_events = False
    with trio.fail_after(600):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with mcp.Client(url) as client:
                started = trio.current_time()
                seen = await client.call_tool("slow", {"seconds": SLOW_S})
                took = trio.current_time() - started
                quick = await client.call_tool("lookup", {"query": "acme"})
            await server.stop()
    assert [block.text for block in seen.content] == [f"slept {SLOW_S}"]
    assert quick.is_error is False
    assert duration_ms / 1000 <= took < duration_ms / 1000 + 1
    assert [call.extra.get(FAULT_EXTRA_KEY, {}).get("waited") for call in server.call_log()] == [
        duration_ms / 1000,
        None,
    ]
