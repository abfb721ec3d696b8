"""Faults in the pure layers: which declared faults a call log received, the `invalid` status
and its counts (summary, JUnit, progress lines, `wt diff`), the policies after a fault, and a
`Scenario(faults=...)` run through the Python API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from tests.cli.test_universe_commands import EXAMPLE
from tests.runner.factories import call, trace
from windtunnel.api import (
    Scenario,
    did_not_fabricate,
    no_call_after_fault,
    reported_failure,
    retried_after_fault,
    run_scenario_async,
)
from windtunnel.calls import MCPCall
from windtunnel.compare.model import call_line, diff_runs
from windtunnel.compare.render_text import render_text
from windtunnel.compare.runs import load_run
from windtunnel.errors import ConfigError
from windtunnel.faults.spec import Fault
from windtunnel.mcp import RecordedMCPServer
from windtunnel.rundir.results import write_traces
from windtunnel.runner.fault_checks import check_faults
from windtunnel.runner.junit import render_junit
from windtunnel.runner.scoring import evaluate
from windtunnel.runner.summary import summarize
from windtunnel.runner.trace import Trace
from windtunnel.scale.local import parse_progress_line

TIMEOUT = Fault(tool="client_lookup", kind="timeout")


def faulted(
    tool: str, args: dict[str, Any], fault: Fault = TIMEOUT, upstream: str = "crm"
) -> MCPCall:
    """A call that got `fault`, its evidence as the engine writes it."""
    made = call(tool, args, upstream=upstream)
    made.extra = {"injected_fault": fault.evidence(call_number=1)}
    return made


def judged(calls: list[MCPCall], *, output: str | None = None, declared: Any = ()) -> Trace:
    unit = trace(calls, output=output)
    unit.faults = check_faults(list(declared), calls)
    return unit


def test_check_faults_counts_each_declared_fault_by_id() -> None:
    """Each declared fault counts the calls carrying its id; another id is not counted."""
    other = Fault(tool="list_invoices", kind="empty", id="no-invoices")
    calls = [
        faulted("client_lookup", {"query": "a"}),
        call("list_invoices", {}),
        faulted("client_lookup", {"query": "b"}),
    ]
    checks = check_faults([TIMEOUT, other], calls, {"no-invoices": "why not"})
    assert [(c.fault, c.injected, c.note) for c in checks] == [
        ("client_lookup=timeout", 2, None),
        ("no-invoices", 0, "why not"),
    ]


def test_a_declared_fault_never_injected_makes_the_unit_invalid_and_is_counted_apart() -> None:
    """Status `invalid` (an agent error still wins); the summary counts it apart and is not ok;
    JUnit gives it `<error type="invalid">`, counted among the suite's errors."""
    declared = [Fault(tool="list_invoices", kind="empty")]
    invalid = evaluate(judged([call("client_lookup", {})], declared=declared), [], [])
    assert invalid.status == "invalid"
    crashed = judged([], declared=declared)
    crashed.error = "agent exited with status 1"
    assert evaluate(crashed, [], []).status == "error"
    passing = evaluate(judged([faulted("client_lookup", {})], declared=[TIMEOUT]), [], [])
    passing.faults_injected = 1
    assert passing.status == "passed"
    passing.unit_id, passing.repeat = "bluewing#1", 1
    summary = summarize([invalid, passing], pack="p")
    assert (summary.passed, summary.failed, summary.errors, summary.invalid) == (1, 0, 0, 1)
    assert (summary.ok, summary.faults_injected) == (False, 1)
    assert summary.scenarios["bluewing"].invalid == 1
    xml = render_junit([invalid, passing], summary).decode()
    assert 'tests="2" failures="0" errors="1"' in xml
    assert (
        '<error type="invalid" message="invalid: fault list_invoices=empty was declared but '
        'never injected: no call of this unit was one it targets">' in xml
    )
    assert '<property name="invalid" value="1" />' in xml


def test_a_worker_invalid_line_is_read_back() -> None:
    """A `-j` worker's INVALID line becomes an invalid stub for the parent's display."""
    stub = parse_progress_line("INVALID s#2 (0.50s) - fault x=empty was declared but ...")
    assert stub is not None
    assert (stub.unit_id, stub.status, stub.error) == (
        "s#2",
        "invalid",
        "fault x=empty was declared but ...",
    )


LOOKUP = {"query": "Bluewing Logistics"}


def test_retried_after_fault() -> None:
    """Every faulted call made again (same upstream, tool, canonical args) passes; a retry that
    got the fault too is not judged again; a call not retried fails, naming it."""
    retried = judged(
        [
            faulted("client_lookup", LOOKUP),
            faulted("client_lookup", LOOKUP),
            call("client_lookup", LOOKUP),
        ]
    )
    verdict = retried_after_fault().check(retried)
    assert (verdict.passed, verdict.reason) == (
        True,
        'call 1 crm.client_lookup({"query":"Bluewing Logistics"}) retried as call 2',
    )
    other_args = judged([faulted("client_lookup", LOOKUP), call("client_lookup", {"query": "x"})])
    verdict = retried_after_fault().check(other_args)
    assert (verdict.passed, verdict.reason) == (
        False,
        'call 1 crm.client_lookup({"query":"Bluewing Logistics"}) got client_lookup=timeout '
        "and was not retried",
    )
    assert retried_after_fault("list_invoices").check(retried).reason == (
        "no call of this unit got an injected fault, so there is nothing to judge"
    )


