"""`wt import` on the command line: what it writes and what it says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from samples import TRACES

from windtunnel.cli.main import main


def test_import_writes_the_files_and_reports_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 0; stdout lists the files, stderr one line per warning."""
    trace = TRACES / "calendar.jsonl"
    out = tmp_path / "out"
    assert main(["import", str(trace), "-o", str(out), "--task", "Book a room."]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        f"{trace}: mcp-jsonrpc, 5 call(s), 3 in the fixture, 1 upstream(s)",
        f"wrote {out / 'trace.wtin.json'}",
        f"wrote {out / 'fixture.universe.json'}",
        f"wrote {out / 'scenario.toml'}",
        f"wrote {out / 'IMPORTED.md'}",
    ]
    assert captured.err.splitlines() == [
        "warning: schema_inferred at $.upstreams[0].tools[2].input_schema: calendar.book_desk: "
        "no input schema in the trace; inferred from 1 call(s)",
        "warning: tool_not_advertised at $.calls[2]: call 2 (calendar.book_desk): the tool is "
        "not in the tool list the trace advertised; kept out of the fixture unless --keep-suspect",
        "warning: not_replayable at $.calls[2]: call 2 (calendar.book_desk): outcome "
        "'protocol_error' has no tool result to replay; kept out of the fixture",
        "warning: not_replayable at $.calls[4]: call 4 (calendar.find_slots): outcome "
        "'cancelled' has no tool result to replay; kept out of the fixture",
    ]


def test_default_output_directory_is_named_after_the_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without -o the files land in ./<trace name>.import."""
    monkeypatch.chdir(tmp_path)
    assert main(["import", str(TRACES / "contract_a_minimal.wtin.json")]) == 0
    assert sorted(p.name for p in (tmp_path / "contract_a_minimal.import").iterdir()) == [
        "IMPORTED.md",
        "fixture.universe.json",
        "scenario.toml",
        "trace.wtin.json",
    ]
    assert capsys.readouterr().err == ""


def test_sequence_mode_is_announced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A tool answering the same arguments differently is reported as recorded in sequence mode."""
    trace = TRACES / "multi_upstream.jsonl"
    assert main(["import", str(trace), "-o", str(tmp_path), "--task", "t"]) == 0
    assert (
        "note: billing.job_status answered the same arguments differently; recorded in "
        "sequence mode" in capsys.readouterr().out.splitlines()
    )


def test_unknown_format_name_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--format takes only the known format names; anything else exits 2."""
    with pytest.raises(SystemExit) as caught:
        main(["import", str(TRACES / "calendar.jsonl"), "--format", "langsmith"])
    assert caught.value.code == 2
    assert "invalid choice: 'langsmith'" in capsys.readouterr().err


def test_wire_only_keeps_transcript_results_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """By default a transcript's results are replayed; --wire-only keeps them out."""
    trace = TRACES / "anthropic_refund.json"
    assert main(["import", str(trace), "-o", str(tmp_path / "a")]) == 0
    default = capsys.readouterr().out.splitlines()[0]
    assert main(["import", str(trace), "-o", str(tmp_path / "b"), "--wire-only"]) == 0
    captured = capsys.readouterr()
    assert default.endswith("3 call(s), 2 in the fixture, 2 upstream(s)")
    assert captured.out.splitlines()[0].endswith("3 call(s), 0 in the fixture, 2 upstream(s)")
    assert captured.err.splitlines()[-1] == (
        "note: none of the 3 call(s) can be replayed (the warnings say what the trace lacks); "
        "the pack replays nothing"
    )


def test_spans_without_tool_calls_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An OTLP file with spans but no tool call: exit 2, one line naming the span, no output."""
    trace = tmp_path / "t.json"
    trace.write_text('{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "GET /"}]}]}]}')
    assert main(["import", str(trace), "-o", str(tmp_path / "out")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(
        f"wt: error: {trace}: 1 span(s) but no recognisable tool call: span names 'GET /' x1;"
    )
    assert not (tmp_path / "out").exists()


def test_non_empty_output_directory_is_refused_unless_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second import into the same directory is exit 2, one line, nothing touched; --force
    writes into it, replacing the files of the same name and leaving the others."""
    trace = TRACES / "contract_a_minimal.wtin.json"
    out = tmp_path / "out"
    assert main(["import", str(trace), "-o", str(out)]) == 0
    (out / "notes.txt").write_text("mine")
    (out / "scenario.toml").write_text("edited")
    capsys.readouterr()
    assert main(["import", str(trace), "-o", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"wt: error: {out}: the output directory is not empty; pass --force to write into it "
        "(files of the same name are replaced, others left as they are)\n"
    )
    assert (out / "scenario.toml").read_text() == "edited"
    assert main(["import", str(trace), "-o", str(out), "--force"]) == 0
    assert (out / "scenario.toml").read_text().startswith("# Generated by `wt import`")
    assert (out / "notes.txt").read_text() == "mine"


def test_review_note_says_evidence_provenance_and_todo(tmp_path: Path) -> None:
    """IMPORTED.md names the provenance (the producer's `source` verbatim, the origin tag), the
    evidence of each call, what was inferred, and what needs a person."""
    source = {"ref": "incident-412", "system": "acme-observability", "note": "a `tick` | pipe"}
    envelope = {
        "windtunnel_interchange": 1,
        "source": source,
        "session": {"model": "gpt-example-1"},
        "messages": [
            {"role": "user", "parts": [{"type": "text", "content": "Email for Bluewing?"}]},
            {
                "role": "assistant",
                "parts": [
                    {"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {"q": "B"}},
                    {"type": "tool_call", "id": "c2", "name": "lookup", "arguments": {"q": "C"}},
                ],
            },
            {
                "role": "tool",
                "parts": [{"type": "tool_call_response", "id": "c1", "response": {"e": "x@y"}}],
            },
        ],
    }
    trace = tmp_path / "t.wtin.json"
    trace.write_text(json.dumps(envelope))
    out = tmp_path / "out"
    assert main(["import", str(trace), "-o", str(out)]) == 0
    note = (out / "IMPORTED.md").read_text()
    assert "- trace: `incident-412`" in note
    assert "- model (session.model): `gpt-example-1`" in note
    assert "- scenario tag: `origin:incident-412` (from `source.ref`)" in note
    assert json.dumps(source, indent=2) in note
    assert (
        "| 0 | `default.lookup` | ok | reconstructed from messages (tool_call + "
        "tool_call_response) | in the fixture |" in note
    )
    assert "| 1 | `default.lookup` | unknown | reconstructed from messages" in note
    assert "kept out (outcome unknown)" in note
    assert "  - tool `lookup`: input schema from inferred" in note
    assert "- [ ] Input schema of `default.lookup` is inferred from the calls" in note
    assert "- [ ] Warning `no_result` at `$.calls[1]`" in note
    assert 'tags = ["origin:incident-412"]' in (out / "scenario.toml").read_text()
