"""Replay calls through windtunnel-bench (run by its own venv's interpreter; imports nothing of ours).

stdin: a JSON list of cases `{"universe": <document>, "written": <text or null>, "calls":
[{"tool", "args"}]}`. stdout: one JSON list, per case `{"load_error", "calls", "written_error",
"written_calls"}`: each call's answer (`result`) and call-log entry (`args`, `extra`) from the
original's in-process handle (its `call_tool`, the path its MCP server takes too), once for the
document as generated and once for the file we wrote from it (`written`, loaded by the
original's `load_universe`).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from windtunnel.api.universe import Universe, UniverseFormatError, load_universe
from windtunnel.mcp.recorded import RecordedMCPHandle


def synthesize(tool_name: str, args: dict[str, Any], universe: Any) -> Any:
    """The same hook the test gives our server."""
    return {"synthesized": tool_name, "keys": sorted(args)}


def replay(universe: Any, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    handle = RecordedMCPHandle(universe, url="recorded://differential", synthesize=synthesize)
    answers = [handle.call_tool(call["tool"], call["args"]) for call in calls]
    return [
        {"result": answer, "args": logged.args, "extra": logged.extra}
        for answer, logged in zip(answers, handle.call_log(), strict=True)
    ]


def run_case(case: dict[str, Any], scratch: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"load_error": None, "calls": None, "written_error": None}
    try:
        universe = Universe._from_dict(case["universe"])
    except UniverseFormatError as exc:
        out["load_error"] = str(exc)
    else:
        out["calls"] = replay(universe, case["calls"])
    out["written_calls"] = None
    if case["written"] is not None:
        path = scratch / "written.universe.json"
        path.write_text(case["written"], encoding="utf-8")
        try:
            written = load_universe(path)
        except UniverseFormatError as exc:
            out["written_error"] = str(exc)
        else:
            out["written_calls"] = replay(written, case["calls"])
    return out


def main() -> None:
    cases = json.load(sys.stdin)
    with tempfile.TemporaryDirectory() as scratch:
        results = [run_case(case, Path(scratch)) for case in cases]
    json.dump(results, sys.stdout, default=repr)


if __name__ == "__main__":
    main()
