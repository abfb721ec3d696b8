"""windtunnel-bench's own Contract A envelopes, through Wind Tunnel and through the original.

The reference envelopes (data/interchange, from the original's sdist) are read by both: the valid
ones import the same calls (same tool, same arguments, the same `CallToolResult` served), from the
same evidence, with the same tools stubbed and the same `origin:<ref>` tag; the invalid ones are
refused at the field the original names; the lint ones give the original's warnings. The
original runs in .venvs/windtunnel-bench (envelope_original.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.seed.envelope_differential import INVALID, LINT, VALID, original, served_calls
from windtunnel.errors import TraceError
from windtunnel.importing import (
    encode_envelope,
    import_trace,
    read_envelope,
    sniff_format,
    write_import,
)
from windtunnel.importing.document import parse_document
from windtunnel.importing.interchange import check_interchange, lint_interchange

pytestmark = pytest.mark.timeout(180)


def test_the_reference_set_is_complete() -> None:
    """The copied reference set is the original's: 7 valid, 9 invalid, 2 lint envelopes."""
    assert (len(VALID), len(INVALID), len(LINT)) == (7, 9, 2)


def test_valid_envelopes_import_the_calls_the_original_imports(tmp_path: Path) -> None:
    """Each valid reference envelope gives the fixture recordings the original's `wt import`
    gives (tool, arguments and the result an agent is served), from the same evidence, with the
    same tools stubbed and the same origin tag."""
    theirs = original(VALID, tmp_path)
    compared = 0
    for path, their in zip(VALID, theirs, strict=True):
        assert their["error"] is None, path.name
        envelope = import_trace(path)
        out = tmp_path / f"ours-{path.stem}"
        output = write_import(envelope, out, name="imported")
        universe = json.loads((out / output.plan.files["default"]).read_text())
        ours = served_calls(universe.get("recordings", []))
        assert ours == served_calls(their["recordings"]), path.name
        compared += len(their["recordings"])
        evidence = {call.provenance["evidence"] for call in envelope.calls}
        assert evidence <= {their["evidence"]}, path.name
        flagged = sorted(
            tool.name
            for upstream in envelope.upstreams
            for tool in upstream.tools
            if tool.schema_source in ("stub", "inferred")
        )
        assert flagged == sorted(their["stubbed"]), path.name
        tags = re.findall(r"^tags = \[(.*)\]$", (out / "scenario.toml").read_text(), re.M)
        assert [json.loads(f"[{t}]") for t in tags] == ([their["tags"]] if their["tags"] else [])
    # The set exercises both evidence sources and several calls per envelope.
    assert compared == 4
    assert {r["evidence"] for r in theirs} == {"witnessed_calls", "reconstructed"}


@pytest.mark.parametrize("path", INVALID, ids=[p.stem for p in INVALID])
def test_invalid_envelopes_are_refused_at_the_field_the_original_names(
    path: Path, tmp_path: Path
) -> None:
    """An invalid reference envelope is refused (one `TraceError`), at the JSON path of the field
    the original's message names, and `wt import` writes nothing."""
    (their,) = original([path], tmp_path)
    assert their["error"] is not None
    expected = json.loads((path.parent / "manifest.json").read_text())[path.name]
    assert expected in their["error"]
    with pytest.raises(TraceError) as caught:
        read_envelope(path)
    field = re.match(r"([\w.\[\]]+) (must|is)", their["error"])
    where = caught.value.path
    if field is not None and field.group(1) != "windtunnel_interchange":
        assert where == f"$.{field.group(1)}"
    elif path.stem.endswith("part_type"):
        assert where is not None and where.endswith(".type")
    else:
        assert where == "$.windtunnel_interchange"
    assert not (tmp_path / "ours").exists()


def test_lint_envelopes_give_the_original_warnings(tmp_path: Path) -> None:
    """Each lint reference envelope is valid for both and gives the original's warnings: the same
    number, in order, about the same call id (and marker)."""
    theirs = original(LINT, tmp_path)
    manifest = json.loads((LINT[0].parent / "manifest.json").read_text())
    for path, their in zip(LINT, theirs, strict=True):
        value = json.loads(path.read_text())
        check_interchange(value, file=path.name)
        ours = lint_interchange(value)
        assert len(ours) == len(their["warnings"]) >= 1
        assert any(manifest[path.name] in w for w in their["warnings"])
        for lint, warning in zip(ours, their["warnings"], strict=True):
            assert repr(lint.call_id) in warning
            if lint.marker is not None:
                assert repr(lint.marker) in warning
            else:
                assert "has no matching tool_call" in warning


def test_seed_rules_accept_and_refuse_what_the_original_does(tmp_path: Path) -> None:
    """Edge values the original's reader decides one way: bools are not versions, a false
    description means none, an unknown version is refused, extra fields are ignored."""
    base = json.loads(VALID[0].read_text())
    cases = {
        "bool-version": {**base, "windtunnel_interchange": True},
        "version-2": {**base, "windtunnel_interchange": 2},
        "null-description": {**base, "tool_definitions": [{"name": "t", "description": None}]},
        "zero-description": {**base, "tool_definitions": [{"name": "t", "description": 0}]},
        "number-description": {**base, "tool_definitions": [{"name": "t", "description": 5}]},
        "null-source": {**base, "source": None},
        "list-source": {**base, "source": []},
        "no-mapping": {k: v for k, v in base.items() if k != "otel_genai_mapping"},
        "null-witnessed": {**base, "witnessed_calls": None},
        "unknown-field": {**base, "x": {"y": 1}},
    }
    paths = []
    for name, doc in cases.items():
        paths.append(tmp_path / f"{name}.wtin.json")
        paths[-1].write_text(json.dumps(doc))
    theirs = original(paths, tmp_path)
    for path, their in zip(paths, theirs, strict=True):
        try:
            check_interchange(json.loads(path.read_text()), file=path.name)
            ours_ok = True
        except TraceError:
            ours_ok = False
        assert ours_ok == (their["error"] is None), (path.name, their["error"])


@pytest.mark.parametrize("path", VALID, ids=[p.stem for p in VALID])
def test_reference_envelopes_are_sniffed_as_contract_a(path: Path) -> None:
    """Every valid reference envelope is told by its content (two used to pass for OpenAI Chat
    transcripts and import nothing), and `--format contract-a` reads it the same."""
    doc = parse_document(path.read_bytes(), file=str(path))
    assert sniff_format(doc) == "contract-a"
    sniffed = encode_envelope(import_trace(path))
    assert encode_envelope(import_trace(path, format="contract-a")) == sniffed


def test_review_note_names_the_user_turns_the_task_leaves_out(tmp_path: Path) -> None:
    """A multi-turn reference envelope: the task is the first user turn, and IMPORTED.md says
    the later turns are not sent by a scripted rerun."""
    (path,) = [p for p in VALID if p.stem == "multi_turn.wtin"]
    envelope = import_trace(path)
    write_import(envelope, tmp_path / "out", name="x")
    first = json.loads(path.read_text())["messages"][0]["parts"][0]["content"]
    assert envelope.task.prompt == first
    note = (tmp_path / "out" / "IMPORTED.md").read_text()
    assert "- [ ] The trace has 3 user turns; the task is the first." in note
