"""A server's questions to the client, recorded and replayed in both protocol eras (issue 25).

The upstream is a real `mcp` SDK server (`MCPServer`) whose `refund` tool depends on two
resolvers: it elicits a confirmation, then samples the client's model with the answer. The SDK
asks them as mid-call requests of a handshake-era client and as two `input_required` rounds of a
2026-07-28 client. `wt record` (the recording proxy) keeps either form in the call's server
messages; `wt serve` asks a live client of either era the same questions its own way, and a
different answer is a `client_answer_differs` divergence.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import mcp
import mcp_types as types
import pydantic
import pytest
import trio
from mcp.server.mcpserver import Elicit, MCPServer, Resolve, Sample

from tests.asgi_http import serve_app
from windtunnel.mcp import RecordedMCPServer
from windtunnel.mcp._input_rounds import plan, seal_state
from windtunnel.record import RecordingProxy
from windtunnel.record.saving import save_recording

pytestmark = pytest.mark.timeout(90)


class Confirm(pydantic.BaseModel):
    ok: bool


def confirm(reason: str) -> Elicit[Confirm]:
    return Elicit(f"Refund for {reason}?", Confirm)


def opinion(reason: str, answer: Annotated[Confirm, Resolve(confirm)]) -> Sample:
    text = f"Is a refund for {reason} fair (confirmed: {answer.ok})?"
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=text))
    return Sample([message], max_tokens=20)


def build_upstream() -> MCPServer:
    server = MCPServer("refunds")

    @server.tool()
    def refund(
        reason: str,
        answer: Annotated[Confirm, Resolve(confirm)],
        verdict: Annotated[types.CreateMessageResult, Resolve(opinion)],
    ) -> str:
        said = verdict.content.text if isinstance(verdict.content, types.TextContent) else "?"
        return f"refund for {reason}: confirmed={answer.ok}, model said {said}"

    return server


class Agent:
    """A client's answers to the server's questions, and what it was asked, in order."""

    def __init__(self, *, confirms: bool = True, model_says: str = "fair") -> None:
        self.confirms = confirms
        self.model_says = model_says
        self.asked: list[tuple[str, str]] = []

    async def on_elicit(
        self, context: Any, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.asked.append(("elicit", params.message))
        return types.ElicitResult(action="accept", content={"ok": self.confirms})

    async def on_sample(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        content = params.messages[0].content
        self.asked.append(
            ("sample", content.text if isinstance(content, types.TextContent) else "")
        )
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=self.model_says),
            model="scripted",
        )

    async def refund(self, server: str | mcp.StdioServerParameters, mode: str) -> str:
        async with mcp.Client(
            server,
            mode=mode,
            elicitation_callback=self.on_elicit,
            sampling_callback=self.on_sample,
        ) as client:
            result = await client.call_tool("refund", {"reason": "a broken kettle"})
        [block] = result.content
        assert isinstance(block, types.TextContent)
        return block.text


ASKED = [
    ("elicit", "Refund for a broken kettle?"),
    ("sample", "Is a refund for a broken kettle fair (confirmed: True)?"),
]
ANSWER = "refund for a broken kettle: confirmed=True, model said fair"


async def record(tmp_path: Path, mode: str) -> Path:
    """Record one `refund` call by a client of `mode`'s era; the universe's path."""
    agent = Agent()
    async with (
        serve_app(build_upstream().streamable_http_app()) as upstream,
        trio.open_nursery() as nursery,
    ):
        proxy = RecordingProxy(upstream, name="refunds")
        url = await proxy.start(nursery)
        assert await agent.refund(url, mode) == ANSWER
        await proxy.stop()
    assert agent.asked == ASKED
    path = tmp_path / f"refunds-{mode}.universe.json"
    save_recording(proxy.recording(), path)
    return path


def recorded_messages(path: Path) -> list[dict[str, Any]]:
    [recording] = json.loads(path.read_text())["recordings"]
    messages: list[dict[str, Any]] = recording["server_messages"]
    return messages


async def replay(path: Path, agent: Agent, mode: str) -> tuple[str, RecordedMCPServer]:
    server = RecordedMCPServer(path)
    server.log_events = False
    async with trio.open_nursery() as nursery:
        url = await server.start(nursery)
        answer = await agent.refund(url, mode)
        await server.stop()
    return answer, server


async def test_a_2026_session_is_recorded_with_its_input_rounds(tmp_path: Path) -> None:
    """The two `input_required` rounds are kept in the final call's messages: each question
    with its round, its key and the answer the client gave on retry."""
    with trio.fail_after(60):
        path = await record(tmp_path, "auto")
    messages = recorded_messages(path)
    assert [(m["method"], m["input_round"]) for m in messages] == [
        ("elicitation/create", 1),
        ("sampling/createMessage", 2),
    ]
    assert messages[0]["params"]["message"] == "Refund for a broken kettle?"
    assert messages[0]["response"] == {"result": {"action": "accept", "content": {"ok": True}}}
    assert messages[1]["response"]["result"]["content"] == {"type": "text", "text": "fair"}
    assert all(isinstance(m["input_key"], str) and m["input_key"] for m in messages)


@pytest.mark.parametrize("recorded_in", ["auto", "legacy"])
@pytest.mark.parametrize("replayed_to", ["auto", "legacy"])
async def test_each_era_is_asked_the_recorded_questions_its_own_way(
    tmp_path: Path, recorded_in: str, replayed_to: str
) -> None:
    """Recorded in either era, replayed to a client of either era: the live client is asked the
    same two questions in the same order and gets the recorded answer; one call, a hit, with
    nothing left unsent."""
    with trio.fail_after(60):
        path = await record(tmp_path, recorded_in)
        agent = Agent()
        answer, server = await replay(path, agent, replayed_to)
    assert (answer, agent.asked) == (ANSWER, ASKED)
    [call] = server.call_log()
    assert call.divergence is None
    assert call.extra == {"match": {"tier": "exact", "index": 0}}


@pytest.mark.parametrize("replayed_to", ["auto", "legacy"])
async def test_over_stdio_too(tmp_path: Path, replayed_to: str) -> None:
    """`wt serve --stdio` of the 2026-07-28 recording: the same questions, the same answer."""
    with trio.fail_after(60):
        path = await record(tmp_path, "auto")
        agent = Agent()
        stdio = mcp.StdioServerParameters(
            command=sys.executable, args=["-m", "windtunnel", "serve", "--stdio", str(path)]
        )
        answer = await agent.refund(stdio, replayed_to)
    assert (answer, agent.asked) == (ANSWER, ASKED)


@pytest.mark.parametrize("replayed_to", ["auto", "legacy"])
async def test_a_different_answer_on_replay_is_a_divergence(
    tmp_path: Path, replayed_to: str
) -> None:
    """The live client declines to confirm this time: the exchange stops at that question (the
    sampling question is never asked) and the call is a `client_answer_differs` divergence with
    what was asked and both answers, answered by the tool's policy."""
    with trio.fail_after(60):
        path = await record(tmp_path, "auto")
        agent = Agent(confirms=False)
        answer, server = await replay(path, agent, replayed_to)
    assert agent.asked == ASKED[:1]
    assert json.loads(answer)["error"] == "no_recorded_result"
    [call] = server.call_log()
    assert call.divergence is not None
    assert call.divergence["reason"] == "client_answer_differs"
    client = call.divergence["client"]
    assert client["asked"]["method"] == "elicitation/create"
    assert client["answered_then"] == {"result": {"action": "accept", "content": {"ok": True}}}
    assert client["answered_now"] == {"result": {"action": "accept", "content": {"ok": False}}}


