"""Runs inside .venvs/windtunnel-bench: what the original does with Contract A envelopes.

    python envelope_original.py < requests.json

Reads a JSON list of `{"path", "out"}` and prints one JSON list of results, one per request:
`error` (the `InterchangeFormatError` text, or null), `warnings` (`lint_interchange`), and, when
the envelope parses, `evidence`, `stubbed` and the `recordings` of the universe its `wt import`
writes into `out` (`write_imported_scenario`), and the scenario's `tags`.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path
from typing import Any

from windtunnel.api.importer import write_imported_scenario
from windtunnel.api.interchange import InterchangeFormatError, lint_interchange, load_interchange


def run(path: str, out: str) -> dict[str, Any]:
    try:
        envelope = load_interchange(path)
    except InterchangeFormatError as exc:
        return {"error": str(exc)}
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    result = write_imported_scenario(envelope, out)
    universe = json.loads(result.universe_path.read_text(encoding="utf-8"))
    scenario = result.scenario_path.read_text(encoding="utf-8")
    tags = re.search(r"tags=(\[.*?\])", scenario, re.S)
    return {
        "error": None,
        "warnings": lint_interchange(raw),
        "evidence": result.evidence_source,
        "stubbed": result.stubbed_tool_schemas,
        "recordings": universe["recordings"],
        "tags": ast.literal_eval(tags.group(1)) if tags else None,
        "imported_md": result.imported_path.read_text(encoding="utf-8"),
    }


print(json.dumps([run(item["path"], item["out"]) for item in json.load(sys.stdin)]))
