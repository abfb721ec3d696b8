"""What the transport benchmarks serve: a one-tool universe, our server, and canned responders.

The canned responders are the *ceilings*: no MCP SDK, no pydantic, no matcher. They answer each
JSON-RPC method with the bytes our own server sent for it (captured once, `capture_answers`), so
the client parses exactly the same payloads either way. `target_server.py` runs any of them in a
subprocess (`python scripts/benchlib/target_server.py KIND ...`).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import Any

__all__ = [
    "CALL_ARGS",
    "EXPECTED",
    "TOOL",
    "CannedAnswers",
    "ServerProcess",
    "canned_asgi_app",
    "canned_reply",
    "capture_answers",
    "write_session_universe",
    "write_weather_universe",
]

HERE = Path(__file__).resolve().parent
TARGET_SERVER = HERE / "target_server.py"
TOOL = "get_weather"
CALL_ARGS = {"city": "Paris"}
EXPECTED = {"city": "Paris", "conditions": "sunny", "ok": True, "temp_c": 21}

CannedAnswers = dict[str, str]
"""Era prefix + JSON-RPC method -> the JSON text of the `result` our server answered."""
LEGACY, MODERN = "legacy:", "modern:"
_MODERN_MARK = b'"io.modelcontextprotocol/protocolVersion"'


def _is_modern(body: bytes | bytearray) -> bool:
    """A 2026-07-28 request stamps the protocol version into `params._meta` (a byte search:
    the responder must not parse more than a ceiling should)."""
    return _MODERN_MARK in body


def write_weather_universe(path: Path) -> Path:
    """The one-tool recording every server in the transport benchmarks serves (peers too)."""
    path.write_text(
        json.dumps(
            {
                "windtunnel_universe": 1,
                "tools": [
                    {
                        "name": TOOL,
                        "description": "Current weather for a city.",
                        "input_schema": {
                            "type": "object",
                            "properties": {"city": {"type": "string"}},
                            "required": ["city"],
                        },
                    }
                ],
                "recordings": [{"tool_name": TOOL, "args": CALL_ARGS, "result": EXPECTED}],
            },
            indent=2,
        )
    )
    return path


def write_session_universe(path: Path) -> Path:
    """The weather recording plus a sequence-mode tool (never called): a universe whose server
    hands out HTTP sessions (a sequence position belongs to a session), so a handshake-era
    client's calls are answered in one."""
    weather = path.with_name("weather-only.universe.json")
    doc = json.loads(write_weather_universe(weather).read_text())
    doc["tools"].append({"name": "next_page", "mode": "sequence"})
    doc["recordings"].append({"tool_name": "next_page", "args": {}, "result": {"page": 1}})
    path.write_text(json.dumps(doc, indent=2))
    return path


def canned_reply(answers: CannedAnswers, body: bytes) -> bytes | None:
    """The response to one JSON-RPC message: the canned result with the caller's id, or None
    for a notification. An unknown method gets method-not-found (a client probing for a feature)."""
    message = json.loads(body)
    if "id" not in message:
        return None
    ident = json.dumps(message["id"]).encode()
    era = MODERN if _is_modern(body) else LEGACY
    result = answers.get(era + message.get("method", ""))
    if result is None:
        return (
            b'{"jsonrpc":"2.0","id":'
            + ident
            + b',"error":{"code":-32601,"message":"Method not found"}}'
        )
    return b'{"jsonrpc":"2.0","id":' + ident + b',"result":' + result.encode() + b"}"


def canned_asgi_app(answers: CannedAnswers) -> Callable[..., Any]:
    """A bare ASGI app: any POST gets the canned JSON reply; nothing else is looked at."""
    headers = [(b"content-type", b"application/json")]

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        reply = canned_reply(answers, b"".join(chunks)) if scope["method"] == "POST" else None
        if reply is None:
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [*headers, (b"content-length", str(len(reply)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": reply})

    return app


def capture_answers(universe: Path) -> CannedAnswers:
    """Run the SDK client in both eras against our server, recording each method's result text."""
    import trio

    return trio.run(_capture, universe)


async def _capture(universe: Path) -> CannedAnswers:
    import mcp
    import trio
    from hypercorn.app_wrappers import ASGIWrapper
    from hypercorn.trio.run import worker_serve

    from windtunnel.mcp._http_serving import bind_sockets, worker_config
    from windtunnel.mcp.recorded import RecordedMCPServer

    answers: CannedAnswers = {}
    requests: list[str] = []
    inner = (
        RecordedMCPServer(universe)
        .sdk_server()
        .streamable_http_app(
            streamable_http_path="/mcp", stateless_http=True, json_response=True, host="127.0.0.1"
        )
    )

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await inner(scope, receive, send)
            return
        body = bytearray()

        async def recv() -> Any:
            message = await receive()
            body.extend(message.get("body", b""))
            return message

        sent = bytearray()

        async def snd(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.body":
                sent.extend(message.get("body", b""))
            await send(message)

        await inner(scope, recv, snd)
        request = json.loads(body)
        if "id" in request and sent:
            reply = json.loads(sent)
            if "result" in reply:
                era = MODERN if _is_modern(body) else LEGACY
                answers[era + request["method"]] = json.dumps(
                    reply["result"], separators=(",", ":")
                )
                requests.append(body.decode())

    sockets = bind_sockets("127.0.0.1", 0)
    shutdown = trio.Event()
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(
            lambda task_status: worker_serve(
                ASGIWrapper(app),  # type: ignore[arg-type]
                worker_config("127.0.0.1", 0),
                sockets=sockets,
                shutdown_trigger=shutdown.wait,
                task_status=task_status,
            )
        )
        url = binds[0] + "/mcp"
        for mode in ("legacy", "auto"):
            async with mcp.Client(url, mode=mode) as client:
                await client.list_tools()
                await client.call_tool(TOOL, CALL_ARGS)
        shutdown.set()
    if os.environ.get("BENCH_SHOW_REQUESTS"):
        print("\n".join(requests))
    return answers


class ServerProcess:
    """A target server in a subprocess: started, its URL read from stdout, stopped by closing
    its stdin (so a cProfile dump at exit is complete)."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(TARGET_SERVER), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.startswith("http"):
            self.stop()
            raise RuntimeError(f"target server {args} did not start: {line!r}")
        self.url = line

    @property
    def pid(self) -> int:
        return self.proc.pid

    def cpu_seconds(self) -> float:
        """User + system CPU time the server process has used so far."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def rss_kb(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        return 0

    def stop(self, timeout: float = 10.0) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        deadline = time.monotonic() + timeout
        for sig in (None, signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
            if sig is not None:
                try:
                    os.killpg(self.proc.pid, sig)
                except ProcessLookupError:
                    break
            try:
                self.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
                break
            except subprocess.TimeoutExpired:
                deadline = time.monotonic() + 2
        if self.proc.stdout is not None:
            self.proc.stdout.close()
