"""JUnit XML: valid against the Ant/Jenkins schema, one testcase per unit, precise failures."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from windtunnel.runner.junit import render_junit
from windtunnel.runner.scoring import contains, evaluate, no_divergence, required_call
from windtunnel.runner.summary import summarize
from windtunnel.runner.trace import Trace

from .factories import call, trace

SCHEMA = Path(__file__).parent / "data" / "junit.xsd"


def units() -> list[Trace]:
    policies = [no_divergence(), required_call("client_lookup")]
    miss = call("client_lookup", {"query": "Blue"}, reason="no_recorded_result")
    traces = [
        trace([call("client_lookup", {"query": "Bluewing"})], output="INV-7", repeat=0),
        trace([miss], output="INV-7", repeat=1),
        trace([call("client_lookup")], output="INV-3", repeat=2),
        trace([], error="agent exited with status 3", repeat=3),
        trace([], error="crashed: \x00\x1b & <tags>", scenario='quote"s & <angles>'),
    ]
    for t in traces:
        evaluate(t, policies, [contains("INV-7")])
    traces[0].trace_file = "traces/bluewing_0-abc.json"
    return traces


def render(traces: list[Trace]) -> bytes:
    return render_junit(traces, summarize(traces, pack="demo"))


def test_valid_against_the_junit_schema() -> None:
    """The document validates against the Ant/Jenkins JUnit schema."""
    xmlschema = pytest.importorskip("xmlschema", reason="xmlschema is a test dependency")
    schema = xmlschema.XMLSchema(SCHEMA)
    schema.validate(render(units()).decode())
    schema.validate(render([]).decode())


def test_one_testcase_per_unit_with_status_mapping() -> None:
    """Passed units are bare, failed ones carry <failure>, agent errors carry <error>."""
    root = ET.fromstring(render(units()))
    [suite] = root.findall("testsuite")
    assert {k: suite.get(k) for k in ("name", "tests", "failures", "errors", "skipped")} == {
        "name": "demo",
        "tests": "5",
        "failures": "2",
        "errors": "2",
        "skipped": "0",
    }
    cases = suite.findall("testcase")
    assert [(c.get("name"), c.get("classname")) for c in cases] == [
        ("bluewing#0", "demo.bluewing"),
        ("bluewing#1", "demo.bluewing"),
        ("bluewing#2", "demo.bluewing"),
        ("bluewing#3", "demo.bluewing"),
        ('quote"s & <angles>#0', 'demo.quote"s & <angles>'),
    ]
    assert [[child.tag for child in c] for c in cases] == [
        [],
        ["failure"],
        ["failure"],
        ["error"],
        ["error"],
    ]
    failure = cases[1].find("failure")
    assert failure is not None
    assert failure.get("type") == "policy"
    assert failure.get("message") == (
        'policy no_divergence: call 1 crm.client_lookup({"query":"Blue"}) diverged: '
        "no_recorded_result"
    )
    assert failure.text == (
        'policy no_divergence: call 1 crm.client_lookup({"query":"Blue"}) diverged: '
        "no_recorded_result\n"
        'divergence crm.client_lookup({"query":"Blue"}): no_recorded_result (policy fail_call)'
    )
    scorer_failure = cases[2].find("failure")
    assert scorer_failure is not None
    assert scorer_failure.get("type") == "scorer"
    assert scorer_failure.get("message") == (
        "scorer contains(INV-7): 0 < 1: answer does not contain 'INV-7'"
    )
    error = cases[3].find("error")
    assert error is not None
    assert (error.get("type"), error.get("message")) == (
        "agent_error",
        "agent error: agent exited with status 3",
    )


def test_properties_and_trace_pointers() -> None:
    """Suite properties carry counts and pass@k/pass^k; system-out points at trace files."""
    root = ET.fromstring(render(units()))
    suite = root.find("testsuite")
    assert suite is not None
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["divergences"] == "1"
    assert props["bluewing.runs"] == "4"
    assert props["bluewing.pass_at_k.2"] == "0.5"
    assert props["bluewing.pass_hat_k.1"] == "0.25"
    assert suite.findtext("system-out") == "bluewing#0: passed traces/bluewing_0-abc.json"


def test_characters_xml_cannot_carry_are_replaced() -> None:
    """NUL and escape characters from traces become U+FFFD; markup is escaped, not injected."""
    data = render(units())
    assert b"\x00" not in data
    assert b"\x1b" not in data
    assert b"<tags>" not in data
    root = ET.fromstring(data)
    case = root.findall("testsuite/testcase")[-1]
    error = case.find("error")
    assert error is not None
    assert error.get("message") == "agent error: crashed: \ufffd\ufffd & <tags>"
