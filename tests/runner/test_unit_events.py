"""Every unit of a run has its `scenario_started` / `scenario_finished` pair of events, also a
unit that ended before any of its servers ran."""

from __future__ import annotations

import json
from pathlib import Path

import trio

from windtunnel.api import Scenario, ScenarioPack
from windtunnel.runner import PlanStep, read_results
from windtunnel.runner.pack_run import PackRunOptions, run_pack

CRM = Path(__file__).parents[2] / "configs" / "examples" / "crm.universe.json"


async def test_a_unit_whose_universe_does_not_load_still_starts_and_finishes(
    tmp_path: Path,
) -> None:
    broken = tmp_path / "broken.universe.json"
    broken.write_text('{"windtunnel_universe": 1, "tools": [')
    lookup = [PlanStep(tool="client_lookup", args={"query": "Bluewing Logistics"})]
    pack = ScenarioPack(
        "units",
        [
            Scenario(
                name="broken", task="t", upstreams={"crm": broken, "billing": CRM}, plan=lookup
            ),
            Scenario(name="healthy", task="t", upstreams={"crm": CRM}, plan=lookup),
        ],
    )
    with trio.fail_after(60):
        await run_pack(pack, PackRunOptions(run_dir=tmp_path / "run"))
    rows = {row.scenario: row for row in read_results(tmp_path / "run", with_calls=False)}
    assert rows["broken"].error is not None and "broken.universe.json" in rows["broken"].error
    events = [
        json.loads(line) for line in (tmp_path / "run" / "events.jsonl").read_text().splitlines()
    ]
    lifecycle = [
        (e["event"], e["unit_id"])
        for e in events
        if e["event"] in ("scenario_started", "scenario_finished")
    ]
    assert sorted(lifecycle) == [
        ("scenario_finished", "broken#0"),
        ("scenario_finished", "healthy#0"),
        ("scenario_started", "broken#0"),
        ("scenario_started", "healthy#0"),
    ]
    started = next(
        e for e in events if e["event"] == "scenario_started" and e["unit_id"] == "broken#0"
    )
    finished = next(
        e for e in events if e["event"] == "scenario_finished" and e["unit_id"] == "broken#0"
    )
    assert started["scenario"] == "broken" and started["upstreams"] == ["billing", "crm"]
    assert (finished["calls"], finished["divergences"], finished["faults"]) == (0, 0, [])
    assert finished["error"] == rows["broken"].error
    assert started["seq"] < finished["seq"]


async def test_a_universes_own_fault_that_never_fired_makes_the_unit_invalid(
    tmp_path: Path,
) -> None:
    """The faults a universe file declares are declared for every unit run against it."""
    doc = json.loads(CRM.read_text())
    doc["faults"] = [{"tool": "list_invoices", "kind": "is_error", "message": "billing down"}]
    faulty = tmp_path / "faulty.universe.json"
    faulty.write_text(json.dumps(doc))
    lookup = PlanStep(tool="client_lookup", args={"query": "Bluewing Logistics"})
    invoices = PlanStep(tool="list_invoices", args={"account_id": "ACC-1042"})
    pack = ScenarioPack(
        "universe faults",
        [
            Scenario(name="never", task="t", upstreams={"crm": faulty}, plan=[lookup]),
            Scenario(name="meets", task="t", upstreams={"crm": faulty}, plan=[lookup, invoices]),
        ],
    )
    with trio.fail_after(60):
        summary = await run_pack(pack, PackRunOptions(run_dir=tmp_path / "run"))
    rows = {row.scenario: row for row in read_results(tmp_path / "run", with_calls=False)}
    assert rows["never"].status == "invalid"
    assert [(f.fault, f.injected) for f in rows["never"].faults] == [
        ("list_invoices=is_error:billing down", 0)
    ]
    assert rows["meets"].status == "passed"
    assert [(f.fault, f.injected) for f in rows["meets"].faults] == [
        ("list_invoices=is_error:billing down", 1)
    ]
    assert (summary.passed, summary.total) == (1, 2)
