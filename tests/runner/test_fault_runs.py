"""Packs with faults run end to end: a real command agent (the official MCP client) meets each
injected fault; units pass, fail or are `invalid` (a declared fault never injected), and every
output says so: exit code, summary, JUnit, report, events. Fractions draw the same calls on
every run, in one process or over `-j 2` workers."""

from __future__ import annotations

import json
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_universe_commands import EXAMPLE
from windtunnel.cli.main import main
from windtunnel.faults.spec import draw
from windtunnel.runner import read_results
from windtunnel.runner.trace import Trace
from windtunnel.runner.units import unit_seed

AGENT = Path(__file__).parent / "data" / "fault_agent.py"
BLUEWING = {"account_id": "ACC-1042", "email": "ops@bluewing.example", "name": "Bluewing Logistics"}


def scenario(name: str, style: str, body: str) -> str:
    """One `[[scenario]]` on the example CRM universe, run by the fault agent in `style`."""
    return textwrap.dedent(
        f"""
        [[scenario]]
        name = "{name}"
        task = "Which invoice of Bluewing Logistics is overdue?"
        upstreams = {{ crm = "{EXAMPLE}" }}
        agent = {{ kind = "command", command = ["{sys.executable}", "{AGENT}", "{{mcp_config}}", "{style}"] }}
        """
    ) + textwrap.dedent(body)


def write_pack(path: Path, name: str, scenarios: list[str], repeats: int = 1) -> Path:
    head = f'[pack]\nname = "{name}"\nconcurrency = 4\nrepeats = {repeats}\ntimeout_s = 60\n'
    path.write_text(head + "".join(scenarios))
    return path


OUTCOMES_PACK = [
    scenario(
        "retries",
        "retry",
        """
        faults = ["client_lookup#1=is_error:busy, try again"]
        [[scenario.policies]]
        kind = "retried_after_fault"
        [[scenario.policies]]
        kind = "did_not_fabricate"
        [[scenario.scorers]]
        kind = "contains"
        text = "INV-7"
        """,
    ),
    scenario(
        "fabricates",
        "fabricate",
        """
        [[scenario.faults]]
        tool = "client_lookup"
        kind = "error"
        code = -32000
        message = "crm down"
        [[scenario.policies]]
        kind = "retried_after_fault"
        [[scenario.policies]]
        kind = "did_not_fabricate"
        [[scenario.policies]]
        kind = "no_call_after_fault"
        tool = "list_invoices"
        """,
    ),
    scenario(
        "never-reached",
        "lookup-only",
        """
        faults = ["list_invoices=empty"]
        [[scenario.policies]]
        kind = "no_divergence"
        """,
    ),
    scenario(
        "reports-timeout",
        "report",
        """
        faults = [{ tool = "client_lookup", kind = "timeout", id = "crm-hangs" }]
        [[scenario.policies]]
        kind = "reported_failure"
        [[scenario.policies]]
        kind = "no_call_after_fault"
        tool = "list_invoices"
        """,
    ),
]


def seen(trace: Trace) -> list[Any]:
    """What the agent's MCP client saw, call by call (its `SEEN` line)."""
    assert trace.output is not None
    line = trace.output.splitlines()[-1]
    assert line.startswith("SEEN ")
    parsed: list[Any] = json.loads(line.removeprefix("SEEN "))
    return parsed


