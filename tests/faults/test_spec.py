"""The fault model and its spellings: the command line's grammar, tables, errors, draws."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from windtunnel.errors import ConfigError, UniverseError
from windtunnel.faults import (
    FAILURE_MODES,
    Fault,
    draw,
    fault_from_table,
    faults_for_failure_mode,
    faults_from_tables,
    parse_fault,
)


@pytest.mark.parametrize(
    ("text", "fault"),
    [
        ("get_order=error", Fault(tool="get_order", kind="error")),
        ("get_order=error:-32000", Fault(tool="get_order", kind="error", code=-32000)),
        (
            "get_order=error:-32000:busy: try later",
            Fault(tool="get_order", kind="error", code=-32000, message="busy: try later"),
        ),
        (
            "lookup@0.3=is_error:upstream down",
            Fault(tool="lookup", kind="is_error", fraction=0.3, message="upstream down"),
        ),
        ("charge#2=timeout", Fault(tool="charge", kind="timeout", call=2)),
        ("search=delay:2.5", Fault(tool="search", kind="delay", seconds=2.5)),
        ("search=delay:recorded", Fault(tool="search", kind="delay", seconds="recorded")),
        ("get_order[3]=empty", Fault(tool="get_order", kind="empty", recording=3)),
        ("*=drop", Fault(tool="*", kind="drop")),
        ("a.b-c=not_json", Fault(tool="a.b-c", kind="not_json")),
        ("x=bad_schema", Fault(tool="x", kind="bad_schema")),
    ],
)
def test_parse_fault_reads_each_spelling(text: str, fault: Fault) -> None:
    """Each documented spelling parses to its fault, and spells back to an equal one."""
    assert parse_fault(text) == fault
    assert parse_fault(fault.spelling()) == fault


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("get_order", "no `=` between the target and the kind"),
        ("get_order=explode", "unknown kind 'explode'"),
        ("=error", "target '' is not TOOL[RECORDING]#CALL@FRACTION"),
        ("charge#two=timeout", "call 'two' is not a whole number"),
        ("charge[x]=timeout", "recording 'x' is not a whole number"),
        ("lookup@lots=empty", "fraction 'lots' is not a number"),
        ("x=timeout:5", "`timeout` takes no arguments"),
        ("x=error:boom", "error code 'boom' is not a whole number"),
        ("x=delay:soon", "delay 'soon' is neither seconds nor `recorded`"),
    ],
)
def test_parse_fault_names_what_is_wrong(text: str, message: str) -> None:
    """A bad spelling is one ConfigError at --fault naming the part and the grammar."""
    with pytest.raises(ConfigError) as caught:
        parse_fault(text)
    assert caught.value.path == "--fault"
    assert caught.value.message.startswith(f"{message} in {text!r}; expected TOOL[RECORDING]")


@pytest.mark.parametrize(
    ("table", "path", "message"),
    [
        ({"tool": "x"}, "$.faults[0]", "Object missing required field `kind`"),
        ({"tool": "x", "kind": "boom"}, "$.faults[0].kind", "Invalid enum value 'boom'"),
        (
            {"tool": "x", "kind": "empty", "extra": 1},
            "$.faults[0]",
            "Object contains unknown field `extra`",
        ),
        (
            {"tool": "", "kind": "empty"},
            "$.faults[0].tool",
            "a fault needs a tool name (or `*` for every tool)",
        ),
        ({"tool": "x", "kind": "empty", "call": 0}, "$.faults[0].call", "calls count from 1"),
        (
            {"tool": "x", "kind": "empty", "fraction": 1.5},
            "$.faults[0].fraction",
            "a fraction is between 0 and 1",
        ),
        (
            {"tool": "x", "kind": "empty", "recording": -1},
            "$.faults[0].recording",
            "a recording index is 0 or more",
        ),
        (
            {"tool": "*", "kind": "empty", "recording": 1},
            "$.faults[0].tool",
            "a fault on one recording names that recording's tool, not `*`",
        ),
        (
            {"tool": "x", "kind": "empty", "call": 1, "fraction": 0.5},
            "$.faults[0].fraction",
            "a fault targets one of recording, call or fraction, not call and fraction",
        ),
        (
            {"tool": "x", "kind": "delay"},
            "$.faults[0].seconds",
            'a delay needs `seconds`: a number, or "recorded"',
        ),
        (
            {"tool": "x", "kind": "delay", "seconds": -1},
            "$.faults[0].seconds",
            "a delay is 0 seconds or more",
        ),
        (
            {"tool": "x", "kind": "delay", "seconds": "later"},
            "$.faults[0].seconds",
            "Invalid enum value 'later'",
        ),
        (
            {"tool": "x", "kind": "empty", "message": "m"},
            "$.faults[0].message",
            "`empty` takes no `message`",
        ),
        (
            {"tool": "x", "kind": "is_error", "code": 1},
            "$.faults[0].code",
            "`is_error` takes no `code`",
        ),
        (
            {"tool": "x", "kind": "error", "code": "500"},
            "$.faults[0].code",
            "Expected `int | null`, got `str`",
        ),
    ],
)
def test_fault_tables_name_the_field(table: dict[str, object], path: str, message: str) -> None:
    """A bad table is one error of the caller's class, at the field's JSON path."""
    with pytest.raises(UniverseError) as caught:
        faults_from_tables([table], error=UniverseError, file="u.json")
    assert (caught.value.file, caught.value.path) == ("u.json", path)
    assert caught.value.message.startswith(message)


def test_fault_tables_must_be_a_list() -> None:
    """`faults` that is not an array is an error at `$.faults`."""
    with pytest.raises(ConfigError, match=r"at \$\.faults: Expected `array`, got `object`"):
        faults_from_tables({"tool": "x"})


def test_tables_and_spellings_agree() -> None:
    """A table with the same fields as a spelling is the same fault (TOML ints as seconds)."""
    table = {"tool": "search", "kind": "delay", "seconds": 2}
    assert fault_from_table(table) == parse_fault("search=delay:2")


def test_selects_by_target() -> None:
    """Tool, `*`, recording and call number each select exactly the calls they name."""
    assert parse_fault("a=empty").selects("a", 7, None)
    assert not parse_fault("a=empty").selects("b", 1, 0)
    assert parse_fault("*=empty").selects("b", 1, None)
    assert [n for n in range(1, 5) if parse_fault("a#2=empty").selects("a", n, 0)] == [2]
    assert parse_fault("a[3]=empty").selects("a", 1, 3)
    assert not parse_fault("a[3]=empty").selects("a", 1, 2)
    assert not parse_fault("a[3]=empty").selects("a", 1, None)


def test_fraction_selects_about_that_share_by_draw() -> None:
    """A fraction selects the calls whose draw is below it: about that share of many calls."""
    fault = parse_fault("a@0.3=empty")
    chosen = [n for n in range(1, 2001) if fault.selects("a", n, None, seed=42, unit_id="s#0")]
    assert chosen == [n for n in range(1, 2001) if draw(42, "s#0", "a", n) < 0.3]
    assert 540 < len(chosen) < 660
    assert not any(parse_fault("a@0=empty").selects("a", n, None) for n in range(1, 100))
    assert all(parse_fault("a@1=empty").selects("a", n, None) for n in range(1, 100))


def test_draw_is_the_same_in_another_process() -> None:
    """The draw depends on nothing but its inputs: a fresh interpreter (another hash seed)
    draws the same numbers."""
    here = [draw(7, "scenario#3", "lookup", n) for n in range(1, 6)]
    code = (
        "from windtunnel.faults import draw; "
        "print([draw(7, 'scenario#3', 'lookup', n) for n in range(1, 6)])"
    )
    there = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env={"PYTHONHASHSEED": "12345"},
    ).stdout
    assert there.strip() == repr(here)
    assert draw(7, "scenario#3", "lookup", 1) != draw(8, "scenario#3", "lookup", 1)


def test_evidence_names_the_fault() -> None:
    """The evidence carries id, kind, target and the kind's arguments."""
    assert parse_fault("get_order#2=error:-32000:busy").evidence() == {
        "id": "get_order#2=error:-32000:busy",
        "kind": "error",
        "target": "get_order",
        "call": 2,
        "code": -32000,
        "message": "busy",
    }
    named = Fault(tool="s", kind="delay", seconds="recorded", id="slow search")
    assert named.evidence(waited=1.5) == {
        "id": "slow search",
        "kind": "delay",
        "target": "s",
        "seconds": "recorded",
        "waited": 1.5,
    }


