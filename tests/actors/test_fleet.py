"""The fleet: N scenarios x M upstreams with real clients, routed logs, events, isolation."""

from __future__ import annotations

import io
import json
import socket
from typing import Any

import mcp
import msgspec
import pytest
import trio
from trio_websocket import ConnectionClosed, open_websocket_url

from tests.compat import COMPAT_UNIVERSE
from windtunnel.actors import JsonLinesSink, MemorySink, open_fleet
from windtunnel.errors import ServerError
from windtunnel.mcp import RecordedMCPServer
from windtunnel.universe import Universe, load_universe

N_SCENARIOS = 6
UPSTREAMS = ["crm", "billing", "email"]


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


def refused(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


async def collect_feed(url: str, into: list[dict[str, Any]], subscribed: trio.Event) -> None:
    async with open_websocket_url(url) as ws:
        try:
            while True:
                into.append(json.loads(await ws.get_message()))
                if into[-1]["event"] == "feed_subscribed":
                    subscribed.set()
        except ConnectionClosed:
            pass


async def test_scenarios_by_upstreams_route_calls_and_events() -> None:
    """Calls from real clients land in the right scenario log; every sink sees every event once."""
    memory = MemorySink()
    lines = io.StringIO()
    fed: list[dict[str, Any]] = []
    runs: dict[str, Any] = {}
    urls: list[str] = []

    async def scenario(fleet: Any, i: int) -> None:
        servers = {name: RecordedMCPServer(COMPAT_UNIVERSE) for name in UPSTREAMS}
        async with fleet.scenario(f"s{i}", servers) as run:
            urls.extend(run.urls.values())
            for name in UPSTREAMS:
                async with mcp.Client(run.urls[name]) as client:
                    await client.call_tool("client_lookup", {"query": "Bluewing Logistics"})
                    await client.call_tool("client_lookup", {"query": f"{i}-{name}"})
                    await client.call_tool("motd", {})
        runs[f"s{i}"] = run

    with trio.fail_after(60):
        async with trio.open_nursery() as outer:
            async with open_fleet(
                pack="demo", sinks=[memory, JsonLinesSink(lines)], feed_port=0
            ) as fleet:
                assert fleet.feed is not None and fleet.feed.url is not None
                subscribed = trio.Event()
                outer.start_soon(collect_feed, fleet.feed.url, fed, subscribed)
                await subscribed.wait()
                async with trio.open_nursery() as nursery:
                    for i in range(N_SCENARIOS):
                        nursery.start_soon(scenario, fleet, i)
            # Leaving the fleet closes the feed gracefully; the collector then ends by itself.

    for i in range(N_SCENARIOS):
        log = runs[f"s{i}"].call_log()
        assert len(log) == 3 * len(UPSTREAMS)
        for name in UPSTREAMS:
            mine = [c for c in log if c.upstream == name]
            assert [c.args.get("query") for c in mine] == [
                "Bluewing Logistics",
                f"{i}-{name}",
                None,
            ]
            assert mine[1].divergence is not None
        assert runs[f"s{i}"].log.divergences == len(UPSTREAMS)

    events = memory.events
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert [json.loads(line) for line in lines.getvalue().splitlines()] == events
    counts = {name: len(memory.named(name)) for name in {e["event"] for e in events}}
    assert counts == {
        "fleet_started": 1,
        "scenario_started": N_SCENARIOS,
        "server_started": N_SCENARIOS * len(UPSTREAMS),
        "universe_divergence": N_SCENARIOS * len(UPSTREAMS),
        "server_stopped": N_SCENARIOS * len(UPSTREAMS),
        "scenario_finished": N_SCENARIOS,
        "fleet_stopped": 1,
    }
    divergences = memory.named("universe_divergence")
    assert {(d["scenario"], d["upstream"], d["args"]["query"]) for d in divergences} == {
        (f"s{i}", name, f"{i}-{name}") for i in range(N_SCENARIOS) for name in UPSTREAMS
    }
    assert all(d["pack"] == "demo" and d["level"] == "warning" for d in divergences)
    finished = {e["scenario"]: e for e in memory.named("scenario_finished")}
    assert all(finished[f"s{i}"]["calls"] == 9 for i in range(N_SCENARIOS))
    assert memory.named("fleet_stopped")[0]["dropped"] == 0
    # The feed subscriber saw the same numbered events, none missing, none twice.
    assert fed[0]["event"] == "feed_subscribed"
    assert fed[1:] == [e for e in events if e["seq"] >= fed[1]["seq"]]
    assert fed[-1]["event"] == "fleet_stopped"
    assert len(set(urls)) == N_SCENARIOS * len(UPSTREAMS)
    assert all(refused(port_of(url)) for url in urls)


async def test_a_failing_server_fails_only_its_scenario() -> None:
    """A server that cannot bind fails its scenario with a reason; the sibling keeps serving."""
    memory = MemorySink()
    with trio.fail_after(30):
        async with open_fleet(sinks=[memory]) as fleet:
            async with fleet.scenario("healthy", {"crm": RecordedMCPServer(COMPAT_UNIVERSE)}) as ok:
                taken = port_of(ok.urls["crm"])
                bad = {
                    "a": RecordedMCPServer(COMPAT_UNIVERSE),
                    "b": RecordedMCPServer(COMPAT_UNIVERSE),
                }
                with pytest.raises(ServerError, match=f"cannot listen on 127.0.0.1:{taken}"):
                    async with fleet.scenario("broken", bad, ports={"b": taken}):
                        pytest.fail("the body must not run")
                assert not bad["a"].started
                async with mcp.Client(ok.urls["crm"]) as client:
                    still = await client.call_tool("motd", {})
    assert still.content[0].text == "All systems nominal."
    failed = memory.named("server_failed")
    assert [(e["scenario"], e["upstream"]) for e in failed] == [("broken", "b")]
    finished = {e["scenario"]: e for e in memory.named("scenario_finished")}
    assert "ServerError" in finished["broken"]["error"]
    assert finished["healthy"]["error"] is None
    assert finished["healthy"]["calls"] == 1


async def test_synthesize_hook_that_raises_is_a_scenario_fault() -> None:
    """A raising hook answers a tool error, emits server_fault and records the fault."""

    def hook(tool: str, args: dict[str, Any], universe: Universe) -> Any:
        raise ValueError("no template for this tool")

    memory = MemorySink()
    loaded = load_universe(COMPAT_UNIVERSE)
    universe = msgspec.structs.replace(
        loaded, matching=msgspec.structs.replace(loaded.matching, on_miss="synthesize")
    )
    server = RecordedMCPServer(universe, synthesize=hook)
    with trio.fail_after(30):
        async with open_fleet(sinks=[memory]) as fleet:
            async with fleet.scenario("s", {"crm": server}) as run:
                async with mcp.Client(run.urls["crm"]) as client:
                    result = await client.call_tool("client_lookup", {"query": "nobody"})
                    after = await client.call_tool("motd", {})
    assert result.is_error is True
    assert after.content[0].text == "All systems nominal."
    assert run.faults == ["crm: the synthesize hook raised ValueError: no template for this tool"]
    (fault,) = memory.named("server_fault")
    assert fault["error"] == "the synthesize hook raised ValueError: no template for this tool"


async def test_cancellation_closes_every_socket() -> None:
    """Cancelling a fleet mid-scenario stops every server; no port is left listening."""
    memory = MemorySink()
    urls: dict[str, str] = {}
    with trio.fail_after(30):
        with trio.CancelScope() as scope:
            async with open_fleet(sinks=[memory], feed_port=0) as fleet:
                servers = {name: RecordedMCPServer(COMPAT_UNIVERSE) for name in UPSTREAMS}
                async with fleet.scenario("s", servers) as run:
                    urls.update(run.urls)
                    assert fleet.feed is not None and fleet.feed.url is not None
                    urls["feed"] = fleet.feed.url.replace("ws://", "http://")
                    scope.cancel()
                    await trio.sleep_forever()
    assert scope.cancelled_caught
    assert all(refused(port_of(url.rstrip("/"))) for url in urls.values())
    finished = memory.named("scenario_finished")
    assert finished[0]["error"] == "cancelled"
    assert memory.events[-1]["event"] == "fleet_stopped"


class _CrashingServer(RecordedMCPServer):
    """Serves normally until told to crash: a server actor failing mid-scenario."""

    crash = trio.Event()

    async def serve(
        self, *, host: str = "127.0.0.1", port: int = 0, task_status: Any = trio.TASK_STATUS_IGNORED
    ) -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(
                lambda task_status: RecordedMCPServer.serve(
                    self, host=host, port=port, task_status=task_status
                )
            )
            task_status.started(self.url)
            await self.crash.wait()
            raise RuntimeError("disk on fire")


async def test_a_server_failing_mid_scenario_cancels_only_that_scenario() -> None:
    """The failing scenario's body is cancelled and raises ServerError; its sibling runs on."""
    memory = MemorySink()
    crashing = _CrashingServer(COMPAT_UNIVERSE)
    crashing.crash = trio.Event()
    body_reached_end = False
    with trio.fail_after(30):
        async with open_fleet(sinks=[memory]) as fleet:
            async with fleet.scenario("calm", {"crm": RecordedMCPServer(COMPAT_UNIVERSE)}) as calm:
                with pytest.raises(
                    ServerError,
                    match=r"upstream 'bad' failed while serving: RuntimeError: disk on fire",
                ):
                    async with fleet.scenario(
                        "doomed", {"bad": crashing, "ok": RecordedMCPServer(COMPAT_UNIVERSE)}
                    ):
                        crashing.crash.set()
                        await trio.sleep_forever()
                        body_reached_end = True
                async with mcp.Client(calm.urls["crm"]) as client:
                    still = await client.call_tool("motd", {})
    assert body_reached_end is False
    assert still.content[0].text == "All systems nominal."
    finished = {e["scenario"]: e for e in memory.named("scenario_finished")}
    assert "disk on fire" in finished["doomed"]["error"]
    assert finished["calm"]["error"] is None
    assert [e["upstream"] for e in memory.named("server_failed")] == ["bad"]
