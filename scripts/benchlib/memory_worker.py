#!/usr/bin/env python3
"""One pack run in a fresh process (so its peak RSS is this size's own):

    memory_worker.py SCENARIOS REPEATS CALLS CONCURRENCY UNIVERSE|- RUN_DIR

Runs a scripted pack of SCENARIOS scenarios x REPEATS repeats (one recorded upstream served per
unit, CALLS `tools/call` each through the official SDK client, checked by `no_divergence()`) with
`run_pack` into RUN_DIR. With CALLS = 0 the agent is an in-process Trio function that answers at
once; with UNIVERSE `-` the units have no upstream at all (the runner and the writer alone).
Prints one JSON object: units, passes, wall seconds, peak RSS (VmHWM) and the RSS before the
run, in kB.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(_HERE.parent), str(_HERE.parents[1] / "orchestrator")]


def main() -> None:
    import trio

    from benchlib.measure import rss_kb
    from benchlib.targets import CALL_ARGS, TOOL
    from windtunnel.api import Scenario, ScenarioPack, no_divergence
    from windtunnel.runner.pack_run import PackRunOptions, run_pack
    from windtunnel.runner.progress import Progress
    from windtunnel.runner.scenario import PlanStep

    scenarios, repeats, calls, concurrency = (int(arg) for arg in sys.argv[1:5])
    universe, run_dir = sys.argv[5], Path(sys.argv[6])
    upstreams = {} if universe == "-" else {"crm": Path(universe)}
    plan = [PlanStep(tool=TOOL, args=dict(CALL_ARGS), upstream="crm")] * calls
    pack = ScenarioPack(
        "bench-memory",
        [
            Scenario(
                name=f"scenario-{i:05d}",
                task="look up the weather",
                upstreams=upstreams,
                policies=[no_divergence()],
                plan=plan,
                final_answer="sunny",
                repeats=repeats,
            )
            for i in range(scenarios)
        ],
    )

    async def answer(ctx: object) -> str:
        return "sunny"

    before = rss_kb("VmRSS")
    options = PackRunOptions(
        run_dir=run_dir, concurrency=concurrency, agent=answer if calls == 0 else None
    )
    # Progress lines go nowhere: a StringIO would keep them all and grow with the units.
    quiet = Progress(open(os.devnull, "w"), live=False)  # noqa: SIM115  # lives as long as the run
    started = time.perf_counter()
    summary = trio.run(functools.partial(run_pack, pack, options, progress=quiet))
    wall = time.perf_counter() - started
    print(
        json.dumps(
            {
                "units": summary.total,
                "passed": summary.passed,
                "wall_s": wall,
                "rss_before_kb": before,
                "peak_rss_kb": rss_kb("VmHWM"),
            }
        )
    )


if __name__ == "__main__":
    main()
