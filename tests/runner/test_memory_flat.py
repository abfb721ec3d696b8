"""Memory of a pack run does not grow with its units: lazy plan, compact records, curves on demand."""

from __future__ import annotations

import io
import json
import os
import random
import sys
import tracemalloc
from pathlib import Path

import msgspec
import pytest
import trio

from windtunnel.api import Scenario, ScenarioPack, no_divergence
from windtunnel.rundir.results import RunUnits, RunWriter
from windtunnel.rundir.summary_file import write_summary
from windtunnel.runner.finished import FinishedUnits
from windtunnel.runner.pack_run import PackRunOptions, run_pack
from windtunnel.runner.progress import Progress
from windtunnel.runner.repeats import PassCurve, pass_at_k, pass_hat_k
from windtunnel.runner.summary import Summary, summarize
from windtunnel.runner.unit_order import UnitOrder
from windtunnel.runner.units import count_units, iter_units, plan_units

from .factories import trace

SCENARIOS = 20


def answering_pack(units: int) -> ScenarioPack:
    """`units` units over 20 scenarios with no upstream: the runner and the writer alone."""
    return ScenarioPack(
        "flat",
        [
            Scenario(
                name=f"s-{i:02d}",
                task="answer",
                upstreams={},
                policies=[no_divergence()],
                plan=[],
                final_answer="ok",
                repeats=units // SCENARIOS,
            )
            for i in range(SCENARIOS)
        ],
    )


async def answer(ctx: object) -> str:
    return "ok"


async def traced_peak(units: int, run_dir: Path) -> int:
    """tracemalloc's peak over one whole run (plan, units, summary, JUnit, report)."""
    quiet = Progress(open(os.devnull, "w"), live=False)  # noqa: SIM115, ASYNC230  # closed below
    tracemalloc.start()
    try:
        summary = await run_pack(
            answering_pack(units),
            PackRunOptions(run_dir=run_dir, concurrency=8, agent=answer),
            progress=quiet,
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        quiet.close()
    assert (summary.total, summary.passed) == (units, units)
    return peak


async def peak_in_a_fresh_process(units: int, run_dir: Path) -> int:
    """`traced_peak` in its own interpreter: CPython's own tables (the interned strings, which
    pathlib grows with every trace file name) are then the same size in every measurement."""
    code = (
        "import sys, trio; from tests.runner.test_memory_flat import traced_peak; "
        "from pathlib import Path; print(trio.run(traced_peak, int(sys.argv[1]), Path(sys.argv[2])))"
    )
    done = await trio.run_process(
        [sys.executable, "-c", code, str(units), str(run_dir)],
        capture_stdout=True,
        cwd=Path(__file__).parents[2],
    )
    return int(done.stdout.decode().split()[-1])


@pytest.mark.timeout(900)  # pytest-timeout's 300 s default would cut the deadline below short
async def test_peak_memory_does_not_grow_with_the_units(tmp_path: Path) -> None:
    """7,000 more units add under 3 MB to the traced peak (the old runner added ~7.3 MB)."""
    with trio.fail_after(900):
        small = await peak_in_a_fresh_process(1_000, tmp_path / "small")
        large = await peak_in_a_fresh_process(8_000, tmp_path / "large")
    # Measured: the old runner grew ~1 KB a unit (805 KB at 1,000 units, 4,985 KB at 5,000).
    # The headroom is for one resize of the interned-strings table (~1.9 MB in a fresh process,
    # every ~10,000 units), which may or may not fall inside a traced run.
    assert large - small < 3_000_000, (small, large)


def test_lazy_plan_is_the_plan() -> None:
    """`iter_units` yields exactly `plan_units`, and `count_units` counts them."""
    pack = answering_pack(60)
    assert [u.id for u in iter_units(pack)] == [u.id for u in plan_units(pack)]
    assert count_units(pack) == 60
    assert count_units(pack, scenario_filter="s-0*", repeats=2) == 20
    assert [u.id for u in iter_units(pack, scenario_filter="s-01", repeats=2)] == [
        "s-01#0",
        "s-01#1",
    ]


def test_finished_units_is_a_set_of_ids() -> None:
    """Added ids are members once, in any order; other text is kept as it is."""
    finished = FinishedUnits()
    ids = [f"s-{i % 3}#{r}" for i in range(3) for r in range(40)] + ["odd", "x#01", "y#"]
    random.Random(7).shuffle(ids)
    assert all(finished.add(uid) for uid in ids)
    assert not any(finished.add(uid) for uid in ids)
    assert len(finished) == len(ids)
    assert set(finished) == set(ids)
    assert "s-0#40" not in finished and "x#1" not in finished and "s-9#0" not in finished


def test_report_order_is_rank_then_unit_id_text() -> None:
    """Errors, failures, then passes; each group sorted by id as text (s#10 before s#2)."""
    order = UnitOrder()
    statuses = ("passed", "failed", "error")
    units = [
        (f"{name}#{r}", statuses[(r * 7) % 3]) for name in ("a", "a-b", "a#1") for r in range(23)
    ]
    units.append(("free text", "failed"))
    rng = random.Random(3)
    rng.shuffle(units)
    for offset, (uid, status) in enumerate(units):
        order.add(uid, status, offset)
    rank = {"error": 0, "failed": 1, "passed": 2}
    expected = sorted(range(len(units)), key=lambda o: (rank[units[o][1]], units[o][0]))
    assert list(order.offsets()) == expected


def test_pass_curve_is_the_dict_it_stands_for() -> None:
    """Every k of a `PassCurve` is `pass_at_k` / `pass_hat_k` of the same runs."""
    runs = [True, False, True, True, False, False, True]
    n = len(runs)
    at = {str(k): pass_at_k(runs, k) for k in range(1, n + 1)}
    hat = {str(k): pass_hat_k(runs, k) for k in range(1, n + 1)}
    assert PassCurve(n, 4, "at") == at
    assert hat == PassCurve(n, 4, "hat")
    assert PassCurve(n, 4, "at").get("0") is None and PassCurve(n, 4, "at").get("01") is None


def test_summary_file_is_the_whole_summary_formatted() -> None:
    """The streamed summary.json is byte for byte `msgspec.json.format(indent=2)` of it."""
    traces = [
        trace(scenario=name, repeat=r, status="passed" if (r + len(name)) % 3 else "failed")
        for name in ("bluewing", 'odd "scenarios": {} name', "z")
        for r in range(5)
    ]
    summary = summarize(traces, pack='pack "scenarios": {}')
    out = io.BytesIO()
    write_summary(out, summary)
    as_dicts = msgspec.convert(json.loads(out.getvalue()), Summary)
    assert as_dicts == summary
    assert out.getvalue() == msgspec.json.format(msgspec.json.encode(as_dicts), indent=2) + b"\n"
    empty = io.BytesIO()
    write_summary(empty, summarize([], pack="none"))
    assert json.loads(empty.getvalue())["scenarios"] == {}


def test_report_order_of_a_run_directory(tmp_path: Path) -> None:
    """`RunUnits.ordered` reads rows back failures first, then by unit id text."""
    writer = RunWriter(tmp_path, pack="p")
    for r in (2, 10, 0, 1):
        writer.write(trace(repeat=r, status="failed" if r == 10 else "passed"))
    ids = [row.unit_id for row in RunUnits(tmp_path).ordered()]
    assert ids == ["bluewing#10", "bluewing#0", "bluewing#1", "bluewing#2"]
    assert "bluewing#2" in writer.finished and len(writer.finished) == 4
