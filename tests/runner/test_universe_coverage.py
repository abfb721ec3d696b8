"""Universe coverage per unit and upstream: results, summary, JUnit, report, and the policy."""

from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import trio

from windtunnel.api import Scenario, ScenarioPack, coverage
from windtunnel.cli.main import main
from windtunnel.errors import ConfigError
from windtunnel.mcp.recorded import RecordedMCPServer
from windtunnel.runner import PlanStep, read_results
from windtunnel.runner.pack_config import load_pack_toml
from windtunnel.runner.pack_run import PackRunOptions, run_pack
from windtunnel.runner.policies import Policy
from windtunnel.runner.summary import summarize
from windtunnel.runner.trace import Trace
from windtunnel.runner.universe_coverage import unit_coverage

CRM = Path(__file__).parents[2] / "configs" / "examples" / "crm.universe.json"

# Recordings of CRM: #0 client_lookup Bluewing Logistics, #1 client_lookup ACC-1042,
# #2 and #3 list_invoices ACC-1042 (stateless: the earliest answers, so #3 is never used).
PLAN = [
    PlanStep(upstream="crm", tool="client_lookup", args={"query": "Bluewing Logistics"}),
    PlanStep(upstream="crm", tool="client_lookup", args={"query": "Bluewing Logistics"}),
    PlanStep(upstream="crm", tool="list_invoices", args={"account_id": "ACC-1042"}),
    PlanStep(upstream="crm", tool="client_lookup", args={"query": "Nobody"}),
]


def pack(policies: list[Policy], repeats: int = 1) -> ScenarioPack:
    scenario = Scenario(
        name="lookup",
        task="find Bluewing",
        upstreams={"crm": CRM},
        policies=policies,
        plan=PLAN,
        final_answer="ok",
        repeats=repeats,
    )
    return ScenarioPack("cov", [scenario])


async def test_coverage_lands_in_results_summary_junit_and_report(tmp_path: Path) -> None:
    """Served, never used and unmatched counts reach every output of the run."""
    with trio.fail_after(60):
        await run_pack(pack([coverage()]), PackRunOptions(run_dir=tmp_path))
    (row,) = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert row["coverage"] == {
        "crm": {
            "recordings": 4,
            "served": 2,
            "unused": [1, 3],
            "calls": 4,
            "unmatched": 1,
            "live": 0,
            "tools": {
                "client_lookup": {"recordings": 2, "served": 1, "unused": [1]},
                "list_invoices": {"recordings": 2, "served": 1, "unused": [3]},
            },
            "requests": {},
        }
    }
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["scenarios"]["lookup"]["coverage"] == {
        "crm": {
            "recordings": 4,
            "served": 2,
            "never_used": [1, 3],
            "unmatched": 1,
            "live": 0,
            "runs": 1,
        }
    }
    assert summary["coverage"] == {
        "crm": {"recordings": 4, "served": 2, "never_used": 2, "unmatched": 1, "live": 0}
    }
    suite = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert {k: v for k, v in props.items() if k and "coverage" in k} == {
        "coverage.crm.recordings": "4",
        "coverage.crm.served": "2",
        "coverage.crm.never_used": "2",
        "coverage.crm.unmatched": "1",
        "coverage.crm.live": "0",
        "lookup.coverage.crm.recordings": "4",
        "lookup.coverage.crm.served": "2",
        "lookup.coverage.crm.never_used": "1,3",
        "lookup.coverage.crm.unmatched": "1",
        "lookup.coverage.crm.live": "0",
    }
    assert [(v["passed"], v["reason"]) for v in row["verdicts"]] == [
        (False, "2 of 4 recordings served (minimum 100%); never used: crm#1, crm#3")
    ]
    report = (tmp_path / "report.html").read_text()
    assert (
        "<h3>Coverage</h3><table><tr><th>upstream</th><th>recordings served</th><th>calls</th>"
        "<th>calls matching none</th><th>never used</th></tr>"
        "<tr><td>crm</td><td>2/4</td><td>4</td><td>1</td><td>#1, #3</td></tr></table>"
    ) in report


def traced(queries: list[str]) -> Trace:
    """A unit of scenario `s` whose calls went to a real recorded server."""
    server = RecordedMCPServer(CRM, name="crm")
    for query in queries:
        server.call_tool("client_lookup", {"query": query})
    calls = server.call_log()
    return Trace(
        unit_id=f"s#{len(queries)}",
        scenario="s",
        status="passed",
        mcp_calls=calls,
        coverage=unit_coverage(calls, {"crm": server.universe}),
    )


