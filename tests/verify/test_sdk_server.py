"""`wt verify` against a real `mcp` SDK server in two versions (`drifting_upstream.py`): a
universe recorded from v1 is clean against v1 and reports each of v2's changes exactly."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.compare.test_diff import write_run
from tests.verify.recorded import (
    drifting_command,
    drifting_over_http,
    drifting_session,
    record,
)
from windtunnel.cli.main import main
from windtunnel.mcp import RecordedMCPServer
from windtunnel.universe import load_universe

pytestmark = pytest.mark.timeout(120)

V2_FINDINGS = [
    ("informational", "server_version_changed", "server"),
    ("informational", "instructions_changed", "server"),
    ("informational", "description_changed", "tool lookup"),
    ("informational", "optional_parameter_added", "tool lookup: input region"),
    ("breaking", "property_removed", "tool search: output hits"),
    ("informational", "property_added", "tool search: output results"),
    ("informational", "property_added", "tool search: output total"),
    ("breaking", "required_parameter_added", "tool find: input limit"),
    ("breaking", "type_narrowed", "tool count: input n"),
    ("informational", "type_narrowed", "tool count: output result"),
    ("breaking", "tool_removed", "tool legacy_report"),
    ("informational", "tool_added", "tool export_csv"),
    ("breaking", "resource_removed", "resource res://old"),
    ("informational", "resource_added", "resource res://new"),
    ("breaking", "required_parameter_added", "prompt greet: argument tone"),
    ("informational", "result_shape_extended", "tool lookup: recording #0"),
    ("breaking", "result_shape_changed", "tool search: recording #1"),
]
"""Every change v2 makes, as `wt verify` must classify it, in its order."""


@pytest.fixture(scope="module")
def recorded_v1(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One recording of v1 for the module (starting a Python server takes seconds)."""
    where = tmp_path_factory.mktemp("v1")
    sent_log = where / "sent.log"
    universe = record(
        drifting_command("v1", sent_log),
        drifting_session,
        where / "drifting.universe.json",
        name="drifting",
    )
    return universe, sent_log


@pytest.fixture(scope="module")
def v1_url(recorded_v1: tuple[Path, Path]) -> Iterator[str]:
    """v1 over Streamable HTTP, one process for the module."""
    with drifting_over_http("v1", recorded_v1[1]) as url:
        yield url


@pytest.fixture(scope="module")
def v2_url(recorded_v1: tuple[Path, Path]) -> Iterator[str]:
    """v2 over Streamable HTTP, one process for the module."""
    with drifting_over_http("v2", recorded_v1[1]) as url:
        yield url


@pytest.fixture
def sent_log(recorded_v1: tuple[Path, Path]) -> Path:
    """Where every server of the module logs a send_email call."""
    return recorded_v1[1]


@pytest.fixture
def v1_universe(recorded_v1: tuple[Path, Path], tmp_path: Path) -> Path:
    """A copy of the v1 universe of this test's own (--update rewrites it)."""
    copy = tmp_path / "drifting.universe.json"
    copy.write_bytes(recorded_v1[0].read_bytes())
    return copy


