"""A call nested deeper than a universe holds stays out of the fixture; the rest still import."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from windtunnel.canonical import nested_deeper_than
from windtunnel.cli.main import main
from windtunnel.universe import MAX_NESTING, load_universe

ORDERS = Path(__file__).parent / "data" / "traces" / "otlp_orders.json"


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


def wt_import(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["import", *args])
    out, err = capsys.readouterr()
    return code, out, err


def deep_otlp(path: Path) -> Path:
    """The orders trace with the arguments of its first `tools/call` span nested 240 levels."""
    doc = json.loads(ORDERS.read_text())
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    (span,) = [s for s in spans if s["name"] == "tools/call get_order"]
    (attribute,) = [a for a in span["attributes"] if a["key"] == "gen_ai.tool.call.arguments"]
    arguments = {"order_id": "B-2207", "filter": nested(239)}
    attribute["value"] = {"stringValue": json.dumps(arguments)}
    path.write_text(json.dumps(doc))
    return path


def test_otlp_call_nested_240_levels_is_left_out_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """240 levels: exit 0, the other call replays, one warning naming the file and the path."""
    trace = deep_otlp(tmp_path / "deep.json")
    code, out, err = wt_import(capsys, str(trace), "-o", str(tmp_path / "out"))
    assert code == 0, err
    assert out.splitlines()[0] == f"{trace}: otlp-json, 3 call(s), 1 in the fixture, 1 upstream(s)"
    assert (
        "warning: nested_too_deep at $.calls[0].args: call 0 (orders-mcp.get_order) in "
        "deep.json: its arguments nest deeper than 128 levels, more than a universe holds (MCP "
        "clients cannot read them); kept out of the fixture, the other calls are replayed"
    ) in err.splitlines()
    universe = load_universe(tmp_path / "out" / "fixture.universe.json")
    assert [(r.tool_name, r.args) for r in universe.recordings] == [
        ("return_policy", {"category": "bikes"})
    ]
    # The envelope keeps the call as the trace had it; importing it again gives the same.
    envelope = json.loads((tmp_path / "out" / "trace.wtin.json").read_text())
    assert envelope["calls"][0]["args"]["filter"] == nested(239)
    code, out, err = wt_import(
        capsys, str(tmp_path / "out" / "trace.wtin.json"), "-o", str(tmp_path / "again")
    )
    assert code == 0, err
    assert ", 3 call(s), 1 in the fixture," in out.splitlines()[0]
    assert "warning: nested_too_deep at $.calls[0].args: " in err


def test_deep_arguments_and_results_in_a_jsonrpc_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No tools/list: the inferred schema stays within the limit; a deep result is left out."""
    messages = [
        {"method": "tools/call", "params": {"name": "t", "arguments": {"a": nested(240)}}},
        {"result": {"content": [{"type": "text", "text": "x"}]}},
        {"method": "tools/call", "params": {"name": "t", "arguments": {"a": 1}}},
        {"result": {"content": [], "structuredContent": {"d": nested(200)}}},
        {"method": "tools/call", "params": {"name": "t", "arguments": {"a": 2}}},
        {"result": {"content": [{"type": "text", "text": "z"}]}},
    ]
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": i // 2 + 1, **message})
        for i, message in enumerate(messages)
    ]
    trace = tmp_path / "calls.jsonl"
    trace.write_text("\n".join(lines) + "\n")
    code, out, err = wt_import(capsys, str(trace), "-o", str(tmp_path / "out"))
    assert code == 0, err
    assert (
        out.splitlines()[0] == f"{trace}: mcp-jsonrpc, 3 call(s), 1 in the fixture, 1 upstream(s)"
    )
    deep = [line for line in err.splitlines() if line.startswith("warning: nested_too_deep")]
    assert deep == [
        "warning: nested_too_deep at $.calls[0].args: call 0 (default.t) in calls.jsonl: its "
        "arguments nest deeper than 128 levels, more than a universe holds (MCP clients cannot "
        "read them); kept out of the fixture, the other calls are replayed",
        "warning: nested_too_deep at $.calls[1].result: call 1 (default.t) in calls.jsonl: its "
        "result nests deeper than 128 levels, more than a universe holds (MCP clients cannot "
        "read them); kept out of the fixture, the other calls are replayed",
    ]
    universe = load_universe(tmp_path / "out" / "fixture.universe.json")
    assert [r.args for r in universe.recordings] == [{"a": 2}]
    (tool,) = universe.tools
    assert not nested_deeper_than(tool.input_schema, MAX_NESTING)
    assert nested_deeper_than(tool.input_schema, MAX_NESTING - 2)


def test_a_listed_schema_nested_too_deep_is_offered_as_any_object(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tools/list schema 200 levels deep: the import goes on, the tool takes any object."""
    deep_schema = {"type": "object", "properties": {"a": nested(200)}}
    messages = [
        {"method": "tools/list"},
        {"result": {"tools": [{"name": "t", "inputSchema": deep_schema}]}},
        {"method": "tools/call", "params": {"name": "t", "arguments": {"a": 1}}},
        {"result": {"content": [{"type": "text", "text": "x"}]}},
    ]
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": i // 2 + 1, **message})
        for i, message in enumerate(messages)
    ]
    trace = tmp_path / "calls.jsonl"
    trace.write_text("\n".join(lines) + "\n")
    code, out, err = wt_import(capsys, str(trace), "-o", str(tmp_path / "out"))
    assert code == 0, err
    assert (
        out.splitlines()[0] == f"{trace}: mcp-jsonrpc, 1 call(s), 1 in the fixture, 1 upstream(s)"
    )
    assert (
        "warning: schema_too_deep at $.upstreams[0].tools[0].input_schema: default.t: the input "
        "schema nests deeper than 128 levels, more than a universe holds; the fixture offers "
        '{"type": "object"} instead'
    ) in err.splitlines()
    universe = load_universe(tmp_path / "out" / "fixture.universe.json")
    assert [tool.input_schema for tool in universe.tools] == [{"type": "object"}]
