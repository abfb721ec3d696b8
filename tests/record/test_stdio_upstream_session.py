"""An HTTP agent in front of a stdio upstream gets a session (issue 25): the server's own requests
and notifications reach it while a call runs and afterwards, its answers reach the server, and all
of it is recorded with the call it belongs to.

The upstream is `@modelcontextprotocol/server-everything` in its stdio mode (tests/node), the agent
the official `mcp` SDK client over Streamable HTTP.
"""

from __future__ import annotations

from typing import Any

import httpx2
import mcp
import mcp_types as types
import pytest
import trio

from tests.record.test_reference_servers import EVERYTHING, EVERYTHING_COMMAND
from windtunnel.record import RecordingProxy

pytestmark = [pytest.mark.node, pytest.mark.timeout(90)]

ROOT = {"uri": "file:///work/project", "name": "project"}


@pytest.fixture(scope="module", autouse=True)
def _everything_installed() -> None:
    if not EVERYTHING.is_file():
        pytest.fail("server-everything missing: run `npm install` in tests/node")


async def sampling(context: Any, params: types.CreateMessageRequestParams) -> Any:
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="the answer is 42"),
        model="scripted-model",
    )


async def roots(context: Any) -> Any:
    return types.ListRootsResult.model_validate({"roots": [ROOT]})


async def test_sampling_and_roots_round_trips_through_the_proxy_are_recorded() -> None:
    roots_taken = trio.Event()

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        if str(params.data).startswith("Roots updated"):
            roots_taken.set()

    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            proxy = RecordingProxy(EVERYTHING_COMMAND, name="everything")
            url = await proxy.start(nursery)
            async with mcp.Client(
                url,
                mode="legacy",
                sampling_callback=sampling,
                list_roots_callback=roots,
                logging_callback=on_log,
            ) as client:
                # The server asks for the roots by itself shortly after `initialized`, over the
                # GET stream the agent opens once it holds a session, and logs that it got them
                # (waited for: over stdio, a message sent while one call is in flight is that
                # call's).
                await roots_taken.wait()
                sampled = await client.call_tool(
                    "trigger-sampling-request", {"prompt": "What is 6 x 7?", "maxTokens": 20}
                )
                listed = await client.call_tool("get-roots-list", {})
                await client.call_tool(
                    "trigger-long-running-operation",
                    {"duration": 0.3, "steps": 3},
                    progress_callback=on_progress,
                )
            await proxy.stop()
    text = sampled.content[0].text  # type: ignore[union-attr]
    assert "the answer is 42" in text
    assert ROOT["uri"] in listed.content[0].text  # type: ignore[union-attr]
    assert progress == [1, 2, 3]

    recording = proxy.recording()
    names = [r.tool_name for r in recording.universe.recordings]
    assert names == ["trigger-sampling-request", "get-roots-list", "trigger-long-running-operation"]
    sampling_messages, _, long_running = recording.additions.server_messages
    [asked] = sampling_messages
    assert asked["method"] == "sampling/createMessage"
    assert asked["params"]["messages"] == [
        {
            "role": "user",
            "content": {
                "type": "text",
                "text": "Resource trigger-sampling-request context: What is 6 x 7?",
            },
        }
    ]
    assert asked["response"] == {
        "result": {
            "role": "assistant",
            "content": {"type": "text", "text": "the answer is 42"},
            "model": "scripted-model",
        }
    }
    assert [(m["method"], m["params"]["progress"]) for m in long_running] == [
        ("notifications/progress", 1),
        ("notifications/progress", 2),
        ("notifications/progress", 3),
    ]
    # The roots request came between calls: in the capture log, the client's answer with it.
    answers = [r.msg for r in proxy.tap.log if r.dir == "c2s" and "result" in r.msg]
    assert {"roots": [ROOT]} in [a["result"] for a in answers]


async def test_the_session_is_the_one_handed_out() -> None:
    """Another session id is refused with 404 (the agent starts over); DELETE ends the id only:
    the stdio server, one session, lives on for the next `initialize`."""
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            proxy = RecordingProxy(EVERYTHING_COMMAND, name="everything")
            url = await proxy.start(nursery)
            headers = {
                "accept": "application/json, text/event-stream",
                "content-type": "application/json",
                "mcp-session-id": "not-the-session",
            }
            body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            async with mcp.Client(url, mode="legacy") as client, httpx2.AsyncClient() as http:
                await client.call_tool("echo", {"message": "one"})
                refused = await http.post(url, json=body, headers=headers)
            async with mcp.Client(url, mode="legacy") as client:
                again = await client.call_tool("echo", {"message": "two"})
            await proxy.stop()
    assert refused.status_code == 404
    assert again.content[0].text == "Echo: two"  # type: ignore[union-attr]
