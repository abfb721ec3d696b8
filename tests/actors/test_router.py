"""The router's intake and the JSON lines sink: what a call costs the server that reports it."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
import structlog
import trio
import trio.testing

from windtunnel.actors import JsonLinesSink, MemorySink
from windtunnel.actors.events import make_event
from windtunnel.actors.router import CHANNEL_SIZE, Router
from windtunnel.calls import MCPCall


def call(i: int) -> MCPCall:
    return MCPCall(
        tool_name="t", args={"i": i}, result=i, extra={"match": {"tier": "exact", "index": 0}}
    )


async def test_report_queues_without_waiting_until_the_channel_is_full() -> None:
    """A report returns at once while the router's channel has room, so the server answers
    before the router runs; on a full channel the server waits (backpressure, no loss)."""
    memory = MemorySink()
    router = Router(sinks=[memory], call_events=True)
    report = router.reporter("s", "u")
    reported: list[int] = []

    async def server() -> None:
        for i in range(CHANNEL_SIZE + 1):
            await report(call(i))
            reported.append(i)

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server)
            await trio.testing.wait_all_tasks_blocked()
            assert reported == list(range(CHANNEL_SIZE))
            await nursery.start(router.run)
            try:  # the router drains until closed, whatever happens here
                await trio.testing.wait_all_tasks_blocked()
                assert len(reported) == CHANNEL_SIZE + 1
            finally:
                await router.close()
    assert [c.args["i"] for c in router.log("s").calls] == list(range(CHANNEL_SIZE + 1))
    assert [e["args"]["i"] for e in memory.named("tool_call")] == list(range(CHANNEL_SIZE + 1))


async def test_report_does_not_let_the_router_run_first() -> None:
    """Reporting a call is not a scheduling point: the router handles it only once the server
    task yields (after writing its answer)."""
    router = Router(sinks=[MemorySink()])
    report = router.reporter("s", "u")
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(router.run)
            try:  # the router drains until closed, whatever happens here
                with trio.testing.assert_no_checkpoints():
                    await report(call(1))
                assert router.log("s").calls == []
                await trio.testing.wait_all_tasks_blocked()
                assert len(router.log("s").calls) == 1
            finally:
                await router.close()


async def test_router_handles_everything_queued_in_one_turn() -> None:
    """Servers queue calls without waiting; the router takes all that is queued whenever it runs,
    rather than one call per scheduler pass, so it keeps up."""
    router = Router(sinks=[MemorySink()])
    report = router.reporter("s", "u")
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(router.run)
            try:
                for i in range(100):
                    await report(call(i))
                for _ in range(3):  # the router gets at least one turn meanwhile
                    await trio.lowlevel.checkpoint()
                assert len(router.log("s").calls) == 100
            finally:
                await router.close()


EVENTS = [
    make_event("tool_call", pack="p", scenario="s", upstream="u", tool="t", args={"b": [1, {}]}),
    make_event("universe_divergence", level="warning", scenario="s", nearest=None, tool="ü\u2028"),
    {"seq": 7, "event": "events_dropped", "dropped": 3},
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: e["event"])
def test_json_lines_are_what_structlogs_json_renderer_prints(event: dict[str, Any]) -> None:
    """Each line is byte for byte what a structlog JSON renderer with our serializer prints
    (`event` first), whatever the key order the event came in; the event is left unchanged."""
    from windtunnel.line_format import json_line

    ours, theirs = io.StringIO(), io.StringIO()
    before = dict(event)
    JsonLinesSink(ours).publish(event)
    logger = structlog.wrap_logger(
        structlog.PrintLogger(theirs),
        processors=[
            structlog.processors.JSONRenderer(serializer=lambda d, **_: json_line(d).decode()[:-1])
        ],
        wrapper_class=structlog.BoundLogger,
    )
    fields = dict(event)
    logger.msg(fields.pop("event"), **fields)
    assert ours.getvalue() == theirs.getvalue()
    assert next(iter(json.loads(ours.getvalue()))) == "event"
    assert event == before and list(event) == list(before)
