"""The example pack, replayed in process through the pure layers, gives the documented outcome."""

from __future__ import annotations

from pathlib import Path

from windtunnel.runner import (
    RunWriter,
    Trace,
    evaluate,
    load_pack,
    merge_call_logs,
    plan_units,
    read_results,
    warnings_from_calls,
)

PACK = Path(__file__).parents[2] / "configs" / "examples" / "bluewing-pack.toml"


def replay_scripted(pack_path: Path, run_dir: Path) -> list[Trace]:
    """What a scripted agent does, minus the transport: each plan step through `call_tool`."""
    pack = load_pack(pack_path)
    writer = RunWriter(run_dir, pack=pack.name)
    for unit in plan_units(pack):
        scenario = unit.scenario
        servers = pack.servers_for(scenario)
        for step in scenario.plan:
            servers[step.upstream or next(iter(servers))].call_tool(step.tool, step.args)
        calls = merge_call_logs({name: s.call_log() for name, s in servers.items()})
        trace = Trace(
            unit_id=unit.id,
            scenario=scenario.name,
            repeat=unit.repeat,
            seed=unit.seed,
            task=scenario.task,
            mcp_calls=calls,
            warnings=warnings_from_calls(
                calls, scenario.name, universes={n: s.universe for n, s in servers.items()}
            ),
            output=scenario.final_answer,
        )
        writer.write(evaluate(trace, scenario.policies, scenario.scorers))
    writer.finish()
    return read_results(run_dir)


def test_example_pack_outcome(tmp_path: Path) -> None:
    """The clean scenario passes; the typo diverges and fails on no_divergence and its scorer."""
    clean, typo = replay_scripted(PACK, tmp_path)
    assert (clean.unit_id, clean.status) == ("bluewing-overdue-invoice#0", "passed")
    assert [v.reason for v in clean.verdicts] == [
        "no divergence in 2 calls",
        'call 1 crm.client_lookup({"query":"Bluewing Logistics"}) made',
        "in order: client_lookup (call 1), list_invoices (call 2)",
        "2 calls within budget 4",
    ]
    assert (typo.unit_id, typo.status) == ("bluewing-typo#0", "failed")
    assert [(v.name, v.passed, v.reason) for v in typo.verdicts] == [
        (
            "no_divergence",
            False,
            'call 1 crm.client_lookup({"query":"Bluewing Logistic"}) diverged: no_recorded_result',
        ),
        ("forbidden_call(send_email)", True, "no call to send_email"),
    ]
    assert typo.warnings[0]["nearest"] == {
        "index": 0,
        "shared": 0,
        "differing_keys": ["query"],
        "args": {"query": "Bluewing Logistics"},
    }
    page = (tmp_path / "report.html").read_text()
    assert "&quot;Bluewing Logistic&quot;" in page
    assert "+ &quot;Bluewing Logistics&quot;" in page
