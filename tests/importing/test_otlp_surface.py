"""`wt import` of OTLP traces fills the surface where the spans hold it (issue 25), and says what is
missing where they do not.

The traces are written in the test by the real instrumentation (`sources/surface_sessions.py`):
logfire's `instrument_mcp` on `mcp` 1.x records each MCP request and its response; the `mcp` 2.x
SDK's own spans record the method (`mcp.method.name`, `gen_ai.prompt.name`) but no answer.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.thirdparty import thirdparty_python
from windtunnel.importing import import_trace, write_import
from windtunnel.universe import load_universe

pytestmark = pytest.mark.timeout(180)

SOURCES = Path(__file__).parent / "sources"


def _generate(venv: str, source: str, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """Run the session in its venv; the trace file and what the client received, by method."""
    trace = tmp_path / "trace.json"
    finished = subprocess.run(
        [str(thirdparty_python(venv)), str(SOURCES / "surface_sessions.py"), source, str(trace)],
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
        cwd=tmp_path,
    )
    assert finished.returncode == 0, finished.stderr[-3000:]
    lines = [json.loads(line) for line in finished.stdout.splitlines() if line.startswith("{")]
    return trace, {line["method"]: line for line in lines}


def test_logfire_spans_give_the_identity_resources_and_prompts(tmp_path: Path) -> None:
    """logfire's request/response spans: the universe holds the server's identity, the listed
    resources and prompts, and the read and prompt get exactly as the client received them."""
    trace, seen = _generate("traces-mcp1", "logfire", tmp_path)
    envelope = import_trace(trace)
    output = write_import(envelope, tmp_path / "pack", name="docs")
    assert [w.code for w in envelope.warnings] == ["task_missing"]
    [file] = output.plan.files.values()
    universe = load_universe(tmp_path / "pack" / file)
    assert universe.server is not None and universe.server.info is not None
    assert universe.server.info["name"] == "docs"
    assert universe.server.instructions == "Read docs://readme before answering."
    assert universe.server.protocol_version == "2025-11-25"
    assert universe.resources == seen["resources/list"]["result"]["resources"]
    assert universe.prompts == seen["prompts/list"]["result"]["prompts"]
    [read] = universe.resource_reads
    assert (read.uri, read.result) == ("docs://readme", seen["resources/read"]["result"])
    [get] = universe.prompt_gets
    assert (get.name, get.arguments, get.result) == (
        "summarize",
        {"topic": "wind"},
        seen["prompts/get"]["result"],
    )
    assert [r.tool_name for r in universe.recordings] == ["search"]


def test_sdk_spans_without_answers_say_what_is_missing(tmp_path: Path) -> None:
    """The `mcp` 2.x SDK's spans name the method but hold no answer: one warning per request,
    naming the span and the method, and no surface section made up."""
    trace, seen = _generate("traces-mcp2", "mcp-sdk", tmp_path)
    envelope = import_trace(trace)
    missing = [w for w in envelope.warnings if w.code == "surface_result_missing"]
    methods = [w.message.split(" span", 1)[0].removeprefix("a ") for w in missing]
    assert methods == [
        "server/discover",
        "resources/list",
        "prompts/list",
        "resources/read",
        "prompts/get",
    ]
    assert "a prompts/get span (summarize) holds no answer" in missing[4].message
    assert all(w.path is not None and w.path.startswith("line ") for w in missing)
    assert all(upstream.surface is None for upstream in envelope.upstreams)
    assert set(seen) >= {"resources/read", "prompts/get"}
