"""Shared by tests/seed/test_envelope_*: the original's verdicts, and ours, in comparable form."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.thirdparty import thirdparty_python
from windtunnel.calls import MCPCall
from windtunnel.canonical import canonical_key
from windtunnel.mcp._sdk_server import to_call_tool_result

HERE = Path(__file__).parent
INTERCHANGE = HERE / "data" / "interchange"
VALID = sorted((INTERCHANGE / "valid").glob("*.wtin.json"))
INVALID = sorted((INTERCHANGE / "invalid").glob("*.wtin.json"))
LINT = sorted((INTERCHANGE / "lint").glob("*.wtin.json"))

__all__ = ["INVALID", "LINT", "VALID", "original", "served_calls"]


def original(paths: list[Path], tmp_path: Path) -> list[dict[str, Any]]:
    """What windtunnel-bench (in its own venv) says of each envelope: see envelope_original.py."""
    python = thirdparty_python("windtunnel-bench")
    requests = [
        {"path": str(p), "out": str(tmp_path / f"original-{i}")} for i, p in enumerate(paths)
    ]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    finished = subprocess.run(
        [str(python), str(HERE / "envelope_original.py")],
        input=json.dumps(requests),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
        env=env,
    )
    assert finished.returncode == 0, finished.stderr[-3000:]
    results: list[dict[str, Any]] = json.loads(finished.stdout)
    return results


def served_calls(recordings: list[dict[str, Any]]) -> list[tuple[str, Any, str]]:
    """Each recording as (tool, canonical arguments, the `CallToolResult` JSON an agent is served)."""
    calls = []
    for recording in recordings:
        call = MCPCall(
            tool_name=recording["tool_name"], args=recording["args"], result=recording["result"]
        )
        served = to_call_tool_result(call).model_dump(mode="json", by_alias=True, exclude_none=True)
        calls.append(
            (
                recording["tool_name"],
                canonical_key(recording["args"]),
                json.dumps(served, sort_keys=True),
            )
        )
    return calls
