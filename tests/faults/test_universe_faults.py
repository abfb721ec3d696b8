"""A universe's `faults` section: loaded, checked against the universe with JSON paths, written
back, forward tolerant; served by `RecordedMCPServer`; and `wt serve --fault` / `wt validate` on
bad input (exit 2, one line, no traceback)."""

from __future__ import annotations

import copy
import json
from typing import Any

import mcp
import pytest
import trio

from tests.conftest import UniverseFactory
from tests.faults.world import DOC
from windtunnel.cli.main import main
from windtunnel.errors import ConfigError, UniverseError
from windtunnel.faults import FAULT_EXTRA_KEY, Fault
from windtunnel.mcp import RecordedMCPServer
from windtunnel.mcp.recorded import InjectedFaultError
from windtunnel.universe import decode_universe, encode_universe
from windtunnel.universe_warnings import universe_warnings


def with_faults(faults: Any) -> dict[str, Any]:
    doc = copy.deepcopy(DOC)
    doc["faults"] = faults
    return doc


def test_faults_section_loads_and_writes_back() -> None:
    """The section loads as Faults and is written back as it was (recordings untouched)."""
    doc = with_faults([{"tool": "search", "kind": "delay", "seconds": 2.5, "call": 2}])
    universe = decode_universe(json.dumps(doc))
    assert universe.faults == [Fault(tool="search", kind="delay", seconds=2.5, call=2)]
    written = json.loads(encode_universe(universe))
    assert written["faults"] == [{"tool": "search", "kind": "delay", "call": 2, "seconds": 2.5}]
    assert written["recordings"] == DOC["recordings"]
    assert "faults" not in json.loads(encode_universe(decode_universe(json.dumps(DOC))))


def test_unknown_fault_fields_load_and_warn() -> None:
    """A field a newer release added loads, is not read, and `wt validate` names it."""
    doc = with_faults([{"tool": "search", "kind": "empty", "probability_curve": "later"}])
    data = json.dumps(doc)
    universe = decode_universe(data)
    assert universe.faults == [Fault(tool="search", kind="empty")]
    assert [(w.path, w.message) for w in universe_warnings(data, universe)] == [
        ("$.faults[0].probability_curve", "unknown field: loaded, not read, not written back")
    ]


@pytest.mark.parametrize(
    ("faults", "where"),
    [
        (
            [{"tool": "nope", "kind": "empty"}],
            "$.faults[0].tool: fault names undeclared tool 'nope'; this universe declares: get_order, search",
        ),
        (
            [
                {"tool": "search", "kind": "empty"},
                {"tool": "search", "kind": "empty", "recording": 9},
            ],
            "$.faults[1].recording: recording 9 does not exist (the universe has 2)",
        ),
        (
            [{"tool": "search", "kind": "empty", "recording": 0}],
            "$.faults[0].recording: recording 0 is a call of 'get_order', not 'search'",
        ),
        (
            [{"tool": "search", "kind": "bad_schema"}],
            "$.faults[0].kind: `bad_schema` needs a tool whose outputSchema an object can break; 'search' has none",
        ),
        (
            [{"tool": "search", "kind": "delay", "seconds": -2}],
            "$.faults[0].seconds: a delay is 0 seconds or more",
        ),
        ({"tool": "search"}, "$.faults: Expected `array`, got `object`"),
    ],
)
def test_bad_faults_are_one_error_with_its_path(faults: Any, where: str) -> None:
    """Each problem is one UniverseError naming the JSON path and what was expected."""
    with pytest.raises(UniverseError) as caught:
        decode_universe(json.dumps(with_faults(faults)), file="shop.universe.json")
    assert str(caught.value) == f"shop.universe.json at {where}"