def test_never_used_means_unused_by_every_run() -> None:
    """Across repeats a recording is never used only if no run used it."""
    summary = summarize([traced(["Bluewing Logistics"]), traced(["ACC-1042", "x", "y"])])
    cov = summary.scenarios["s"].coverage["crm"]
    assert (cov.recordings, cov.served, cov.never_used, cov.unmatched, cov.runs) == (
        4,
        2,
        [2, 3],
        2,
        2,
    )


def test_coverage_policy_names_what_was_skipped() -> None:
    """Every recording of a tool must be used; a fraction may be enough; unknown tools fail."""
    trace = traced(["Bluewing Logistics"])
    verdict = coverage("client_lookup").check(trace)
    assert (verdict.name, verdict.passed, verdict.reason) == (
        "coverage(client_lookup, 1)",
        False,
        "1 of 2 recordings of client_lookup served (minimum 100%); never used: crm#1",
    )
    half = coverage("client_lookup", upstream="crm", minimum=0.5).check(trace)
    assert (half.name, half.passed) == ("coverage(crm.client_lookup, 0.5)", True)
    everything = coverage(minimum=0.25).check(trace)
    assert (everything.passed, everything.reason) == (
        True,
        "1 of 4 recordings served (minimum 25%); never used: crm#1, crm#2, crm#3",
    )
    missing = coverage("refund").check(trace)
    assert (missing.passed, missing.reason) == (
        False,
        "no recordings of refund in this unit's universes",
    )
    with pytest.raises(ConfigError, match=r"coverage needs minimum within \[0, 1\], got 1.5"):
        coverage(minimum=1.5)


def write_pack(tmp_path: Path, policy: str) -> Path:
    path = tmp_path / "pack.toml"
    path.write_text(
        textwrap.dedent(
            f"""
            [pack]
            name = "cov"
            [[scenario]]
            name = "lookup"
            task = "find Bluewing"
            upstreams = {{ crm = "{CRM}" }}
            [[scenario.plan]]
            tool = "client_lookup"
            args = {{ query = "Bluewing Logistics" }}
            [[scenario.plan]]
            tool = "list_invoices"
            args = {{ account_id = "ACC-1042" }}
            [[scenario.policies]]
            {policy}
            """
        )
    )
    return path


def test_toml_coverage_policy_fails_a_skipped_step(tmp_path: Path) -> None:
    """`kind = "coverage"` in a TOML pack: the run fails, naming the recording never used."""
    path = write_pack(tmp_path, 'kind = "coverage"\ntool = "client_lookup"\nupstream = "crm"')
    assert main(["run", str(path), "-o", str(tmp_path / "run"), "--progress", "plain"]) == 1
    (row,) = read_results(tmp_path / "run", with_calls=False)
    assert [(v.name, v.passed, v.reason) for v in row.verdicts] == [
        (
            "coverage(crm.client_lookup, 1)",
            False,
            "1 of 2 recordings of crm.client_lookup served (minimum 100%); never used: crm#1",
        )
    ]


def test_toml_coverage_policy_checks_its_keys(tmp_path: Path) -> None:
    """A minimum outside [0, 1] or an unknown upstream is a ConfigError naming the key."""
    with pytest.raises(ConfigError) as info:
        load_pack_toml(write_pack(tmp_path, 'kind = "coverage"\nminimum = 2'))
    assert str(info.value).endswith(
        "at scenario[0].policies[0].minimum: must be within [0, 1], got 2"
    )
    with pytest.raises(ConfigError) as info:
        load_pack_toml(write_pack(tmp_path, 'kind = "coverage"\nupstream = "billing"'))
    assert str(info.value).endswith(
        "at scenario[0].policies[0].upstream: unknown upstream 'billing'; this scenario has crm"
    )


async def test_every_record_names_scenario_and_unit(tmp_path: Path) -> None:
    """events.jsonl and results.jsonl give each record both `scenario` and `unit_id`."""
    with trio.fail_after(60):
        await run_pack(pack([], repeats=2), PackRunOptions(run_dir=tmp_path))
    rows = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert sorted((r["scenario"], r["unit_id"]) for r in rows) == [
        ("lookup", "lookup#0"),
        ("lookup", "lookup#1"),
    ]
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert all("scenario" in e and "unit_id" in e for e in events)
    per_unit = {
        (e["event"], e["scenario"], e["unit_id"])
        for e in events
        if e["event"] not in ("fleet_started", "fleet_stopped")
    }
    assert per_unit == {
        (name, "lookup", unit)
        for unit in ("lookup#0", "lookup#1")
        for name in (
            "scenario_started",
            "server_started",
            "universe_divergence",
            "server_stopped",
            "scenario_finished",
        )
    }
    fleet = [(e["scenario"], e["unit_id"]) for e in events if e["event"].startswith("fleet_")]
    assert fleet == [(None, None), (None, None)]
