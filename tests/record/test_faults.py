"""Upstream faults reach the agent as clear JSON-RPC errors, and what was recorded is kept: an
upstream that crashes or hangs, an agent that leaves mid-call, a disk that fills up."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import mcp
import pytest
import trio

from tests.processes import WT
from tests.record.upstreams import SDK_UPSTREAM, sdk_http_upstream
from windtunnel.record import RecordingProxy
from windtunnel.universe import load_universe

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def modern_call(request_id: int, name: str, arguments: dict[str, object]) -> bytes:
    params = {"name": name, "arguments": arguments, "_meta": MODERN_META}
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return json.dumps(message).encode()


async def test_a_stdio_upstream_that_crashes_mid_session() -> None:
    """The crashing call and every later one get a JSON-RPC error naming the upstream and its
    exit code; the calls before the crash stay recorded."""
    proxy = RecordingProxy(SDK_UPSTREAM, name="sdk")
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await proxy.start(nursery)
            async with mcp.Client(url, mode="legacy") as client:
                await client.call_tool("lookup", {"query": "acme"})
                with pytest.raises(mcp.MCPError) as crashed:
                    await client.call_tool("crash", {})
                with pytest.raises(mcp.MCPError) as after:
                    await client.call_tool("lookup", {"query": "acme"})
            await proxy.stop()
    assert crashed.value.code == -32603
    assert crashed.value.message == "wt record: upstream 'sdk' exited with code 3"
    assert after.value.message == "wt record: upstream 'sdk' exited with code 3"
    assert [call.tool_name for call in proxy.call_log()] == ["lookup"]
    assert [r.tool_name for r in proxy.recording().universe.recordings] == ["lookup"]


async def test_an_http_upstream_that_goes_away_mid_session() -> None:
    """Once the upstream stops listening, calls get an error saying it cannot be reached."""
    shutdown, stopped = trio.Event(), trio.Event()
    with trio.fail_after(60):
        async with (
            trio.open_nursery() as nursery,
            sdk_http_upstream(stateless=True, shutdown=shutdown, stopped=stopped) as upstream,
        ):
            proxy = RecordingProxy(upstream, name="sdk")
            url = await proxy.start(nursery)
            async with mcp.Client(url, mode="auto") as client:
                await client.call_tool("lookup", {"query": "acme"})
                shutdown.set()
                await stopped.wait()
                with pytest.raises(mcp.MCPError) as gone:
                    await client.call_tool("lookup", {"query": "acme"})
            await proxy.stop()
    assert gone.value.code == -32603
    assert gone.value.message.startswith("wt record: upstream 'sdk' cannot be reached: ")
    assert [call.tool_name for call in proxy.call_log()] == ["lookup"]


@pytest.mark.parametrize("upstream_kind", ["stdio", "http"])
async def test_an_upstream_that_hangs_past_the_timeout(upstream_kind: str) -> None:
    """A call unanswered after `timeout_s` gets a JSON-RPC error saying so; the session goes on."""
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery, sdk_http_upstream(stateless=True) as http:
            upstream = SDK_UPSTREAM if upstream_kind == "stdio" else http
            proxy = RecordingProxy(upstream, name="sdk", timeout_s=3)
            url = await proxy.start(nursery)
            async with mcp.Client(url, mode="auto") as client:
                with pytest.raises(mcp.MCPError) as hung:
                    await client.call_tool("slow", {"seconds": 30})
                after = await client.call_tool("lookup", {"query": "acme"})
            await proxy.stop()
    assert hung.value.code == -32603
    assert hung.value.message == "wt record: upstream 'sdk' did not answer within 3 s"
    assert after.structured_content == {"name": "Acme", "email": "ops@bluewing.example", "tier": 2}
    assert "lookup" in [call.tool_name for call in proxy.call_log()]


async def test_an_agent_that_disconnects_mid_call_over_http() -> None:
    """The agent's connection closes before the answer: the upstream's answer is still recorded."""
    proxy = RecordingProxy(SDK_UPSTREAM, name="sdk")
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await proxy.start(nursery)
            host, port = url.removeprefix("http://").removesuffix("/mcp").rsplit(":", 1)
            body = modern_call(1, "slow", {"seconds": 0.3})
            stream = await trio.open_tcp_stream(host, int(port))
            await stream.send_all(
                b"POST /mcp HTTP/1.1\r\nHost: " + f"{host}:{port}".encode() + b"\r\n"
                b"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
            )
            await stream.aclose()
            await proxy.changed.wait()
            await proxy.stop()
    assert [(c.tool_name, c.args) for c in proxy.call_log()] == [("slow", {"seconds": 0.3})]
    assert proxy.call_log()[0].result["content"] == [{"type": "text", "text": "slept 0.3"}]


async def test_an_agent_that_closes_stdin_mid_call(tmp_path: Path) -> None:
    """`wt record --stdio` answers the call in flight, then writes it and exits 0."""
    out = tmp_path / "sdk.universe.json"
    with trio.fail_after(60):
        process = await trio.lowlevel.open_process(
            [*WT, "record", "--stdio", "-o", str(out), "--", *SDK_UPSTREAM],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stdin is not None and process.stdout is not None
        await process.stdin.send_all(modern_call(7, "slow", {"seconds": 0.3}) + b"\n")
        await process.stdin.aclose()
        answer = b""
        while chunk := await process.stdout.receive_some():
            answer += chunk
        assert await process.wait() == 0
    assert json.loads(answer)["result"]["content"] == [{"type": "text", "text": "slept 0.3"}]
    assert [(r.tool_name, r.args) for r in load_universe(out).recordings] == [
        ("slow", {"seconds": 0.3})
    ]


def _can_mount_tmpfs() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=4k tmpfs /tmp"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


@pytest.mark.skipif(not _can_mount_tmpfs(), reason="needs `unshare -rm` to mount a small tmpfs")
async def test_a_full_disk_is_a_clear_error_and_keeps_what_was_recorded(tmp_path: Path) -> None:
    """The universe sits on a 16 KiB tmpfs: the call that overflows it fails the write with one
    line naming the file, the earlier checkpoint stays whole, the log elsewhere keeps every call,
    and `wt record` exits 2 saying what was recorded but not written."""
    full = tmp_path / "full"
    full.mkdir()
    out, log, errlog = full / "sdk.universe.json", tmp_path / "sdk.jsonl", tmp_path / "err"
    inner = f'mount -t tmpfs -o size=16k tmpfs {full} && exec "$0" "$@" 2>{errlog}'
    params = mcp.StdioServerParameters(
        command="unshare",
        args=[
            "-rm",
            "sh",
            "-c",
            inner,
            *WT,
            "record",
            "--stdio",
            "-o",
            str(out),
            "--log",
            str(log),
            "--",
            *SDK_UPSTREAM,
        ],
    )
    with trio.fail_after(60):
        async with mcp.Client(params, mode="legacy") as client:
            await client.call_tool("lookup", {"query": "acme"})
            await client.call_tool("blob", {"size": 40_000})
    report = errlog.read_text()
    # The error line comes from the checkpoint after `blob` or, when the session ends before
    # that checkpoint runs, from the final write: either way it names the file and the cause.
    assert f"error: {out}: cannot write: No space left on device" in report
    assert "2 recording(s) from 1 upstream(s) recorded but not written" in report
    calls = [json.loads(line)["msg"] for line in log.read_text().splitlines()]
    assert [m["params"]["name"] for m in calls if m.get("method") == "tools/call"] == [
        "lookup",
        "blob",
    ]
