"""`wt score`: stored traces re-scored without an agent; same rules, same verdicts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.compare.conftest import DEMO
from windtunnel.cli.main import main

OUTPUTS = ["results.jsonl", "summary.json", "junit.xml", "report.html"]


def test_unchanged_rules_reproduce_the_run_exactly(
    demo_runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Re-scoring v2 with its recorded pack rewrites results, summary, JUnit and report byte
    for byte, and every trace file too."""
    _, v2 = demo_runs
    out = tmp_path / "rescored"
    capsys.readouterr()
    assert main(["score", str(v2), "-o", str(out)]) == 1
    captured = capsys.readouterr()
    assert captured.out == f"{out}\n"
    assert captured.err.splitlines()[:2] == [
        f"pack: {DEMO} (recorded in {v2 / 'pack.json'})",
        "support-demo: re-scored 3 unit(s): FAILED: 0 passed, 3 failed, 0 errors; 0 changed status",
    ]
    for name in OUTPUTS:
        assert (out / name).read_bytes() == (v2 / name).read_bytes(), name
    traces = sorted(p.name for p in (v2 / "traces").iterdir())
    assert sorted(p.name for p in (out / "traces").iterdir()) == traces
    for name in traces:
        assert (out / "traces" / name).read_bytes() == (v2 / "traces" / name).read_bytes()


def test_a_changed_policy_applies_to_the_stored_traces(
    demo_runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tighter call budget in the pack fails v1's lookup; the other verdicts stay."""
    v1, _ = demo_runs
    shutil.copytree(DEMO.parent, tmp_path / "demo")
    pack = tmp_path / "demo" / "pack.toml"
    text = pack.read_text()
    assert text.count("max_calls = 2\n") == 1
    pack.write_text(text.replace("max_calls = 2\n", "max_calls = 0\n"))
    out = tmp_path / "tight"
    capsys.readouterr()
    assert main(["score", str(v1), "--pack", str(pack), "-o", str(out)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[:3] == [
        f"pack: {pack} (--pack)",
        "support-demo: re-scored 3 unit(s): FAILED: 2 passed, 1 failed, 0 errors; 1 changed status",
        "changed: client-contact-lookup#0",
    ]
    rows = {
        r["unit_id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())
    }
    old = {
        r["unit_id"]: r for r in map(json.loads, (v1 / "results.jsonl").read_text().splitlines())
    }
    lookup = rows["client-contact-lookup#0"]
    assert [(v["name"], v["passed"], v["reason"]) for v in lookup["verdicts"]][2] == (
        "call_budget(0)",
        False,
        "budget 0 exceeded: 1 call",
    )
    assert lookup["verdicts"][:2] == old["client-contact-lookup#0"]["verdicts"][:2]
    assert lookup["status"] == "failed"
    for unit in ("double-charge-refund#0", "ticket-history#0"):
        assert rows[unit]["verdicts"] == old[unit]["verdicts"]
        assert rows[unit]["status"] == "passed"
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["passed"], summary["failed"], summary["policy_failures"]) == (2, 1, 1)
    assert (
        'message="policy call_budget(0): budget 0 exceeded: 1 call"'
        in (out / "junit.xml").read_text()
    )


def test_score_refuses_what_it_cannot_score(
    demo_runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No recorded pack, a pack without the run's scenarios, an existing output: exit 2."""
    v1, _ = demo_runs
    bare = tmp_path / "bare"
    shutil.copytree(v1, bare)
    (bare / "pack.json").unlink()
    capsys.readouterr()
    assert main(["score", str(bare)]) == 2
    assert capsys.readouterr().err == (
        f"wt: error: {bare}: this run does not record its pack (pack.json); name it with --pack\n"
    )
    other = tmp_path / "other.toml"
    other.write_text('[pack]\nname = "other"\n[[scenario]]\nname = "x"\ntask = "t"\n')
    assert main(["score", str(v1), "--pack", str(other), "-o", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == (
        f"pack: {other} (--pack)\n"
        f"wt: error: {other}: pack 'other' has no scenario 'client-contact-lookup', "
        "'double-charge-refund', 'ticket-history': the run cannot be scored with it\n"
    )
    assert main(["score", str(v1), "-o", str(v1)]) == 2
    assert "the output must be another directory than the run" in capsys.readouterr().err
    assert main(["score", str(v1), "-o", str(tmp_path / "again")]) == 0
    assert main(["score", str(v1), "-o", str(tmp_path / "again")]) == 2
    assert "already has results; choose another -o" in capsys.readouterr().err
