"""Where faulted calls are answered, and that a fraction faults the same calls everywhere."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import mcp
import pytest
import trio

from tests.faults.world import DOC, ORDER_CALL, SEARCH_CALL, world
from tests.mcp.fast_path_cases import calls_through_the_sdk
from tests.processes import wt_serve
from windtunnel.faults import draw
from windtunnel.mcp import RecordedMCPServer

pytestmark = pytest.mark.timeout(120)


async def test_only_faulted_tools_leave_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a fault on `search`, its calls reach the SDK handler; `get_order`'s stay on the
    fast path; with no fault, none reaches the SDK."""
    through_sdk = calls_through_the_sdk(monkeypatch)
    for faults in (["search=empty"], []):
        server = RecordedMCPServer(world(), faults=faults)
        server.log_events = False
        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                url = await server.start(nursery)
                async with mcp.Client(url) as client:
                    await client.call_tool(*SEARCH_CALL)
                    await client.call_tool(*ORDER_CALL)
                await server.stop()
    assert through_sdk == ["search"]


async def faulted_calls(tmp_path: Path, seed: int, calls: int) -> list[int]:
    """The call numbers of `search` a `wt serve --fault search@0.5=empty` process faulted."""
    universe = tmp_path / "shop.universe.json"
    universe.write_text(json.dumps(DOC))
    seen: list[Any] = []
    with trio.fail_after(90):
        async with wt_serve(
            "--fault", "search@0.5=empty", "--fault-seed", str(seed), str(universe)
        ) as (process, first):
            async with mcp.Client(first.decode().strip()) as client:
                for _ in range(calls):
                    seen.append(await client.call_tool(*SEARCH_CALL))
            process.send_signal(signal.SIGTERM)
            await process.wait()
    return [n for n, result in enumerate(seen, 1) if result.content == []]


async def test_a_fraction_faults_the_same_calls_in_every_process(tmp_path: Path) -> None:
    """Two `wt serve` processes with the same seed fault exactly the calls `draw` selects, and
    another seed selects others."""
    first = await faulted_calls(tmp_path, 7, 12)
    second = await faulted_calls(tmp_path, 7, 12)
    expected = [n for n in range(1, 13) if draw(7, "", "search", n) < 0.5]
    assert first == second == expected
    assert 0 < len(expected) < 12
    assert [n for n in range(1, 13) if draw(8, "", "search", n) < 0.5] != expected
