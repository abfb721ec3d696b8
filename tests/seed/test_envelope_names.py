"""windtunnel-bench's envelope names import from the modules its code imports them from, and
answer on its reference envelopes as the original does (run in .venvs/windtunnel-bench).

Each public name of the original's `windtunnel.api.interchange` and `windtunnel.api.importer`
(their `__all__`), and the envelope names its `windtunnel.api` re-exports, import from the same
module here. On every reference envelope: `load_interchange` gives the same typed fields (or
refuses the same files), `lint_interchange` the same number of warnings about the same calls,
`write_imported_scenario` the same evidence, stubbed tools and recordings (served alike), and
`build_envelope` the same document.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.seed.envelope_differential import INVALID, LINT, VALID, served_calls
from tests.thirdparty import thirdparty_python
from windtunnel.api.importer import write_imported_scenario
from windtunnel.api.interchange import (
    InterchangeFormatError,
    build_envelope,
    lint_interchange,
    load_interchange,
    parse_interchange,
)
from windtunnel.errors import TraceError

pytestmark = pytest.mark.timeout(180)

MODULES = ("windtunnel.api.interchange", "windtunnel.api.importer")
ALL_ENVELOPES = [*VALID, *INVALID, *LINT]

# Runs in the original's venv: its public names, and what it makes of each reference envelope.
ORIGINAL = r"""
import dataclasses, importlib, json, sys
from windtunnel.api.importer import write_imported_scenario
from windtunnel.api.interchange import (
    InterchangeFormatError, build_envelope, lint_interchange, load_interchange,
)
request = json.load(sys.stdin)
modules = {name: list(importlib.import_module(name).__all__) for name in request["modules"]}
api = importlib.import_module("windtunnel.api")
envelope_names = [
    n for n in api.__all__
    if getattr(getattr(api, n), "__module__", None) in request["modules"]
    or any(n in modules[m] for m in request["modules"])
]
results = []
for i, path in enumerate(request["paths"]):
    try:
        trace = load_interchange(path)
    except InterchangeFormatError:
        results.append(None)
        continue
    raw = json.load(open(path, encoding="utf-8"))
    imported = write_imported_scenario(trace, f"{request['out']}/original-{i}")
    universe = json.load(open(imported.universe_path, encoding="utf-8"))
    results.append({
        "typed": dataclasses.asdict(trace),
        "lint": lint_interchange(raw),
        "evidence": imported.evidence_source,
        "stubbed": imported.stubbed_tool_schemas,
        "recordings": imported.recordings,
        "universe": universe["recordings"],
    })
