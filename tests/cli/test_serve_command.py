"""`wt serve` as a real process: HTTP, several universes, stdio, clean shutdown on signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tty
from pathlib import Path
from typing import Any

import httpx2
import mcp
import pytest
import trio

from tests.cli.test_universe_commands import EXAMPLE
from tests.compat import BLUEWING, COMPAT_UNIVERSE, TOOL_NAMES
from tests.mcp.stdio_session import MODERN_META
from tests.processes import WT, read_until, wt_serve, wt_serve_stdio
from tests.test_trusted_hosts_listeners import PLAIN_CALL as MOTD
from tests.test_trusted_hosts_listeners import TOOLS_LIST, handshake, post


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
async def test_wt_serve_prints_url_serves_and_stops_on_signal(stop_signal: signal.Signals) -> None:
    """The URL is printed once ready; each call is one JSON log line; a signal stops it with 0."""
    with trio.fail_after(60):
        async with wt_serve(str(COMPAT_UNIVERSE)) as (process, first):
            url = first.decode().strip()
            assert url.startswith("http://127.0.0.1:")
            assert url.endswith("/mcp")
            async with mcp.Client(url) as client:
                hit = await client.call_tool("client_lookup", {"query": "Bluewing Logistics"})
                miss = await client.call_tool("client_lookup", {"query": "Nobody"})
            process.send_signal(stop_signal)
            await process.wait()
            assert process.stderr is not None
            stderr = await process.stderr.receive_some(1 << 20)
    assert process.returncode == 0
    assert hit.structured_content == BLUEWING
    assert miss.is_error is True
    events = [json.loads(line) for line in stderr.decode().splitlines() if line.startswith("{")]
    names = [e["event"] for e in events]
    assert names == [
        "fleet_started",
        "scenario_started",
        "server_started",
        "tool_call",
        "tool_call",
        "universe_divergence",
        "server_stopped",
        "scenario_finished",
        "fleet_stopped",
    ]
    assert [e["seq"] for e in events] == list(range(1, 10))
    assert events[3]["tier"] == "exact"
    assert events[5]["reason"] == "no_recorded_result"
    assert events[6]["calls"] == 2
    assert events[7]["divergences"] == 1


async def test_wt_serve_several_universes_prints_mcp_servers_config() -> None:
    """Several NAME=FILE universes each get a URL, printed as a ready `mcpServers` config."""
    with trio.fail_after(60):
        async with wt_serve(f"crm={EXAMPLE}", f"compat={COMPAT_UNIVERSE}", prints_config=True) as (
            process,
            first,
        ):
            config = json.loads(first)
            assert sorted(config["mcpServers"]) == ["compat", "crm"]
            urls = {name: entry["url"] for name, entry in config["mcpServers"].items()}
            assert all(entry["type"] == "http" for entry in config["mcpServers"].values())
            async with mcp.Client(urls["compat"]) as client:
                tools = [t.name for t in (await client.list_tools()).tools]
            async with mcp.Client(urls["crm"]) as client:
                invoices = await client.call_tool("list_invoices", {"account_id": "ACC-1042"})
            process.send_signal(signal.SIGTERM)
            await process.wait()
    assert tools == TOOL_NAMES
    assert invoices.structured_content["next_cursor"] == "p2"
    assert process.returncode == 0


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_stdio_client_spawns_wt_serve_stdio(mode: str, tmp_path: Path) -> None:
    """The SDK's stdio client spawns `wt serve --stdio`, gets the same answers, and its events
    on stderr are those of `wt serve` over HTTP: numbered, between the same lifecycle events."""
    errlog = tmp_path / "stderr.log"
    params = wt_serve_stdio(errlog, "--log-format", "json", str(COMPAT_UNIVERSE))
    with trio.fail_after(60):
        async with mcp.Client(params, mode=mode) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            hit = await client.call_tool("client_lookup", {"query": "Bluewing Logistics", "v": 1})
            miss = await client.call_tool("client_lookup", {"query": "Nobody"})
            with pytest.raises(mcp.MCPError) as info:
                await client.call_tool("refund_card", {})
    assert tools == TOOL_NAMES
    assert hit.structured_content == BLUEWING
    assert miss.is_error is True
    assert info.value.code == -32602
    events = [json.loads(line) for line in errlog.read_text().splitlines() if line.startswith("{")]
    assert [e["event"] for e in events] == [
        "fleet_started",
        "scenario_started",
        "server_started",
        "tool_call",
        "tool_call",
        "universe_divergence",
        "tool_call",
        "universe_divergence",
        "server_stopped",
        "scenario_finished",
        "fleet_stopped",
    ]
    assert [e["seq"] for e in events] == list(range(1, 12))
    assert [e["tier"] for e in events if e["event"] == "tool_call"] == ["keyed", "miss", "miss"]
    assert {(e["pack"], e["scenario"], e["upstream"]) for e in events[3:9]} == {
        ("serve", "serve", "compat")
    }
    assert events[1]["upstreams"] == ["compat"]
    assert events[2]["url"] is None
    assert events[8]["calls"] == 3
    assert (events[9]["calls"], events[9]["divergences"], events[9]["error"]) == (3, 2, None)
    assert (events[10]["events"], events[10]["dropped"]) == (11, 0)


async def test_wt_serve_stdio_writes_events_to_the_events_file(tmp_path: Path) -> None:
    """`--events FILE` applies to stdio as to HTTP: every call's events go to the file, none to
    stderr."""
    errlog, events_file = tmp_path / "stderr.log", tmp_path / "events.jsonl"
    params = wt_serve_stdio(errlog, "--events", str(events_file), str(COMPAT_UNIVERSE))
    with trio.fail_after(60):
        async with mcp.Client(params, mode="legacy") as client:
            await client.call_tool("client_lookup", {"query": "Bluewing Logistics"})
            await client.call_tool("client_lookup", {"query": "Nobody"})
    events = [json.loads(line) for line in events_file.read_text().splitlines()]
    assert [e["event"] for e in events if "tool" in e] == [
        "tool_call",
        "tool_call",
        "universe_divergence",
    ]
    assert [e["seq"] for e in events] == list(range(1, 10))
    assert '"tool_call"' not in errlog.read_text()


async def test_wt_serve_stdio_with_stdout_on_a_terminal() -> None:
    """Not a pipe (a terminal here): stdout is written from worker threads, and the plain calls
    and everything else are still answered, one line each."""
    master, terminal = os.openpty()
    tty.setraw(terminal)  # bytes through unchanged: no "\r\n" for "\n"
    process = await trio.lowlevel.open_process(
        [*WT, "serve", "--stdio", str(COMPAT_UNIVERSE)],
        stdin=subprocess.PIPE,
        stdout=terminal,
        stderr=subprocess.DEVNULL,
    )
    os.close(terminal)
    try:
        with trio.fail_after(60):
            assert process.stdin is not None
            async with trio.lowlevel.FdStream(master) as screen:
                buffer = b""

                async def request(message: dict[str, Any]) -> Any:
                    nonlocal buffer
                    assert process.stdin is not None
                    await process.stdin.send_all(json.dumps(message).encode() + b"\n")
                    while b"\n" not in buffer:
                        buffer += await screen.receive_some()
                    line, _, buffer = buffer.partition(b"\n")
                    return json.loads(line)

                init = {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                }
                opened = await request(
                    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
                )
                await process.stdin.send_all(
                    b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n'
                )
                hit = await request(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "tools/call",
                        "params": {
                            "name": "client_lookup",
                            "arguments": {"query": "Bluewing Logistics"},
                        },
                    }
                )
                listed = await request({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
                motd = await request(
                    {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "motd"}}
                )
            await process.stdin.aclose()
            await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
    assert opened["result"]["serverInfo"]["name"] == "compat"
    assert hit["result"]["structuredContent"] == BLUEWING
    assert [t["name"] for t in listed["result"]["tools"]] == TOOL_NAMES
    assert motd["result"]["content"] == [{"type": "text", "text": "All systems nominal."}]
    assert process.returncode == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["serve", "--stdio", "a.json", "b.json"], "--stdio serves exactly one universe"),
        (
            ["serve", "--stdio", "--host", "0.0.0.0", "x.json"],
            "wt: error: <command line>: --stdio speaks MCP on stdin/stdout and binds no socket: "
            "drop --host\n",
        ),
        (
            ["serve", "--stdio", "--port", "8000", "--feed-port", "0", "x.json"],
            "wt: error: <command line>: --stdio speaks MCP on stdin/stdout and binds no socket: "
            "drop --port, --feed-port\n",
        ),
        (
            ["serve", "--stdio", "--allow-host", "replay", "--allow-origin", "http://a", "x.json"],
            "wt: error: <command line>: --stdio speaks MCP on stdin/stdout and binds no socket: "
            "drop --allow-host, --allow-origin\n",
        ),
        (["serve", "--port", "9", "a=x.json", "b=x.json"], "--port needs exactly one universe"),
        (["serve", "a=x.json", "a=y.json"], "upstream name 'a' is used twice"),
        (["serve", "/no/such.universe.json"], "/no/such.universe.json: no such file"),
        (["serve", "--synthesize", "nomodule_xyz:f", "x.json"], "cannot import 'nomodule_xyz:f'"),
    ],
)
def test_wt_serve_bad_input_exits_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bad arguments and files are one error line and exit code 2."""
    from windtunnel.cli.main import main

    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_wt_serve_refuses_synthesize_without_hook(
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    """A universe whose policy is `synthesize` needs --synthesize."""
    from pathlib import Path

    from windtunnel.cli.main import main

    path = Path(str(tmp_path)) / "s.universe.json"
    path.write_text(
        json.dumps(
            {
                "windtunnel_universe": 1,
                "tools": [{"name": "a"}],
                "matching": {"on_miss": "synthesize"},
            }
        )
    )
    assert main(["serve", str(path)]) == 2
    assert "pass synthesize=<callable>" in capsys.readouterr().err


@pytest.mark.parametrize("plain_call", [True, False])
async def test_wt_serve_stdio_exits_quietly_when_the_client_closes_stdout(
    plain_call: bool,
) -> None:
    """A client that closes its end of our stdout is gone: the server stops with 0 and one log
    line, not a BrokenPipeError traceback (for a fast-path answer and for the SDK's alike)."""
    process = await trio.lowlevel.open_process(
        [*WT, "serve", "--stdio", str(COMPAT_UNIVERSE)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    assert process.stderr is not None
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    with trio.fail_after(60):
        await process.stdin.send_all(
            json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}).encode()
            + b'\n{"jsonrpc": "2.0", "method": "notifications/initialized"}\n'
        )
        opened = b""
        while b"\n" not in opened:
            opened += await process.stdout.receive_some()
        assert json.loads(opened)["id"] == 0
        await process.stdout.aclose()
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        if plain_call:
            request = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "motd", "arguments": {}},
            }
        await process.stdin.send_all(json.dumps(request).encode() + b"\n")
        stderr = b""
        while chunk := await process.stderr.receive_some():
            stderr += chunk
        code = await process.wait()
    assert code == 0, stderr.decode()[-2000:]
    assert b"Traceback" not in stderr
    assert b"stdio_client_gone" in stderr


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
async def test_wt_serve_stdio_stops_on_signal(stop_signal: signal.Signals) -> None:
    """A signal while stdin is still open (the reader thread blocked in its read) stops the
    server with 0 and no traceback, as over HTTP."""
    process = await trio.lowlevel.open_process(
        [*WT, "serve", "--stdio", str(COMPAT_UNIVERSE)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    assert process.stderr is not None
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "motd", "arguments": {}, "_meta": MODERN_META},
    }
    with trio.fail_after(60):
        await process.stdin.send_all(json.dumps(call).encode() + b"\n")
        answered = b""
        while b"\n" not in answered:
            answered += await process.stdout.receive_some()
        process.send_signal(stop_signal)
        stderr = b""
        while chunk := await process.stderr.receive_some():
            stderr += chunk
        code = await process.wait()
        await process.stdin.aclose()
    assert json.loads(answered)["id"] == 1
    assert code == 0, stderr.decode()[-2000:]
    assert b"Traceback" not in stderr


