"""`new_episodes` against a live server (the `mcp` SDK server of tests/verify): the universe
grows by exactly the missing calls, which then replay with zero divergences."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import mcp
import pytest
import trio

from tests.verify.recorded import drifting_command, record
from windtunnel.mcp import RecordedMCPServer
from windtunnel.record.live_misses import LiveMissServer, append_recording
from windtunnel.universe import Recording, load_universe

pytestmark = pytest.mark.timeout(120)

CALLS = [
    ("lookup", {"query": "ana"}),  # recorded
    ("lookup", {"query": "bob"}),  # missing: live
    ("search", {"term": "lamp"}),  # missing: live
    ("lookup", {"query": "bob"}),  # missing again: live again, not recorded twice
]


async def one_lookup(client: mcp.Client) -> None:
    await client.list_tools()
    await client.call_tool("lookup", {"query": "ana"})


@pytest.fixture
def small_universe(tmp_path: Path) -> Path:
    """A universe of v1 holding one call: lookup(ana)."""
    return record(
        drifting_command("v1", tmp_path / "sent.log"),
        one_lookup,
        tmp_path / "small.universe.json",
        name="drifting",
    )


async def run_calls(url: str) -> list[dict[str, object]]:
    answers = []
    async with mcp.Client(url, mode="legacy") as client:
        for name, args in CALLS:
            result = await client.call_tool(name, args)
            answers.append(result.structured_content or {})
    return answers


async def test_misses_are_answered_live_appended_and_then_replay(
    small_universe: Path, tmp_path: Path
) -> None:
    """Two missing calls reach v1 and are appended once each, with how long the live call took;
    the grown universe replays every call with no divergence and the same answers."""
    server = LiveMissServer(small_universe, upstream=drifting_command("v1", tmp_path / "s.log"))
    with trio.fail_after(90):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            live_answers = await run_calls(url)
            await server.stop()
    reasons = [call.divergence["reason"] if call.divergence else None for call in server.call_log()]
    assert reasons == [None, "recorded_live", "recorded_live", "recorded_live"]
    assert [call.divergence["live"] for call in server.call_log()[1:]] == [  # type: ignore[index]
        "appended",
        "appended",
        "already_recorded",
    ]
    assert live_answers[1] == {"name": "Bob", "tier": 2}
    grown = load_universe(small_universe)
    assert [(r.tool_name, r.args) for r in grown.recordings] == [
        ("lookup", {"query": "ana"}),
        ("lookup", {"query": "bob"}),
        ("search", {"term": "lamp"}),
    ]
    appended = [r.meta for r in grown.recordings[1:]]
    assert all(isinstance(m, dict) and list(m) == ["duration_ms"] for m in appended), appended
    assert all(m["duration_ms"] > 0 for m in appended if isinstance(m, dict))
    replay = RecordedMCPServer(small_universe)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await replay.start(nursery)
            replayed = await run_calls(url)
            await replay.stop()
    assert [call.divergence for call in replay.call_log()] == [None] * len(CALLS)
    assert replayed == live_answers


def test_concurrent_appends_lose_nothing(small_universe: Path) -> None:
    """Eight writers appending at once (threads, as sessions' appends run): every recording is
    in the file, each once."""
    barrier = threading.Barrier(8)

    def writer(n: int) -> None:
        barrier.wait()
        append_recording(
            small_universe, Recording(tool_name="lookup", args={"query": f"q{n}"}, result=n), False
        )

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    recordings = json.loads(small_universe.read_text())["recordings"]
    assert sorted(r["args"]["query"] for r in recordings[1:]) == [f"q{n}" for n in range(8)]
    assert len(recordings) == 9