built = build_envelope(**request["build"])
print(json.dumps({"modules": modules, "api": envelope_names, "results": results, "built": built}))
"""

BUILD_ARGS: dict[str, Any] = {
    "model": "gpt-example-1",
    "provider": "openai",
    "otel_genai_mapping": "semantic-conventions-genai@development-2026-06",
    "source": {"ref": "incident-7"},
    "messages": [
        {"role": "user", "parts": [{"type": "text", "content": "Status of 4821?"}]},
        {
            "role": "assistant",
            "parts": [
                {"type": "tool_call", "id": "c1", "name": "order_status", "arguments": {"id": 1}}
            ],
        },
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "c1", "response": {"ok": True}}],
        },
    ],
    "tool_definitions": [{"name": "order_status", "input_schema": {"type": "object"}}],
    "witnessed_calls": [{"tool_name": "order_status", "args": {"id": 1}, "result": {"ok": True}}],
}


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    python = thirdparty_python("windtunnel-bench")
    out = tmp_path_factory.mktemp("original")
    request = {
        "modules": list(MODULES),
        "paths": [str(p) for p in ALL_ENVELOPES],
        "out": str(out),
        "build": BUILD_ARGS,
    }
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    finished = subprocess.run(
        [str(python), "-c", ORIGINAL],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=out,
        env=env,
    )
    assert finished.returncode == 0, finished.stderr[-3000:]
    answer: dict[str, Any] = json.loads(finished.stdout)
    return answer


def test_every_public_name_imports_from_the_original_module(original: dict[str, Any]) -> None:
    """Each name in the original modules' `__all__` imports from the same module here, and is
    in ours; the envelope names `windtunnel.api` re-exports there are re-exported here too."""
    names = original["modules"]
    assert sorted(names) == sorted(MODULES)
    assert len(names["windtunnel.api.interchange"]) == 14
    assert names["windtunnel.api.importer"] == [
        "ImportResult",
        "STUB_INPUT_SCHEMA",
        "write_imported_scenario",
    ]
    for module_name, theirs in names.items():
        module = importlib.import_module(module_name)
        missing = [n for n in theirs if not hasattr(module, n) or n not in module.__all__]
        assert missing == [], module_name
    api = importlib.import_module("windtunnel.api")
    assert len(original["api"]) == 15
    assert [n for n in original["api"] if n not in api.__all__] == []


def test_load_interchange_reads_the_reference_envelopes_as_the_original(
    original: dict[str, Any],
) -> None:
    """The typed envelope has the original's fields and values (`dataclasses.asdict`), and the
    files it refuses are refused here (with the JSON path)."""
    for path, their in zip(ALL_ENVELOPES, original["results"], strict=True):
        if their is None:
            with pytest.raises(InterchangeFormatError) as caught:
                load_interchange(path)
            assert caught.value.path is not None and caught.value.path.startswith("$"), path.name
            # Caught as the original's callers catch it, and as ours do.
            assert isinstance(caught.value, ValueError) and isinstance(caught.value, TraceError)
            continue
        ours = load_interchange(path)
        assert dataclasses.asdict(ours) == their["typed"], path.name
        assert parse_interchange(json.loads(path.read_text())) == ours
    assert sum(r is None for r in original["results"]) == len(INVALID) == 9


def test_lint_interchange_warns_about_the_calls_the_original_warns_about(
    original: dict[str, Any],
) -> None:
    """Same number of warnings, in the same order, each naming the same call id."""
    warned = 0
    for path, their in zip(ALL_ENVELOPES, original["results"], strict=True):
        if their is None:
            with pytest.raises(InterchangeFormatError):
                lint_interchange(json.loads(path.read_text()))
            continue
        ours = lint_interchange(json.loads(path.read_text()))
        assert len(ours) == len(their["lint"]), path.name
        for mine, theirs in zip(ours, their["lint"], strict=True):
            call_id = theirs.split("'")[1]
            assert f"'{call_id}'" in mine and mine.startswith("$.messages["), path.name
        warned += len(ours)
    assert warned == 2


def test_write_imported_scenario_imports_what_the_original_imports(
    original: dict[str, Any], tmp_path: Path
) -> None:
    """Same evidence source, stubbed tools and recording count, and the recordings serve the
    same `CallToolResult`s; the files it names exist."""
    recordings = 0
    for i, (path, their) in enumerate(zip(ALL_ENVELOPES, original["results"], strict=True)):
        if their is None:
            continue
        result = write_imported_scenario(load_interchange(path), tmp_path / f"ours-{i}")
        assert result.evidence_source == their["evidence"], path.name
        assert result.stubbed_tool_schemas == their["stubbed"], path.name
        assert result.recordings == their["recordings"], path.name
        universe = json.loads(result.universe_path.read_text())
        assert served_calls(universe.get("recordings", [])) == served_calls(their["universe"])
        for written in (result.scenario_path, result.imported_path, result.envelope_path):
            assert written is not None and written.is_file(), path.name
        recordings += result.recordings
    assert recordings == 5


def test_build_envelope_builds_the_original_document(original: dict[str, Any]) -> None:
    """The same keyword arguments build the same envelope, which reads back."""
    built = build_envelope(**BUILD_ARGS)
    assert built == original["built"]
    assert parse_interchange(built).source_ref == "incident-7"
