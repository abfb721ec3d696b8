"""Where a stdio upstream's own messages go for an HTTP agent (`ServerMessageRouter`)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
import trio
import trio.testing

from windtunnel.record.routing import Outbox, ServerMessageRouter

pytestmark = pytest.mark.timeout(10)


def line(message: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode()


def call(request_id: int, token: Any = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "t", "arguments": {}}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def taken(outbox: Outbox) -> list[tuple[bool, bytes]]:
    items = []
    while True:
        try:
            items.append(outbox.receive.receive_nowait())
        except trio.WouldBlock:
            return items


def progress(token: Any) -> bytes:
    return line({"method": "notifications/progress", "params": {"progressToken": token}})


LOG = line({"method": "notifications/message", "params": {"level": "info", "data": "x"}})


async def test_progress_goes_by_token_the_rest_to_the_one_call_or_the_get_stream() -> None:
    source_in, source_out = trio.open_memory_channel[bytes](math.inf)
    router = ServerMessageRouter(source_out)
    first, second = router.open(call(1, token="a")), router.open(call(2, token=7))
    for sent in (progress(7), progress("a"), LOG, progress("nobody")):
        source_in.send_nowait(sent)
    router.drain()
    assert taken(first) == [(False, progress("a"))]
    assert taken(second) == [(False, progress(7))]
    # Two calls in flight: a message naming neither goes to the GET stream.
    assert [router.for_get.receive_nowait() for _ in range(2)] == [LOG, progress("nobody")]
    await router.finish(call(1), b"answer 1")
    source_in.send_nowait(LOG)
    await router.finish(call(2), b"answer 2")
    # One call left: the log written before its answer is its own, and comes first.
    assert taken(second) == [(False, LOG), (True, b"answer 2")]
    assert taken(first) == [(True, b"answer 1")]


async def test_with_no_call_in_flight_everything_waits_for_the_get_stream() -> None:
    source_in, source_out = trio.open_memory_channel[bytes](math.inf)
    router = ServerMessageRouter(source_out)
    request = line({"id": 5, "method": "roots/list"})
    source_in.send_nowait(request)
    source_in.close()
    with trio.fail_after(5):
        await router.run()
    assert [item async for item in router.for_get] == [request]


async def test_a_message_on_its_way_to_the_router_still_comes_before_the_answer() -> None:
    """The stdio reader wakes the router (a server message) and the waiting request (its answer)
    in one step; a Trio channel hands the message straight to the router, which runs later, in
    an order Trio picks at random. The answer must still come last: 20 times over, so an answer
    that does not wait for the router fails here almost surely."""
    with trio.fail_after(5):
        for _ in range(20):
            source_in, source_out = trio.open_memory_channel[bytes](math.inf)
            answer_in, answer_out = trio.open_memory_channel[bytes](1)
            router = ServerMessageRouter(source_out)
            outbox = router.open(call(1))

            async def request(
                router: ServerMessageRouter = router, answers: Any = answer_out
            ) -> None:
                await router.finish(call(1), await answers.receive())

            async with trio.open_nursery() as nursery:
                nursery.start_soon(router.run)
                nursery.start_soon(request)
                await trio.testing.wait_all_tasks_blocked()
                source_in.send_nowait(LOG)
                answer_in.send_nowait(b"answer")
                await trio.testing.wait_all_tasks_blocked()
                nursery.cancel_scope.cancel()
            assert taken(outbox) == [(False, LOG), (True, b"answer")]
