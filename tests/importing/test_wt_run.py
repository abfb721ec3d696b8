"""The emitted pack passes under `wt run` with the scripted agent over real MCP servers.

`wt run` is built on another branch; this test runs once both are merged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from samples import SAMPLE_IDS, SAMPLES, Sample

from windtunnel.cli.main import main
from windtunnel.importing import import_trace, write_import

pytest.importorskip("windtunnel.runner", reason="`wt run` is not on this branch yet")


@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_emitted_pack_passes_wt_run(
    sample: Sample, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`wt run scenario.toml` exits 0 with no divergence and every policy passing."""
    envelope = import_trace(sample.path, format=sample.format, task=sample.task)
    write_import(envelope, tmp_path / "pack", name=sample.name, keep_suspect=True)
    code = main(["run", str(tmp_path / "pack" / "scenario.toml"), "-o", str(tmp_path / "out")])
    capsys.readouterr()
    assert code == 0
    (result,) = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").open()]
    assert result["status"] == "passed"
    assert all(verdict["passed"] for verdict in result["verdicts"])