def test_pass_fail_and_invalid_units_and_every_output_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A retried fault passes, a fabricated answer fails, a fault the agent never reached makes
    its unit invalid (exit 1, counted apart), a timeout is reported; the client saw exactly the
    injected answers, and the call log, events, JUnit and report carry the evidence."""
    pack = write_pack(tmp_path / "pack.toml", "faulted", OUTCOMES_PACK)
    run_dir = tmp_path / "run"
    assert main(["run", str(pack), "-o", str(run_dir), "--progress", "plain"]) == 1
    err = capsys.readouterr().err
    assert (
        "faulted: FAILED: 2 passed, 1 failed, 0 errors, 1 invalid of 4; divergences 0; "
        "faults injected 3" in err
    )
    assert (
        "INVALID never-reached#0 (" in err
        and "- fault list_invoices=empty was declared but never injected: no call of this unit "
        "was one it targets"
        in err
    )
    traces = {t.scenario: t for t in read_results(run_dir)}
    assert {name: t.status for name, t in traces.items()} == {
        "retries": "passed",
        "fabricates": "failed",
        "never-reached": "invalid",
        "reports-timeout": "passed",
    }

    retries = traces["retries"]
    assert seen(retries) == [
        {"tool": "client_lookup", "is_error": ["busy, try again"]},
        {"tool": "client_lookup", "result": BLUEWING},
        {
            "tool": "list_invoices",
            "result": {
                "invoices": [{"amount": 1200, "id": "INV-7", "status": "overdue"}],
                "next_cursor": "p2",
            },
        },
    ]
    evidence = retries.mcp_calls[0].extra["injected_fault"]
    assert evidence == {
        "id": "client_lookup#1=is_error:busy, try again",
        "kind": "is_error",
        "target": "client_lookup",
        "call": 1,
        "message": "busy, try again",
        "call_number": 1,
    }
    assert "injected_fault" not in retries.mcp_calls[1].extra
    assert [(c.fault, c.injected) for c in retries.faults] == [
        ("client_lookup#1=is_error:busy, try again", 1)
    ]
    assert [v.reason for v in retries.verdicts] == [
        'call 1 crm.client_lookup({"query":"Bluewing Logistics"}) retried as call 2',
        "all 2 identifier(s) in the answer were in what the agent received",
    ]

    fabricates = traces["fabricates"]
    assert seen(fabricates) == [
        {"tool": "client_lookup", "error": {"code": -32000, "message": "crm down"}}
    ]
    assert [(v.name, v.passed, v.reason) for v in fabricates.verdicts] == [
        (
            "retried_after_fault()",
            False,
            'call 1 crm.client_lookup({"query":"Bluewing Logistics"}) got client_lookup=error:'
            "-32000:crm down and was not retried",
        ),
        (
            "did_not_fabricate",
            False,
            "the answer names ACC-9999, in no result the agent received nor the task",
        ),
        (
            "no_call_after_fault(list_invoices)",
            True,
            'call 1 crm.client_lookup({"query":"Bluewing Logistics"}) got client_lookup=error:'
            "-32000:crm down; no call to list_invoices after it",
        ),
    ]

    never = traces["never-reached"]
    assert never.faults_injected == 0
    assert [(c.fault, c.injected) for c in never.faults] == [("list_invoices=empty", 0)]
    assert [v.passed for v in never.verdicts] == [True]  # its policies passed: still invalid

    timed_out = traces["reports-timeout"]
    [what] = seen(timed_out)
    assert what["tool"] == "client_lookup" and set(what) == {"tool", "error"}
    assert "timed out" in what["error"]["message"].lower()
    assert timed_out.mcp_calls[0].extra["injected_fault"]["id"] == "crm-hangs"
    assert timed_out.output is not None
    assert timed_out.output.startswith("The client lookup failed, so I cannot answer.")

    summary = json.loads((run_dir / "summary.json").read_text())
    assert {k: summary[k] for k in ("passed", "failed", "errors", "invalid", "ok")} == {
        "passed": 2,
        "failed": 1,
        "errors": 0,
        "invalid": 1,
        "ok": False,
    }
    assert summary["faults_injected"] == 3
    assert summary["scenarios"]["never-reached"]["invalid"] == 1
    assert summary["scenarios"]["never-reached"]["failed"] == 0

    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    injected = sorted(
        (e["unit_id"], e["fault"]["id"]) for e in events if e["event"] == "fault_injected"
    )
    assert injected == [
        ("fabricates#0", "client_lookup=error:-32000:crm down"),
        ("reports-timeout#0", "crm-hangs"),
        ("retries#0", "client_lookup#1=is_error:busy, try again"),
    ]

    suite = ET.parse(run_dir / "junit.xml").getroot()[0]
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "1", "1")
    case = suite.find("testcase[@name='never-reached#0']")
    assert case is not None
    error = case.find("error")
    assert error is not None and error.get("type") == "invalid"
    assert error.get("message") == (
        "invalid: fault list_invoices=empty was declared but never injected: no call of this "
        "unit was one it targets"
    )

    report = (run_dir / "report.html").read_text()
    assert '<span class="pill invalid">invalid</span> never-reached#0' in report
    assert '<p class="bad">Invalid: fault list_invoices=empty was declared' in report
    # Units that did not pass are shown in full: their declared faults, and the faulted calls.
    assert '<td class="mono">list_invoices=empty</td><td>0</td>' in report
    assert '<td class="mono">client_lookup=error:-32000:crm down</td><td>1</td>' in report
    assert (
        '<tr class="faulted"><td>1</td>' in report
        and "<td>fault injected: client_lookup=error:-32000:crm down, error</td>" in report
    )
    assert '<div class="card"><b>1</b>invalid</div>' in report


def test_a_fault_on_a_tool_no_upstream_declares_names_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`wt run --fault` applies to every scenario; where no upstream has the tool, the unit is
    invalid and says that no upstream declares it."""
    pack = write_pack(tmp_path / "pack.toml", "elsewhere", [scenario("lookup", "lookup-only", "")])
    code = main(
        [
            "run",
            str(pack),
            "-o",
            str(tmp_path / "run"),
            "--progress",
            "plain",
            "--fault",
            "refund_charge=timeout",
        ]
    )
    assert code == 1
    [trace] = read_results(tmp_path / "run")
    assert trace.status == "invalid"
    assert [(c.fault, c.injected, c.note) for c in trace.faults] == [
        (
            "refund_charge=timeout",
            0,
            "no upstream of the scenario (crm) declares the tool 'refund_charge'",
        )
    ]
    assert "0 passed, 0 failed, 0 errors, 1 invalid of 1" in capsys.readouterr().err


