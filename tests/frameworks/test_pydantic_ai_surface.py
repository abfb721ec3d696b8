"""A pydantic-ai agent rerun against a recording is shown what the live run was shown (issue 25).

The live server is the conformance reference server (the `mcp` SDK's low-level server: server
instructions, `test_simple_text` with annotations, `test_tool_with_progress` with an
`outputSchema`), run as a subprocess over HTTP. The agent (pydantic-ai 2.68 in its own venv, a
`FunctionModel` that keeps what it was given, clients/pydantic_ai_surface_client.py) runs once
through `wt record` and once against `wt serve` of the universe that wrote; both runs must hand the
model exactly the same instructions, tool definitions (names, descriptions, parameter schemas,
annotations in the metadata, the return schema pydantic-ai writes into the description) and tool
results. `wt serve --own-identity` is the control: it presents no instructions, so the same
comparison fails there, proving it can.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio

from tests.conformance import reference_server
from tests.processes import WT, read_until, wt_serve
from tests.thirdparty import thirdparty_python

from .harness import CLIENT_DEADLINE_S, CLIENTS

pytestmark = pytest.mark.timeout(300)

REFERENCE = [sys.executable, str(Path(reference_server.__file__)), "http"]


@asynccontextmanager
async def url_printed_by(argv: list[str]) -> AsyncIterator[tuple[trio.Process, str]]:
    """Run `argv` until it printed its URL; killed on exit unless it already ended."""
    process = await trio.lowlevel.open_process(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert process.stdout is not None
        url = (await read_until(process.stdout, b"\n")).decode().strip()
        yield process, url
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGKILL)
            with trio.CancelScope(shield=True):
                await process.wait()


async def agent_sees(url: str) -> dict[str, Any]:
    """What the pydantic-ai agent's model was given by the MCP server at `url`."""
    python = thirdparty_python("fw-pydantic-ai")
    with trio.fail_after(CLIENT_DEADLINE_S):
        done = await trio.run_process(
            [str(python), str(CLIENTS / "pydantic_ai_surface_client.py"), url],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-4000:]
    seen: dict[str, Any] = json.loads(done.stdout.decode().splitlines()[-1])
    return seen


def tool(seen: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = (t for t in seen["tools"] if t["name"] == name)
    return found


async def test_rerun_against_recording_shows_the_model_the_live_surface(tmp_path: Path) -> None:
    universe = tmp_path / "reference.universe.json"
    with trio.fail_after(240):
        async with url_printed_by(REFERENCE) as (_, upstream):
            record = [*WT, "record", "-o", str(universe), "--log-format", "json", upstream]
            async with url_printed_by(record) as (recorder, recording_url):
                live = await agent_sees(recording_url)
                recorder.send_signal(signal.SIGINT)
                assert await recorder.wait() == 0
        async with wt_serve(str(universe)) as (_, printed):
            replayed = await agent_sees(printed.decode().strip())

    # The live run saw the server's surface, in the form pydantic-ai gives it to the model.
    assert reference_server.INSTRUCTIONS in live["instructions"]
    assert live["request_instructions"] == live["instructions"]
    assert [t["name"] for t in live["tools"]] == [t["name"] for t in reference_server.TOOLS]
    assert tool(live, "test_simple_text")["metadata"]["annotations"] == {
        "destructiveHint": None,
        "idempotentHint": True,
        "openWorldHint": None,
        "readOnlyHint": True,
        "title": None,
    }
    output_schema = json.dumps(reference_server.TOOLS[7]["outputSchema"], indent=2)
    assert tool(live, "test_tool_with_progress")["description"] == (
        f"Reports progress 0, 50 and 100 of 100.\n\nReturn schema:\n\n{output_schema}"
    )
    assert live["results"] == {
        "test_simple_text": {
            "outcome": "success",
            "content": "This is a simple text response for testing.",
        },
        "test_tool_with_progress": {"outcome": "success", "content": {"steps": 3}},
    }

    # The rerun against the recording: exactly the same, every field (the parts first, so a
    # failure names the one that differs).
    assert replayed["instructions"] == live["instructions"]
    assert replayed["tools"] == live["tools"]
    assert replayed["results"] == live["results"]
    assert replayed == live

    # Control: Wind Tunnel's own identity carries no instructions, and the comparison sees it.
    with trio.fail_after(CLIENT_DEADLINE_S + 30):
        async with wt_serve("--own-identity", str(universe)) as (_, printed):
            own_identity = await agent_sees(printed.decode().strip())
    assert own_identity["instructions"] is None
    assert own_identity["instructions"] != live["instructions"]
    assert own_identity["tools"] == live["tools"]
    assert own_identity["results"] == live["results"]