def verify(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["verify", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def verify_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code, out, err = verify(capsys, "--format", "json", *argv)
    assert out, err
    return code, json.loads(out)


def findings(document: dict[str, Any]) -> list[tuple[str, str, str]]:
    (report,) = document["universes"]
    return [(f["severity"], f["kind"], f["subject"]) for f in report["findings"]]


def outcomes(document: dict[str, Any]) -> list[tuple[str, bool, str | None]]:
    (report,) = document["universes"]
    return [(c["tool"], c["resent"], c.get("reason")) for c in report["calls"]]


def test_same_version_is_clean_against_the_recorded_upstream(
    v1_universe: Path, sent_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No --against: the command in meta.upstream is started; nothing drifted, exit 0."""
    before = sent_log.read_text()
    code, document = verify_json(capsys, str(v1_universe))
    assert code == 0
    assert findings(document) == []
    assert (document["breaking"], document["informational"]) == (0, 0)
    not_read_only = "not annotated readOnlyHint: true (re-send it with --allow TOOL)"
    assert outcomes(document) == [
        ("lookup", True, None),
        ("search", True, None),
        ("send_email", False, not_read_only),
        ("legacy_report", True, None),
        ("find", False, not_read_only),
    ]
    assert sent_log.read_text() == before


def test_same_version_is_equal_by_value(
    v1_universe: Path, v1_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """By value, v1 (over HTTP this time) answers exactly as recorded."""
    code, document = verify_json(
        capsys, str(v1_universe), "--compare", "value", "--against", v1_url
    )
    assert code == 0
    assert findings(document) == []
    (report,) = document["universes"]
    assert {c["by"] for c in report["calls"] if c["resent"]} == {"value"}


def test_changed_version_reports_each_change_exactly(
    v1_universe: Path, sent_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Against v2: every breaking and informational change, classified, and exit 1."""
    code, document = verify_json(capsys, str(v1_universe), "--", *drifting_command("v2", sent_log))
    assert code == 1
    assert findings(document) == V2_FINDINGS
    assert (document["breaking"], document["informational"]) == (7, 10)
    assert outcomes(document)[3] == (
        "legacy_report",
        False,
        "the live server no longer lists the tool",
    )


def test_write_tool_is_never_resent_without_allow(
    v1_universe: Path, sent_log: Path, v2_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """send_email is not read-only: skipped, its server never called; --allow sends it once."""
    before = sent_log.read_text()
    verify_json(capsys, str(v1_universe), "--against", v2_url)
    assert sent_log.read_text() == before
    _, document = verify_json(
        capsys, str(v1_universe), "--allow", "send_email", "--against", v2_url
    )
    assert sent_log.read_text() == before + "ana@example.com\n"
    assert outcomes(document)[2] == ("send_email", True, None)


def test_per_tool_value_comparison(
    v1_universe: Path, v2_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--compare-tool lookup=value: lookup's new key is a value change (breaking), search is
    still compared by shape."""
    _, document = verify_json(
        capsys,
        str(v1_universe),
        "--compare-tool",
        "lookup=value",
        "--against",
        v2_url,
    )
    (report,) = document["universes"]
    by_call = [f for f in report["findings"] if "recording #" in f["subject"]]
    assert [(f["kind"], f["subject"], f["detail"]) for f in by_call] == [
        (
            "result_value_changed",
            "tool lookup: recording #0",
            "the live answer differs at $.content[0].text.region",
        ),
        ("result_shape_changed", "tool search: recording #1", by_call[1]["detail"]),
    ]
    assert report["calls"][0]["by"] == "value"
    assert report["calls"][1]["by"] == "shape"


def test_fail_on_any_fails_on_informational_drift(
    v1_universe: Path, v1_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A universe whose only change is informational exits 0, or 1 with --fail-on any."""
    universe = json.loads(v1_universe.read_text())
    universe["tools"] = [t for t in universe["tools"] if t["name"] != "lookup"]
    universe["recordings"] = [r for r in universe["recordings"] if r["tool_name"] != "lookup"]
    only_added = tmp_path / "added.universe.json"
    only_added.write_text(json.dumps(universe))
    code, document = verify_json(capsys, str(only_added), "--against", v1_url)
    assert (code, findings(document)) == (0, [("informational", "tool_added", "tool lookup")])
    code, _ = verify_json(capsys, str(only_added), "--fail-on", "any", "--against", v1_url)
    assert code == 1


def test_update_writes_the_live_world_which_then_verifies_clean(
    v1_universe: Path,
    v2_url: str,
    recorded_v1: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--update against v2: re-sent calls get v2's answers (and their durations), skipped ones
    stay with their recorded `meta`, a gone tool's recording goes; verified again against v2
    it is clean, and it replays v2's answers."""
    code, _, err = verify(capsys, str(v1_universe), "--update", "--against", v2_url)
    assert code == 1
    assert (
        f"wt verify: updated {v1_universe}: 2 recording(s) re-recorded, 2 kept as recorded, "
        "1 dropped (tool gone); surface from the live server"
    ) in err
    updated = load_universe(v1_universe)
    assert [r.tool_name for r in updated.recordings] == ["lookup", "search", "send_email", "find"]
    assert [t.name for t in updated.tools] == [
        "lookup",
        "search",
        "find",
        "count",
        "export_csv",
        "send_email",
    ]
    assert updated.server is not None and updated.server.info is not None
    assert updated.server.info["version"] == "2.0.0"
    assert updated.meta["recorded_by"].startswith("wt verify --update")
    recorded = {r.tool_name: r.meta for r in load_universe(recorded_v1[0]).recordings}
    metas = {r.tool_name: r.meta for r in updated.recordings}
    assert {tool: metas[tool] for tool in ("send_email", "find")} == {
        tool: recorded[tool] for tool in ("send_email", "find")
    }
    assert all(
        isinstance(meta, dict) and list(meta) == ["duration_ms"] and meta["duration_ms"] >= 0
        for meta in metas.values()
    )
    code, document = verify_json(capsys, str(v1_universe), "--against", v2_url)
    assert (code, findings(document)) == (0, [])
    server = RecordedMCPServer(updated)
    answer = server.call_tool("lookup", {"query": "ana"})
    assert answer["structuredContent"] == {"name": "Ana", "tier": 2, "region": "eu"}
    assert [call.divergence for call in server.call_log()] == [None]


def test_markdown_and_text_name_every_change(
    v1_universe: Path, v2_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Over HTTP too: the markdown (a PR comment) has a row per change with the subject as
    code; the text output a line per change and the verdict."""
    code, out, _ = verify(capsys, str(v1_universe), "--format", "markdown", "--against", v2_url)
    assert code == 1
    assert out.startswith(
        "### wt verify: breaking drift: 7 breaking, 10 informational change(s) in 1 universe(s); "
        "2 call(s) re-sent, 3 skipped\n"
    )
    assert "| breaking | tool_removed | `tool legacy_report` | " in out
    assert sum(line.startswith("| ") for line in out.splitlines()) == 1 + len(V2_FINDINGS)
    code, out, _ = verify(capsys, str(v1_universe), "--against", v2_url)
    lines = out.splitlines()
    assert (
        "  breaking      tool_removed: tool legacy_report: the live server no longer lists it"
        in lines
    )
    assert lines[-1] == (
        "breaking drift: 7 breaking, 10 informational change(s) in 1 universe(s); "
        "2 call(s) re-sent, 3 skipped"
    )


def test_wt_diff_shows_verify_drift_in_its_markdown(
    v1_universe: Path, v2_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`wt diff --verify REPORT`: the drift a `wt verify --format json` run found follows the
    runs' diff, in the same markdown (subjects as code) or text."""
    _, out, _ = verify(capsys, str(v1_universe), "--format", "json", "--against", v2_url)
    report = tmp_path / "drift.json"
    report.write_text(out)
    base = write_run(tmp_path / "base", {"s": (1, 1)})
    new = write_run(tmp_path / "new", {"s": (1, 1)})
    argv = ["diff", str(base), str(new), "--verify", str(report)]
    assert main([*argv, "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert "\n### wt verify: breaking drift: 7 breaking, 10 informational change(s)" in markdown
    assert "| breaking | tool_removed | `tool legacy_report` | " in markdown
    assert main(argv) == 0
    assert "  breaking      tool_removed: tool legacy_report" in capsys.readouterr().out
    assert main([*argv, "--format", "json"]) == 2
    assert "--verify is shown with --format text or markdown" in capsys.readouterr().err
    report.write_text('{"universes": [{"file": 1}]}')
    assert main([*argv, "--format", "markdown"]) == 2
    assert f"{report}: not a wt verify JSON report" in capsys.readouterr().err
