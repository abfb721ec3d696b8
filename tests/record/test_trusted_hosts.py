"""`wt record`'s proxy checks Host and Origin as `wt serve` does: on every bind, exactly."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import httpx2
import pytest
import trio

from tests.processes import WT, read_until
from tests.record.upstreams import SDK_UPSTREAM, sdk_http_upstream
from windtunnel.cli.main import main
from windtunnel.record import RecordingProxy
from windtunnel.universe import load_universe

HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}
LOOKUP = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {
        "name": "lookup",
        "arguments": {"query": "acme"},
        "_meta": {  # the stateless era: no initialize needed, on either kind of upstream
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    },
}


@pytest.mark.parametrize("bind", ["127.0.0.1", "127.0.0.2"])
@pytest.mark.parametrize("upstream_kind", ["stdio", "http"])
async def test_a_rebound_host_or_a_foreign_origin_never_reaches_the_upstream(
    bind: str, upstream_kind: str
) -> None:
    """421 for a foreign Host (also one that only starts with ours), 403 for a foreign Origin
    (another local port's page too); only the request from the proxy's own origin is forwarded
    and recorded."""
    statuses: list[int] = []
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery, sdk_http_upstream(stateless=True) as http:
            proxy = RecordingProxy(SDK_UPSTREAM if upstream_kind == "stdio" else http, name="sdk")
            url = await proxy.start(nursery, host=bind)
            authority = url.split("/")[2]
            async with httpx2.AsyncClient(timeout=30) as client:
                for extra in (
                    {"Host": "evil.example"},
                    {"Host": f"evil.example:{url.rsplit(':', 1)[1].split('/')[0]}"},
                    {"Host": f"{authority}.evil.example"},
                    {"Origin": "http://evil.example"},
                    {"Origin": f"http://{authority}.evil.example"},
                    {"Origin": "http://localhost:3000"},
                    # Our own page under a loopback name (one the HTTP upstream, which gets
                    # the Origin as it came, also takes).
                    {"Origin": f"http://localhost:{authority.rsplit(':', 1)[1]}"},
                ):
                    response = await client.post(
                        url, content=json.dumps(LOOKUP), headers={**HEADERS, **extra}
                    )
                    statuses.append(response.status_code)
            await proxy.stop()
    assert statuses == [421, 421, 421, 403, 403, 403, 200]
    assert [call.tool_name for call in proxy.call_log()] == ["lookup"]


async def test_wt_record_allow_host_reaches_the_proxy_under_a_forwarded_name(
    tmp_path: Path,
) -> None:
    """`wt record --allow-host replay:8000`: a request under that name is forwarded and
    recorded; another port of it is 421, a page outside `--allow-origin` 403."""
    out = tmp_path / "sdk.universe.json"
    with trio.fail_after(60):
        process = await trio.lowlevel.open_process(
            [
                *WT,
                "record",
                "-o",
                str(out),
                "--allow-host",
                "replay:8000",
                "--allow-origin",
                "https://dash.example",
                "--",
                *SDK_UPSTREAM,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stdout is not None
        url = (await read_until(process.stdout, b"\n")).decode().strip()
        statuses = []
        async with httpx2.AsyncClient(timeout=30) as client:
            for extra in (
                {"Host": "replay:8000", "Origin": "https://dash.example"},
                {"Host": "replay:8001"},
                {"Host": "replay:8000", "Origin": "http://evil.example"},
            ):
                response = await client.post(
                    url, content=json.dumps(LOOKUP), headers={**HEADERS, **extra}
                )
                statuses.append(response.status_code)
        process.send_signal(signal.SIGINT)
        assert await process.wait() == 0
    assert statuses == [200, 421, 403]
    assert [r.tool_name for r in load_universe(out).recordings] == ["lookup"]


def test_wt_record_refuses_a_wildcard(capsys: pytest.CaptureFixture[str]) -> None:
    """`--allow-host '*'` is a usage error (exit 2), never a check switched off."""
    with pytest.raises(SystemExit) as exited:
        main(["record", "-o", "x.json", "--allow-host", "*", "http://127.0.0.1:9/mcp"])
    assert exited.value.code == 2
    assert "argument --allow-host: '*': a wildcard would answer every name" in (
        capsys.readouterr().err
    )
