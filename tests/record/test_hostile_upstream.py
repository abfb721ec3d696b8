"""The proxy in front of a hostile HTTP upstream: `--timeout` is a deadline on the whole answer
(an event stream kept alive with comments is cut there), a 16 MiB event passes through in time
linear in its size, and an upstream's error body is redacted before it is printed."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import httpx2
import mcp
import pytest
import trio

from tests.processes import WT, read_until
from tests.record.hostile_http import KEEPALIVE_S, LEAKED, hostile_http_upstream
from tests.record.upstreams import wt_record_stdio
from windtunnel.record import RecordingProxy
from windtunnel.universe import load_universe

BIG = 16 * 1024 * 1024


async def test_a_stream_kept_alive_with_comments_is_cut_at_the_timeout_http_agent() -> None:
    """HTTP agent: the call gets the timeout error about 1 s in, though the upstream keeps its
    stream alive with a comment every 0.1 s for 30 s; the request stays unanswered in the
    recording and the session goes on."""
    with trio.fail_after(25):
        async with trio.open_nursery() as nursery, hostile_http_upstream() as (url, hostile):
            proxy = RecordingProxy(url, name="hostile", timeout_s=1)
            proxy_url = await proxy.start(nursery)
            async with mcp.Client(proxy_url, mode="legacy") as client:
                started = trio.current_time()
                with pytest.raises(mcp.MCPError) as cut:
                    await client.call_tool("keepalive", {})
                waited = trio.current_time() - started
                after = await client.call_tool("pin", {})
            await proxy.stop()
    assert cut.value.code == -32603
    assert cut.value.message == "wt record: upstream 'hostile' did not answer within 1 s"
    assert 1 <= waited < KEEPALIVE_S / 3
    assert hostile.comments_sent >= 5  # the upstream really did keep the stream alive
    assert after.structured_content == {"pin": 482193, "card": "visa"}
    assert proxy.tap.unanswered() == ["tools/call"]
    assert [call.tool_name for call in proxy.call_log()] == ["pin"]


async def test_a_stream_kept_alive_with_comments_is_cut_at_the_timeout_stdio_agent(
    tmp_path: Path,
) -> None:
    """`wt record --stdio` (the agent speaks stdio, the upstream HTTP): the same error at the
    deadline, and the summary says the request was never answered."""
    out, errlog = tmp_path / "hostile.universe.json", tmp_path / "err"
    with trio.fail_after(40):
        async with hostile_http_upstream() as (url, _):
            params = wt_record_stdio(errlog, "--timeout", "1", "-o", str(out), url)
            async with mcp.Client(params, mode="legacy") as client:
                started = trio.current_time()
                with pytest.raises(mcp.MCPError) as cut:
                    await client.call_tool("keepalive", {})
                waited = trio.current_time() - started
                await client.call_tool("pin", {})
    assert cut.value.message == "wt record: upstream 'upstream' did not answer within 1 s"
    assert 1 <= waited < KEEPALIVE_S / 3
    report = errlog.read_text()
    assert "upstream: 1 request(s) never answered: tools/call" in report
    assert [r.tool_name for r in load_universe(out).recordings] == ["pin"]


def legacy_call(request_id: int, name: str, arguments: dict[str, object]) -> bytes:
    """A handshake-era `tools/call` (no `_meta` envelope): the SDK answers it with an event
    stream, where a 2026-07-28 call gets JSON."""
    params = {"name": name, "arguments": arguments}
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return json.dumps(message).encode()


async def _post_for_text(url: str, body: bytes) -> str:
    """POST one call, read the answer raw (the SDK client stops at 1 MiB per event), and return
    its text: the JSON body, or the data of the event stream's only event."""
    async with httpx2.AsyncClient(timeout=120) as client:
        response = await client.post(
            url,
            content=body,
            headers={
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
            },
        )
    text = response.text
    if response.headers["content-type"].startswith("text/event-stream"):
        text = "".join(line[6:] for line in text.splitlines() if line.startswith("data: "))
    return json.loads(text)["result"]["content"][0]["text"]  # type: ignore[no-any-return]


async def _read_line(stream: trio.abc.ReceiveStream) -> bytes:
    """One line, looking for its end only in the bytes that just came (linear)."""
    line = bytearray()
    while True:
        chunk = await stream.receive_some()
        assert chunk, "the stream closed before the line ended"
        line += chunk
        if b"\n" in chunk:
            return bytes(line)