def test_failure_modes_map_the_seeds_modes() -> None:
    """configure_failure_mode's seed modes, Fault objects and spellings all give faults."""
    assert faults_for_failure_mode(None) == []
    assert [f.kind for f in FAILURE_MODES.values()] == ["timeout", "not_json", "empty", "is_error"]
    assert faults_for_failure_mode("malformed_json") == [FAILURE_MODES["malformed_json"]]
    fault = Fault(tool="a", kind="drop")
    assert faults_for_failure_mode([fault, "b=empty"]) == [fault, Fault(tool="b", kind="empty")]
    with pytest.raises(ConfigError, match="unknown failure mode 'explode'"):
        faults_for_failure_mode("explode")


_tools = st.from_regex(r"[A-Za-z0-9_.\-]{1,12}", fullmatch=True)


@given(
    tool=_tools,
    kind=st.sampled_from(["timeout", "empty", "drop", "not_json", "bad_schema"]),
    call=st.none() | st.integers(1, 99),
)
def test_spelling_round_trips(tool: str, kind: str, call: int | None) -> None:
    """Any fault without arguments spells and parses back to itself."""
    fault = fault_from_table({"tool": tool, "kind": kind, "call": call})
    assert parse_fault(fault.spelling()) == fault


@given(text=st.text(max_size=40))
def test_parse_never_crashes(text: str) -> None:
    """Any text parses or is a ConfigError, never another exception."""
    try:
        parse_fault(text)
    except ConfigError:
        pass
