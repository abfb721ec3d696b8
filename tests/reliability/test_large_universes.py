"""Units that load large universes do not starve the healthy units running beside them."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from windtunnel.api import Scenario, ScenarioPack
from windtunnel.runner import PlanStep, read_results
from windtunnel.runner.pack_run import PackRunOptions, run_pack

CRM = Path(__file__).parents[2] / "configs" / "examples" / "crm.universe.json"
RECORDINGS = 250_000


def write_large_universe(path: Path, count: int) -> Path:
    """`count` recordings of one tool, one line each (~95 bytes a recording)."""
    with path.open("w") as out:
        out.write('{"windtunnel_universe": 1, "tools": [{"name": "lookup"}], "recordings": [\n')
        for i in range(count):
            out.write(",\n" if i else "")
            out.write(
                f'{{"tool_name": "lookup", "args": {{"id": "user-{i:07d}"}}, '
                f'"result": {{"n": {i}, "ok": true}}}}'
            )
        out.write("\n]}\n")
    return path


@pytest.mark.timeout(300)
async def test_two_large_loads_do_not_time_out_a_healthy_unit(tmp_path: Path) -> None:
    """Two units load a 250,000-recording universe (24 MB) each while a third makes 20 calls
    within a 3 s budget (0.5 s alone): it passes (before: it timed out)."""
    large = write_large_universe(tmp_path / "large.universe.json", RECORDINGS)
    loaders = [
        Scenario(
            name=f"large-{i}",
            task="look up one user",
            upstreams={"users": large},
            plan=[PlanStep(tool="lookup", args={"id": f"user-{RECORDINGS - 1:07d}"})],
            final_answer="ok",
            timeout_s=240,
        )
        for i in range(2)
    ]
    healthy = Scenario(
        name="healthy",
        task="look up Bluewing twenty times",
        upstreams={"crm": CRM},
        plan=[PlanStep(tool="client_lookup", args={"query": "Bluewing Logistics"})] * 20,
        final_answer="ok",
        timeout_s=3,
    )
    pack = ScenarioPack("neighbours", [*loaders, healthy], concurrency=4)
    with trio.fail_after(280):
        summary = await run_pack(pack, PackRunOptions(run_dir=tmp_path / "run"))
    rows = {row.scenario: row for row in read_results(tmp_path / "run", with_calls=False)}
    assert rows["healthy"].error is None
    assert (summary.passed, summary.total) == (3, 3)