def test_a_bad_fault_option_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A `--fault` the grammar refuses stops `wt run` with exit 2 before anything runs."""
    pack = write_pack(tmp_path / "pack.toml", "p", [scenario("lookup", "lookup-only", "")])
    code = main(["run", str(pack), "-o", str(tmp_path / "run"), "--fault", "lookup=explode"])
    assert code == 2
    assert "at --fault: unknown kind 'explode' in 'lookup=explode'" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


FRACTION = scenario(
    "fraction",
    "many",
    """
    faults = ["client_lookup@0.5=is_error:sometimes"]
    """,
)


def faulted_calls(run_dir: Path) -> dict[str, list[int]]:
    """Per unit, the call numbers that got the fault."""
    return {
        trace.unit_id: [
            n for n, call in enumerate(trace.mcp_calls, 1) if "injected_fault" in call.extra
        ]
        for trace in read_results(run_dir)
    }


def test_a_fraction_draws_the_same_calls_every_run_and_over_workers(tmp_path: Path) -> None:
    """`@0.5`: each unit's faulted calls are the ones `draw(unit seed, unit id, tool, n)` puts
    under 0.5, the same in two runs in this process and in a run over `-j 2` worker processes;
    repeats of one scenario draw differently."""
    pack = write_pack(tmp_path / "pack.toml", "fractions", [FRACTION], repeats=3)
    for name in ("one", "two"):
        assert main(["run", str(pack), "-o", str(tmp_path / name), "--progress", "plain"]) == 0
    assert (
        main(["run", str(pack), "-o", str(tmp_path / "j2"), "-j", "2", "--progress", "plain"]) == 0
    )
    expected = {
        uid: [n for n in range(1, 21) if draw(unit_seed(uid), uid, "client_lookup", n) < 0.5]
        for uid in ("fraction#0", "fraction#1", "fraction#2")
    }
    assert faulted_calls(tmp_path / "one") == expected
    assert faulted_calls(tmp_path / "two") == expected
    assert faulted_calls(tmp_path / "j2") == expected
    assert len({tuple(calls) for calls in expected.values()}) == 3
    assert all(0 < len(calls) < 20 for calls in expected.values())
