"""The emitted pack passes under `wt run` with the scripted agent over real MCP servers.

`wt run` is built on another branch; this test runs once both are merged.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from samples import SAMPLE_IDS, SAMPLES, Sample

from windtunnel.importing import import_trace, write_import

pytest.importorskip("windtunnel.runner", reason="`wt run` is not on this branch yet")


@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_emitted_pack_passes_wt_run(sample: Sample, tmp_path: Path) -> None:
    """`wt run scenario.toml` exits 0 with no divergence and every policy passing."""
    envelope = import_trace(sample.path, format=sample.format, task=sample.task)
    write_import(envelope, tmp_path / "pack", name=sample.name, keep_suspect=True)
    # A separate process: `wt run` configures logging for the whole process.
    pack, out = tmp_path / "pack" / "scenario.toml", tmp_path / "out"
    command = [sys.executable, "-m", "windtunnel", "run", str(pack), "-o", str(out)]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert finished.returncode == 0, finished.stderr
    (result,) = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").open()]
    assert result["status"] == "passed"
    assert all(verdict["passed"] for verdict in result["verdicts"])