async def test_a_forged_or_foreign_request_state_is_refused(tmp_path: Path) -> None:
    """The client echoes the state verbatim and the server trusts none it did not mint for this
    call: an altered state, or one sealed for the same call to a recording that asked other
    questions, is -32602 and nothing is logged."""
    with trio.fail_after(60):
        path = await record(tmp_path, "auto")
        server = RecordedMCPServer(path)
        server.log_events = False
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with mcp.Client(url, mode="auto") as client:
                first = await client.session.call_tool(
                    "refund", {"reason": "a broken kettle"}, allow_input_required=True
                )
                assert isinstance(first, types.InputRequiredResult)
                assert first.request_state is not None
                [key] = first.input_requests or {}
                answer = {key: types.ElicitResult(action="accept", content={"ok": True})}
                refused = []
                arguments = {"reason": "a broken kettle"}
                other_questions = [{"method": "roots/list", "response": {"result": {"roots": []}}}]
                for state in [
                    first.request_state[:-2] + "AA",
                    seal_state("refund", arguments, other_questions, 1),
                ]:
                    with pytest.raises(mcp.MCPError) as caught:
                        await client.session.call_tool(
                            "refund",
                            arguments,
                            input_responses=answer,
                            request_state=state,
                            allow_input_required=True,
                        )
                    refused.append((caught.value.error.code, caught.value.error.message))
            await server.stop()
    assert refused == [(-32602, "invalid requestState")] * 2
    assert server.call_log() == []


def test_the_questions_are_grouped_into_rounds_as_recorded() -> None:
    """Rounds recorded as rounds stay together; mid-call requests are one round each;
    notifications go before the round they preceded; a `ping` cannot be put in a round."""
    note = {"method": "notifications/message", "params": {"level": "info", "data": "x"}}
    answered = {"response": {"result": {}}}
    elicit = {"method": "elicitation/create", **answered}
    sample = {"method": "sampling/createMessage", **answered}
    ping = {"method": "ping", **answered}
    rounds = plan(
        [
            note,
            {**elicit, "input_round": 1, "input_key": "a"},
            {**sample, "input_round": 1, "input_key": "b"},
            {**elicit, "input_round": 2, "input_key": "c"},
            ping,
            note,
            sample,
            sample,
            note,
        ]
    )
    assert [
        ([n["method"] for n in r.before], [k for k, _ in r.requests]) for r in rounds.rounds
    ] == [
        (["notifications/message"], ["a", "b"]),
        ([], ["c"]),
        (["notifications/message"], ["request-6"]),
        ([], ["request-7"]),
    ]
    assert (rounds.after, rounds.unsendable) == ([note], 1)
