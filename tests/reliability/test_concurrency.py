"""Concurrency without spurious misses: many clients, sequence tools, and exact event counts."""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import mcp
import trio

from tests.compat import COMPAT_UNIVERSE
from windtunnel.actors import JsonLinesSink, MemorySink, open_fleet
from windtunnel.mcp import RecordedMCPServer
from windtunnel.universe import Recording, Universe, UniverseTool

# (tool, args, what the client must see): every call is a recorded hit.
HITS: list[tuple[str, dict[str, Any], str]] = [
    ("client_lookup", {"query": "Bluewing Logistics"}, "ops@bluewing.example"),
    ("client_lookup", {"query": "Bluewing Logistics", "verbose": True}, "ops@bluewing.example"),
    ("motd", {}, "All systems nominal."),
    ("charge_card", {"amount": 120}, "card declined: insufficient funds"),
    ("snapshot", {}, "chart"),
]


def seen_text(result: Any) -> str:
    if result.structured_content is not None and "email" in result.structured_content:
        return str(result.structured_content["email"])
    return str([c.text for c in result.content if c.type == "text"][-1])


def json_lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


async def test_20_clients_by_50_calls_no_spurious_miss_and_exact_counts() -> None:
    """20 MCP clients x 50 concurrent calls: 1000 hits, no miss, and every log and sink counts exactly 1000."""
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    memory, lines = MemorySink(), io.StringIO()
    answers: Counter[str] = Counter()
    wrong: list[tuple[str, str]] = []
    with trio.fail_after(120):
        async with open_fleet(sinks=[memory, JsonLinesSink(lines)], call_events=True) as fleet:
            async with fleet.scenario("load", {"crm": server}) as run:

                async def client(i: int) -> None:
                    async with mcp.Client(run.urls["crm"]) as session:
                        for j in range(50):
                            tool, args, expected = HITS[(i + j) % len(HITS)]
                            got = seen_text(await session.call_tool(tool, args))
                            answers[tool] += 1
                            if got != expected:
                                wrong.append((tool, got))

                async with trio.open_nursery() as nursery:
                    for i in range(20):
                        nursery.start_soon(client, i)
    assert wrong == []
    assert sum(answers.values()) == 1000
    calls = server.call_log()
    assert len(calls) == 1000
    assert [c for c in calls if c.divergence is not None] == []
    assert Counter(c.tool_name for c in calls) == answers
    assert len(run.call_log()) == 1000
    assert len(memory.named("tool_call")) == 1000
    assert memory.named("universe_divergence") == []
    events = json_lines(lines)
    assert sum(e["event"] == "tool_call" for e in events) == 1000
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    [finished] = [e for e in events if e["event"] == "scenario_finished"]
    assert (finished["calls"], finished["divergences"]) == (1000, 0)


def counter_universe(n: int) -> Universe:
    return Universe(
        windtunnel_universe=1,
        tools=[UniverseTool("next_id", mode="sequence")],
        recordings=[Recording("next_id", {}, {"id": i}) for i in range(n)],
    )


async def test_sequence_tool_hands_out_each_recording_once_over_http() -> None:
    """A sequence tool under 200 concurrent HTTP calls serves each recording once, then `sequence_exhausted`."""
    server = RecordedMCPServer(counter_universe(200))
    ids: list[int] = []
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)

            async def client() -> None:
                async with mcp.Client(url) as session:
                    for _ in range(10):
                        result = await session.call_tool("next_id", {})
                        assert result.structured_content is not None
                        ids.append(result.structured_content["id"])

            async with trio.open_nursery() as clients:
                for _ in range(20):
                    clients.start_soon(client)
            async with mcp.Client(url) as session:
                after = await session.call_tool("next_id", {})
            await server.stop()
    assert sorted(ids) == list(range(200))
    assert after.is_error is True
    calls = server.call_log()
    assert [c.extra["match"]["index"] for c in calls[:200]] == list(range(200))
    assert calls[200].divergence is not None
    assert calls[200].divergence["reason"] == "sequence_exhausted"


async def test_events_are_neither_lost_nor_duplicated_across_servers(tmp_path: Path) -> None:
    """40 scenarios x 2 upstreams at once: calls served == call logs == tool_call events == JSON lines."""
    memory = MemorySink()
    path = tmp_path / "events.jsonl"
    served: dict[str, int] = {}
    logged: dict[str, int] = {}
    with trio.fail_after(120), open(path, "w", encoding="utf-8") as out:  # noqa: ASYNC230
        async with open_fleet(sinks=[memory, JsonLinesSink(out)], call_events=True) as fleet:

            async def scenario(k: int) -> None:
                servers = {
                    "crm": RecordedMCPServer(COMPAT_UNIVERSE),
                    "billing": RecordedMCPServer(COMPAT_UNIVERSE),
                }
                name = f"s{k:02d}"
                async with fleet.scenario(name, servers) as run:
                    async with trio.open_nursery() as nursery:
                        for upstream, url in run.urls.items():
                            nursery.start_soon(calls, url, 5 + k % 7 + (upstream == "crm"))
                served[name] = sum(len(s.call_log()) for s in servers.values())
                logged[name] = len(run.call_log())

            async def calls(url: str, n: int) -> None:
                async with mcp.Client(url) as session:
                    for j in range(n):
                        tool, args, _ = HITS[j % len(HITS)]
                        await session.call_tool(tool, args)
                    await session.call_tool("client_lookup", {"query": "nobody"})

            async with trio.open_nursery() as nursery:
                for k in range(40):
                    nursery.start_soon(scenario, k)
    expected = {f"s{k:02d}": 2 * (5 + k % 7) + 1 + 2 for k in range(40)}
    assert served == expected
    assert logged == expected
    per_scenario = Counter(e["scenario"] for e in memory.named("tool_call"))
    assert dict(per_scenario) == expected
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert Counter(e["scenario"] for e in lines if e["event"] == "tool_call") == per_scenario
    assert sum(e["event"] == "universe_divergence" for e in lines) == 80
    assert [e["seq"] for e in lines] == list(range(1, len(lines) + 1))
    assert lines == memory.events


async def test_json_lines_keep_every_event_whatever_the_log_level() -> None:
    """The JSON lines sink keeps every event when the app filters structlog to warnings."""
    import logging

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    lines = io.StringIO()
    memory = MemorySink()
    with trio.fail_after(30):
        async with open_fleet(sinks=[JsonLinesSink(lines), memory], call_events=True) as fleet:
            async with fleet.scenario("s", {"crm": RecordedMCPServer(COMPAT_UNIVERSE)}) as run:
                async with mcp.Client(run.urls["crm"]) as client:
                    await client.call_tool("motd", {})
    assert json_lines(lines) == memory.events
    assert [e["event"] for e in memory.events] == [
        "fleet_started",
        "scenario_started",
        "server_started",
        "tool_call",
        "server_stopped",
        "scenario_finished",
        "fleet_stopped",
    ]