@pytest.mark.parametrize("agent", ["http", "stdio"])
async def test_a_16_mib_event_passes_through_the_proxy(agent: str, tmp_path: Path) -> None:
    """A 16 MiB text answered in one event-stream event reaches the agent whole and is recorded,
    over the HTTP front (which took minutes) and `wt record --stdio` (which stopped at httpx's
    1 MiB event limit).
    The time is printed against the direct call (20.8 s through the HTTP front before the SSE
    reader was made linear); the bound is loose: the quadratic reader took minutes here."""
    out = tmp_path / "big.universe.json"
    call = legacy_call(1, "blob", {"size": BIG})
    with trio.fail_after(240):
        async with hostile_http_upstream() as (url, _):
            started = time.perf_counter()
            direct = await _post_for_text(url, call)
            direct_s = time.perf_counter() - started
            command = [*WT, "record", *(["--stdio"] if agent == "stdio" else []), "-o", str(out)]
            process = await trio.lowlevel.open_process(
                [*command, url],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
            assert process.stdin is not None and process.stdout is not None
            started = time.perf_counter()
            if agent == "http":
                proxy_url = (await read_until(process.stdout, b"\n")).decode().strip()
                started = time.perf_counter()
                through = await _post_for_text(proxy_url, call)
                through_s = time.perf_counter() - started
                process.terminate()
            else:
                # A first small call, so the time below leaves out starting the process.
                await process.stdin.send_all(legacy_call(0, "pin", {}) + b"\n")
                await _read_line(process.stdout)
                started = time.perf_counter()
                await process.stdin.send_all(call + b"\n")
                line = await _read_line(process.stdout)
                through_s = time.perf_counter() - started
                through = json.loads(line)["result"]["content"][0]["text"]
                await process.stdin.aclose()
            assert await process.wait() == 0
    print(
        f"16 MiB event, {agent} agent: direct {direct_s:.2f} s, through wt record {through_s:.2f} s"
    )
    assert direct == through == "x" * BIG
    assert through_s < 60
    recorded = load_universe(out).recordings
    assert [r.tool_name for r in recorded][-1] == "blob"
    assert recorded[-1].result["content"][0]["text"] == "x" * BIG


async def test_an_error_body_is_redacted_before_it_is_printed(tmp_path: Path) -> None:
    """`wt record --stdio`: an upstream's HTTP 500 body quoting a key is shown to the agent and on
    stderr with the key replaced by its placeholder; the key is in no file."""
    out, log, errlog = tmp_path / "u.universe.json", tmp_path / "u.jsonl", tmp_path / "err"
    with trio.fail_after(40):
        async with hostile_http_upstream() as (url, _):
            params = wt_record_stdio(
                errlog,
                "--redact",
                "regex:sk-live-[0-9a-f]+",
                "--log",
                str(log),
                "-o",
                str(out),
                url,
            )
            async with mcp.Client(params, mode="legacy") as client:
                with pytest.raises(mcp.MCPError) as refused:
                    await client.call_tool("leak", {})
    assert refused.value.message == (
        "wt record: upstream 'upstream' answered HTTP 500: "
        "internal error: upstream key [REDACTED:1] was refused"
    )
    report = errlog.read_text()
    assert "upstream key [REDACTED:1] was refused" in report
    for text in (report, out.read_text(), log.read_text()):
        assert LEAKED not in text


async def test_the_agents_query_is_added_to_the_upstreams_own() -> None:
    """An upstream URL with a query of its own (a token) and an agent posting with one: the
    upstream gets both, joined with `&` (before: `?token=T?agent=1`, a token the upstream
    could not read)."""
    with trio.fail_after(25):
        async with trio.open_nursery() as nursery, hostile_http_upstream() as (url, hostile):
            proxy = RecordingProxy(url + "?token=T", name="hostile")
            proxy_url = await proxy.start(nursery)
            async with mcp.Client(proxy_url + "?agent=1", mode="legacy") as client:
                pin = await client.call_tool("pin", {})
            await proxy.stop()
    assert pin.structured_content == {"pin": 482193, "card": "visa"}
    assert hostile.query_strings
    assert set(hostile.query_strings) == {b"token=T&agent=1"}