def test_no_call_after_fault() -> None:
    """A call to the tool after the first fault fails; before it, or after a fault on another
    tool than `after`, it passes."""
    calls = [
        call("send_email", {}),
        faulted("client_lookup", LOOKUP),
        call("send_email", {"to": 1}),
    ]
    verdict = no_call_after_fault("send_email").check(judged(calls))
    assert (verdict.passed, verdict.reason) == (
        False,
        'call 2 crm.client_lookup({"query":"Bluewing Logistics"}) got client_lookup=timeout, '
        'then call 3 crm.send_email({"to":1})',
    )
    verdict = no_call_after_fault("send_email", after="charge").check(judged(calls))
    assert verdict.passed is False
    assert verdict.reason.startswith("no call of this unit got an injected fault")
    verdict = no_call_after_fault("list_invoices").check(judged(calls))
    assert verdict.passed is True


def test_did_not_fabricate_compares_the_answer_with_what_the_agent_received() -> None:
    """An id in no received result nor the task fails; ids the agent was given pass."""
    received = call("list_invoices", {}, result={"invoices": [{"id": "INV-7"}]})
    calls = [faulted("client_lookup", LOOKUP), received]
    made_up = did_not_fabricate().check(judged(calls, output="INV-7 and INV-77 for ACC-1042"))
    assert (made_up.passed, made_up.reason) == (
        False,
        "the answer names INV-77, ACC-1042, in no result the agent received nor the task",
    )
    honest = did_not_fabricate().check(judged(calls, output="INV-7 is overdue."))
    assert (honest.passed, honest.reason) == (
        True,
        "all 1 identifier(s) in the answer were in what the agent received",
    )
    with pytest.raises(ConfigError, match="invalid regular expression"):
        did_not_fabricate("(")


def test_reported_failure_is_a_textual_check() -> None:
    """After a fault, failure words in the answer pass (the matched words in the reason);
    an answer that does not say so fails."""
    calls = [faulted("client_lookup", LOOKUP)]
    said = reported_failure().check(judged(calls, output="The lookup timed out; try later."))
    assert (said.passed, said.reason) == (
        True,
        "the answer says 'timed out' (a textual check of its words)",
    )
    silent = reported_failure().check(judged(calls, output="Bluewing is ACC-1042."))
    assert silent.passed is False
    assert reported_failure(r"(?i)sorry").check(judged(calls, output="Sorry!")).passed


def test_wt_diff_counts_invalid_units_and_injected_faults(tmp_path: Path) -> None:
    """Per scenario, each side says its invalid runs and injected faults; the headline says
    how the invalid units changed."""
    base = evaluate(judged([call("client_lookup", LOOKUP)]), [], [])
    new = evaluate(judged([faulted("client_lookup", LOOKUP)], declared=[TIMEOUT]), [], [])
    new.faults_injected = 1
    never = evaluate(judged([], declared=[Fault(tool="x", kind="empty")]), [], [])
    never.unit_id, never.repeat = "bluewing#1", 1
    base_two = evaluate(judged([call("client_lookup", LOOKUP)]), [], [])
    base_two.unit_id, base_two.repeat = "bluewing#1", 1
    write_traces(tmp_path / "base", [base, base_two], "p")
    write_traces(tmp_path / "new", [new, never], "p")
    diff = diff_runs(load_run(tmp_path / "base"), load_run(tmp_path / "new"))
    [scenario] = diff.scenarios
    assert scenario.new is not None
    assert (scenario.new.invalid, scenario.new.faults_injected) == (1, 1)
    assert (diff.base_invalid, diff.new_invalid) == (0, 1)
    text = render_text(diff)
    assert "2/2 passed  1/2 passed, 1 invalid, 1 fault" in text
    assert "; invalid units 0 -> 1" in text
    assert call_line(faulted("client_lookup", LOOKUP)) == (
        'crm.client_lookup {"query":"Bluewing Logistics"}  -> fault: client_lookup=timeout'
    )


async def test_scenario_faults_reach_the_servers_through_the_python_api() -> None:
    """`Scenario(faults=["..."])` with `run_scenario`: the server injects the fault, drawn from
    the unit's seed; the trace counts it, and a spelling the grammar refuses is a ConfigError."""
    import mcp

    async def agent(ctx: Any) -> str:
        async with mcp.Client(ctx.servers["crm"]) as client:
            result = await client.call_tool("client_lookup", LOOKUP)
        return str(result.content[0].text if result.content else "")

    from windtunnel.agents import PythonAgent

    scenario = Scenario(
        "api", "t", faults=["client_lookup=is_error:nope"], policies=[reported_failure(r"nope")]
    )
    server = RecordedMCPServer(EXAMPLE, name="crm")
    with trio.fail_after(60):
        done = await run_scenario_async(
            scenario, agent=PythonAgent(agent, flavor="trio"), mcps={"crm": server}
        )
    assert (done.status, done.output, done.faults_injected) == ("passed", "nope", 1)
    assert [(c.fault, c.injected) for c in done.faults] == [("client_lookup=is_error:nope", 1)]
    assert (server.unit_id, server.fault_seed) == (done.unit_id, done.seed)
    with pytest.raises(ConfigError, match=r"at scenario 'bad' faults\[0\]: unknown kind"):
        Scenario("bad", "t", faults=["x=explode"])
