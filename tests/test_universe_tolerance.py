"""Forward tolerance (DESIGN §3, design 0001): what a newer producer or windtunnel-bench writes
within version 1 loads, stays out of matching, and `wt validate` names it with its JSON path."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import UniverseFactory, universe_doc
from windtunnel.cli.main import main
from windtunnel.mcp import RecordedMCPServer
from windtunnel.universe import encode_universe, load_universe
from windtunnel.universe_warnings import UniverseWarning, load_universe_with_warnings

TOOL = {"name": "lookup", "input_schema": {"type": "object"}}
RECORDINGS = [
    {"tool_name": "lookup", "args": {"q": "a"}, "result": "first"},
    {"tool_name": "lookup", "args": {"q": "b"}, "result": "second"},
]


def test_unknown_additive_fields_load_and_stay_out_of_matching(
    write_universe_file: UniverseFactory,
) -> None:
    """Unknown fields at every level load, change no answer and are not written back."""
    plain = universe_doc([TOOL], RECORDINGS, matching={"arg_keys": {"lookup": ["q"]}})
    extended: dict[str, Any] = {
        **plain,
        "producer": "windtunnel-bench 0.13.0",
        "tools": [{**TOOL, "x-future": {"weight": 2}}],
        "recordings": [{**RECORDINGS[0], "witnessed_at": 1}, RECORDINGS[1]],
        "matching": {"arg_keys": {"lookup": ["q"]}, "fuzzy": True},
    }
    loaded = load_universe(write_universe_file(extended))
    assert loaded == load_universe(write_universe_file(plain))
    assert b"producer" not in encode_universe(loaded)
    server = RecordedMCPServer(loaded)
    assert server.call_tool("lookup", {"q": "b", "verbose": True}) == "second"


def test_the_originals_spellings_load(write_universe_file: UniverseFactory) -> None:
    """`description: null`, object-form `arg_keys` with a mode, `matching.modes`, nulls for
    defaults and entries for undeclared tools load as windtunnel-bench reads them."""
    doc = universe_doc(
        [{**TOOL, "description": None, "mode": None}, {"name": "page", "input_schema": {}}],
        RECORDINGS,
        matching={
            "on_miss": None,
            "arg_keys": {"lookup": {"keys": ["q"], "mode": "sequence"}, "ghost": ["x"]},
            "per_tool_on_miss": {"ghost": "empty"},
            "modes": {"page": "sequence"},
        },
    )
    universe = load_universe(write_universe_file(doc))
    assert [(t.name, t.description, t.mode) for t in universe.tools] == [
        ("lookup", "", "sequence"),
        ("page", "", "sequence"),
    ]
    assert universe.matching.on_miss == "fail_call"
    assert universe.matching.arg_keys == {"lookup": ["q"], "ghost": ["x"]}
    # What is written reads back the same: the modes now sit on the tools.
    written = encode_universe(universe)
    assert load_universe(write_universe_file(written)) == universe


def test_matching_modes_win_over_the_object_forms_mode(
    write_universe_file: UniverseFactory,
) -> None:
    """As in windtunnel-bench, `matching.modes` is read after object-form `arg_keys`."""
    doc = universe_doc(
        [TOOL],
        RECORDINGS,
        matching={
            "arg_keys": {"lookup": {"arg_keys": ["q"], "mode": "sequence"}},
            "modes": {"lookup": "stateless"},
        },
    )
    universe = load_universe(write_universe_file(doc))
    assert universe.tools[0].mode == "stateless"
    assert universe.matching.arg_keys == {"lookup": ["q"]}


def test_an_empty_key_list_makes_every_call_a_keyed_hit(
    write_universe_file: UniverseFactory,
) -> None:
    """No keys to compare: every call hits the tool's first recording at the keyed tier (in
    sequence mode the first one not yet used), as in windtunnel-bench."""
    doc = universe_doc([TOOL], RECORDINGS, matching={"arg_keys": {"lookup": []}})
    server = RecordedMCPServer(load_universe(write_universe_file(doc)))
    assert server.call_tool("lookup", {"q": "zzz"}) == "first"
    assert server.call_log()[0].extra == {"match": {"tier": "keyed", "index": 0}}
    sequence = universe_doc(
        [{**TOOL, "mode": "sequence"}], RECORDINGS, {"arg_keys": {"lookup": []}}
    )
    server = RecordedMCPServer(load_universe(write_universe_file(sequence)))
    answers = [server.call_tool("lookup", {}) for _ in range(3)]
    assert answers[:2] == ["first", "second"]
    assert answers[2]["error"] == "no_recorded_result"
    assert server.call_log()[2].divergence["reason"] == "sequence_exhausted"  # type: ignore[index]


def test_warnings_name_each_path(write_universe_file: UniverseFactory) -> None:
    """Every tolerated oddity is one warning with its JSON path, in file order."""
    doc = {
        **universe_doc(
            [{**TOOL, "x": 1, "mode": "stateless"}],
            [{**RECORDINGS[0], "y": 2}],
            matching={
                "arg_keys": {"lookup": {"keys": [], "w": 1}, "ghost": ["q", "q"]},
                "per_tool_on_miss": {"ghost2": "empty"},
                "modes": {"lookup": "sequence"},
                "z": 3,
            },
        ),
        "producer": "p",
    }
    _, warnings = load_universe_with_warnings(write_universe_file(doc))
    assert [w.path for w in warnings] == [
        "$.producer",
        "$.tools[0].x",
        "$.recordings[0].y",
        "$.matching.z",
        "$.matching.arg_keys.lookup.w",
        "$.matching.arg_keys.ghost",
        "$.matching.per_tool_on_miss.ghost2",
        "$.matching.arg_keys.lookup",
        "$.matching.arg_keys.ghost",
        "$.tools[0].mode",
    ]
    assert warnings[0] == UniverseWarning(
        "$.producer", "unknown field: loaded, not read, not written back"
    )
    assert "does not declare" in warnings[5].message
    assert "listed twice" in warnings[8].message


def test_unknown_fields_of_the_surface_load_with_a_warning(
    write_universe_file: UniverseFactory,
) -> None:
    """The recorded server's parts are forward tolerant too."""
    doc = {
        **universe_doc([TOOL]),
        "server": {"info": {"name": "s", "version": "1"}, "flavour": 1},
        "resource_reads": [{"uri": "a://b", "result": {"contents": []}, "etag": "x"}],
    }
    universe, warnings = load_universe_with_warnings(write_universe_file(doc))
    assert universe.server is not None and universe.server.info == {"name": "s", "version": "1"}
    assert [w.path for w in warnings] == ["$.server.flavour", "$.resource_reads[0].etag"]


def test_a_plain_universe_has_no_warnings(write_universe_file: UniverseFactory) -> None:
    """A file in the format as written has nothing to warn about."""
    doc = universe_doc([TOOL], RECORDINGS, matching={"arg_keys": {"lookup": ["q"]}})
    assert load_universe_with_warnings(write_universe_file(doc))[1] == []


def test_validate_prints_warn_lines_and_strict_fails(
    write_universe_file: UniverseFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """`wt validate`: WARN lines (file and JSON path) after OK, exit 0; with `--strict` exit 1."""
    path = write_universe_file({**universe_doc([TOOL]), "producer": "p"})
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert out == (
        f"OK {path} (1 tools, 0 recordings)\n"
        f"WARN {path} at $.producer: unknown field: loaded, not read, not written back\n"
    )
    assert main(["validate", "--strict", str(path)]) == 1
    clean = write_universe_file(universe_doc([TOOL]))
    assert main(["validate", "--strict", str(clean)]) == 0