def test_wt_validate_names_a_bad_fault(
    write_universe_file: UniverseFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """`wt validate`: INVALID with the file and the fault's JSON path, exit 2."""
    bad = write_universe_file(with_faults([{"tool": "search", "kind": "explode"}]))
    assert main(["validate", str(bad)]) == 2
    assert capsys.readouterr().out == (
        f"INVALID {bad} at $.faults[0].kind: Invalid enum value 'explode'\n"
    )


def test_the_universe_faults_are_served() -> None:
    """A server of a universe with faults injects them; in process, `call_tool` raises for a
    fault that gives no answer and returns the rewritten answer for the others."""
    server = RecordedMCPServer(
        decode_universe(json.dumps(with_faults([{"tool": "search", "kind": "empty"}]))),
        faults=["get_order#2=error"],
    )
    server.log_events = False
    assert server.call_tool("search", {"q": "x"}) == {"content": []}
    assert server.call_tool("get_order", {"id": "A1"}) == {"id": "A1", "total": 42}
    with pytest.raises(InjectedFaultError, match=r"fault 'get_order#2=error' \(error\)"):
        server.call_tool("get_order", {"id": "A1"})
    assert [c.extra.get(FAULT_EXTRA_KEY, {}).get("kind") for c in server.call_log()] == [
        "empty",
        None,
        "error",
    ]
    server.reset_call_log()  # counts start again
    assert server.call_tool("get_order", {"id": "A1"}) == {"id": "A1", "total": 42}


def test_faults_for_an_undeclared_tool_are_refused() -> None:
    """`faults=` naming a tool the universe does not declare is a ConfigError."""
    with pytest.raises(ConfigError, match="fault names undeclared tool 'nope'"):
        RecordedMCPServer(decode_universe(json.dumps(DOC)), faults=["nope=empty"])


def test_wt_serve_refuses_faults_with_a_record_mode(
    write_universe_file: UniverseFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """Faults are injected into a replay: with a record mode that records, exit 2."""
    universe = write_universe_file(DOC)
    args = ["serve", "--fault", "search=empty", "--record-mode", "all", str(universe)]
    assert main(args) == 2
    assert capsys.readouterr().err.startswith(
        "wt: error: <command line>: --fault injects faults into a replay; --record-mode all records"
    )


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (
            "search=explode",
            "wt: error: <command line> at --fault: unknown kind 'explode' in 'search=explode'",
        ),
        (
            "nope=empty",
            "wt: error: <command line> at --fault nope=empty: fault names undeclared tool 'nope'",
        ),
    ],
)
def test_wt_serve_refuses_a_bad_fault(
    write_universe_file: UniverseFactory,
    capsys: pytest.CaptureFixture[str],
    fault: str,
    message: str,
) -> None:
    """`wt serve --fault` with a bad spelling or an undeclared tool: one line, exit 2."""
    universe = write_universe_file(DOC)
    assert main(["serve", "--fault", fault, str(universe)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message), err
    assert "Traceback" not in err


@pytest.mark.timeout(60)
def test_the_handle_configures_failure_modes_as_the_seed_does() -> None:
    """From plain synchronous code: `start()`'s handle takes the seed's modes and ours, and
    `None` restores the recording; the official client sees each."""
    server = RecordedMCPServer(decode_universe(json.dumps(DOC)))
    server.log_events = False
    handle = server.start()
    try:

        async def call() -> Any:
            async with mcp.Client(handle.url) as client:
                return await client.call_tool("search", {"q": "x"})

        handle.configure_failure_mode("empty_unexpected")
        empty = trio.run(call)
        handle.configure_failure_mode("search=is_error:nope")
        failed = trio.run(call)
        handle.configure_failure_mode(None)
        plain = trio.run(call)
    finally:
        handle.stop()
    assert empty.content == []
    assert failed.is_error is True
    assert plain.is_error is False
    assert [c.extra.get(FAULT_EXTRA_KEY, {}).get("id") for c in handle.call_log()] == [
        "empty_unexpected",
        "search=is_error:nope",
        None,
    ]
