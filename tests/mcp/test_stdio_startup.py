"""What a spawned stdio process imports: the MCP SDK only where a request needs it (issue 31).

Each check runs a real process under `python -X importtime` (the interpreter's own account of
every module it imported, on stderr) and asserts on the top-level packages in it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CRM = ROOT / "configs" / "examples" / "crm.universe.json"
SDK_PACKAGES = {"mcp", "mcp_types", "pydantic", "anyio", "starlette", "httpx2", "hypercorn"}
SESSION = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "client_lookup", "arguments": {"query": "Bluewing Logistics"}},
    },
]


def _imported(stderr: str) -> set[str]:
    """The top-level packages named in `-X importtime` lines."""
    return {
        line.rsplit("|", 1)[1].strip().split(".")[0]
        for line in stderr.splitlines()
        if line.startswith("import time:") and "cumulative" not in line
    }


def _run(code_or_args: list[str], stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-X", "importtime", *code_or_args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


@pytest.mark.timeout(150)
def test_the_servers_import_without_the_sdk() -> None:
    """`windtunnel.mcp` (the SPI, recorded and mock servers) and `wt record`'s proxy load no SDK
    until a server is served through it."""
    done = _run(
        ["-c", "import windtunnel.mcp, windtunnel.record.proxy, windtunnel.cli.record_main"]
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    imported = _imported(done.stderr.decode())
    assert "windtunnel" in imported
    assert imported & SDK_PACKAGES == set()


@pytest.mark.timeout(200)
def test_record_stdio_with_a_command_upstream_never_imports_the_sdk(tmp_path: Path) -> None:
    """`wt record --stdio -- COMMAND` forwards a whole session and writes its universe without
    the SDK in the proxy's process (the upstream, a `wt serve --stdio`, has its own)."""
    output = tmp_path / "crm.universe.json"
    lines = b"".join(json.dumps(message).encode() + b"\n" for message in SESSION)
    upstream = [sys.executable, "-m", "windtunnel", "serve", "--stdio", str(CRM)]
    done = _run(
        ["-m", "windtunnel", "record", "--stdio", "-o", str(output), "--", *upstream], lines
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    answers = {json.loads(line)["id"]: json.loads(line) for line in done.stdout.splitlines()}
    assert sorted(answers) == [1, 2, 3]
    assert answers[3]["result"]["structuredContent"] == {
        "name": "Bluewing Logistics",
        "account_id": "ACC-1042",
        "email": "ops@bluewing.example",
    }
    recorded = json.loads(output.read_text(encoding="utf-8"))
    assert [r["tool_name"] for r in recorded["recordings"]] == ["client_lookup"]
    imported = _imported(done.stderr.decode())
    assert "windtunnel" in imported
    assert imported & SDK_PACKAGES == set()


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
MODERN_SESSION = [
    {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": MODERN_META}},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": MODERN_META}},
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {
            "name": "client_lookup",
            "arguments": {"query": "Bluewing Logistics"},
            "_meta": MODERN_META,
        },
    },
]
BLUEWING = {"name": "Bluewing Logistics", "account_id": "ACC-1042", "email": "ops@bluewing.example"}


def _serve(messages: list[dict[str, object]]) -> tuple[dict[object, dict[str, object]], set[str]]:
    """`wt serve --stdio` on the CRM example for one session: its answers by id, and the
    top-level packages it imported."""
    lines = b"".join(json.dumps(message).encode() + b"\n" for message in messages)
    done = _run(["-m", "windtunnel", "serve", "--stdio", str(CRM)], lines)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    answers = {json.loads(line)["id"]: json.loads(line) for line in done.stdout.splitlines()}
    return answers, _imported(done.stderr.decode())


@pytest.mark.timeout(200)
@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_plain_stdio_session_never_imports_the_sdk(era: str) -> None:
    """`wt serve --stdio` answers a whole plain session of either era (handshake or
    `server/discover`, `tools/list`, `tools/call`) without loading the SDK or pydantic."""
    answers, imported = _serve(SESSION if era == "legacy" else MODERN_SESSION)
    assert sorted(answers) == [1, 2, 3]
    assert answers[3]["result"]["structuredContent"] == BLUEWING  # type: ignore[index]
    assert "windtunnel" in imported
    assert imported & SDK_PACKAGES == set()


@pytest.mark.timeout(200)
def test_the_sdk_is_imported_when_a_line_needs_it() -> None:
    """A request only the SDK answers hands the session over: it is answered (here: no such
    method) and so is every later line, at the version the handshake negotiated."""
    later_call = {**SESSION[3], "id": 5}
    answers, imported = _serve(
        [*SESSION, {"jsonrpc": "2.0", "id": 4, "method": "resources/list"}, later_call]
    )
    assert sorted(answers) == [1, 2, 3, 4, 5]
    assert answers[4]["error"] == {
        "code": -32601,
        "message": "Method not found",
        "data": "resources/list",
    }
    assert answers[5]["result"] == answers[3]["result"]
    assert {"mcp", "pydantic"} <= imported


@pytest.mark.timeout(200)
def test_serve_stdio_imports_no_websocket_feed() -> None:
    """`wt serve --stdio` binds no socket: the fleet's WebSocket event feed is never loaded."""
    lines = b"".join(json.dumps(message).encode() + b"\n" for message in SESSION)
    done = _run(["-m", "windtunnel", "serve", "--stdio", str(CRM)], lines)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert len(done.stdout.splitlines()) == 3
    assert _imported(done.stderr.decode()) & {"trio_websocket", "wsproto"} == set()