async def test_wt_serve_allow_host_and_origin_extend_what_it_answers() -> None:
    """`Host: replay:8000` (a compose service name) is 421 from a plain `wt serve` and answered
    with `--allow-host replay:8000`, by the server and the event feed; a page outside
    `--allow-origin` still gets 403, another port of the name still 421."""
    replay = {"Host": "replay:8000"}
    with trio.fail_after(60):
        async with wt_serve(str(COMPAT_UNIVERSE)) as (process, first):
            url = first.decode().strip()
            async with httpx2.AsyncClient(timeout=10) as http:
                without = await post(http, url, MOTD)("replay:8000", None)
            process.send_signal(signal.SIGTERM)
            await process.wait()
        async with wt_serve(
            "--allow-host",
            "replay:8000",
            "--allow-origin",
            "https://dash.example",
            "--feed-port",
            "0",
            str(COMPAT_UNIVERSE),
        ) as (process, first):
            url = first.decode().strip()
            assert process.stderr is not None
            banner = await read_until(process.stderr, b"event feed: ws://")
            while b"\n" not in banner.split(b"event feed: ")[1]:
                banner += await process.stderr.receive_some()
            feed_url = banner.split(b"event feed: ")[1].split()[0].decode()
            async with httpx2.AsyncClient(timeout=10) as http:
                call, listing = post(http, url, MOTD), post(http, url, TOOLS_LIST)
                statuses = [
                    await call(replay["Host"], None),
                    await listing(replay["Host"], "https://dash.example"),
                    await call(replay["Host"], "http://evil.example"),
                    await call("replay:8001", None),
                    await handshake(feed_url)(replay["Host"], "https://dash.example"),
                    await handshake(feed_url)(replay["Host"], "http://dash.example"),
                ]
            process.send_signal(signal.SIGTERM)
            await process.wait()
    assert without == 421
    assert statuses == [200, 200, 403, 421, 101, 403]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["serve", "--allow-host", "*", "x.json"],
            "argument --allow-host: '*': a wildcard would answer every name and switch the "
            "DNS-rebinding check off; name each host the server is reached by (HOST or HOST:PORT)",
        ),
        (
            ["serve", "--allow-origin", "null", "x.json"],
            "argument --allow-origin: 'null' is the origin of every sandboxed frame and local file",
        ),
        (
            ["serve", "--allow-origin", "http://localhost:3000/", "x.json"],
            "argument --allow-origin: an origin has no path: 'http://localhost:3000', "
            "not 'http://localhost:3000/'",
        ),
    ],
)
def test_wt_serve_refuses_a_wildcard_or_a_bad_allowed_value(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A value that would switch the check off, or is not a host or an origin, is a usage
    error (exit 2) naming the option and the value."""
    from windtunnel.cli.main import main

    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err
