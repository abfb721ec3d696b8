"""`scripts/bench record`: `tools/call` throughput through `wt record` vs straight to the upstream.

The upstream is our `RecordedMCPServer` in its own process (the fastest MCP server at hand, so
the proxy's own cost shows rather than hiding behind a slow server). `wt record URL` runs in a
second process in front of it, recording every call (the universe is rewritten as calls arrive,
as it is for users). One keep-alive `http.client` posts the same `tools/call` N times per round,
direct and through the proxy taking turns; we report calls/s of each, the ratio, and the proxy
process's CPU per call (from /proc, so other work on the machine does not inflate it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from .httpload import Poster
from .measure import Spread, turns
from .report import BenchResult, finish_data, header, start_data
from .targets import ServerProcess, write_weather_universe
from .wt_process import WtProcess

__all__ = ["HELP", "NAME", "add_arguments", "run"]

NAME = "record"
HELP = "tools/call throughput through the `wt record` proxy vs straight to the upstream"

ROOT = Path(__file__).resolve().parents[2]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--calls",
        type=int,
        default=900,
        help="calls per round, each round on a fresh connection (default 900; servers close a "
        "connection after 1,000 requests)",
    )
    parser.add_argument("--rounds", type=int, default=5, help="rounds per path (default 5)")


def run(options: argparse.Namespace) -> BenchResult:
    calls, rounds = (100, 2) if options.quick else (options.calls, options.rounds)
    data = start_data(NAME, options)
    with tempfile.TemporaryDirectory() as tmp:
        universe = write_weather_universe(Path(tmp) / "weather.universe.json")
        upstream = ServerProcess("recorded", str(universe))
        proxy = WtProcess(
            ["record", "-o", str(Path(tmp) / "recorded.universe.json"), upstream.url],
            {**os.environ, "PYTHONPATH": str(ROOT / "orchestrator")},
        )
        try:
            urls = {"direct": upstream.url, "proxy": proxy.url}
            rates: dict[str, list[float]] = {name: [] for name in urls}
            proxy_cpu: list[float] = []
            for repeat in range(rounds):
                for name in turns(list(urls), repeat):
                    poster = Poster(urls[name])
                    poster.run(20)  # warm-up: the connection, the first checkpoint
                    before = proxy.cpu_seconds()
                    rates[name].append(calls / poster.run(calls))
                    if name == "proxy":
                        proxy_cpu.append((proxy.cpu_seconds() - before) / calls * 1e6)
                    poster.close()
            time.sleep(0.5)  # the last checkpoint lands before the file is read
            recorded = (Path(tmp) / "recorded.universe.json").stat().st_size
        finally:
            proxy.stop()
            upstream.stop()
    direct, through = Spread.of(rates["direct"]), Spread.of(rates["proxy"])
    ratio = statistics.median(rates["proxy"]) / statistics.median(rates["direct"])
    data.update(
        calls=calls,
        rounds=rounds,
        direct_calls_per_s=direct.to_json(),
        proxy_calls_per_s=through.to_json(),
        ratio=ratio,
        proxy_cpu_us_per_call=Spread.of(proxy_cpu).to_json(),
        recorded_bytes=recorded,
    )
    finish_data(data)
    return BenchResult(data, _markdown(data, direct, through, ratio, Spread.of(proxy_cpu)))


def _markdown(
    data: dict[str, Any], direct: Spread, through: Spread, ratio: float, cpu: Spread
) -> str:
    lines = [
        *header("Recording proxy (`scripts/bench record`)", data),
        f"{data['calls']} sequential `tools/call` posts per round over one keep-alive "
        f"connection (a fresh one each round), {data['rounds']} rounds per path, taking turns. "
        "Upstream: `RecordedMCPServer` in its own process; proxy: `wt record URL` in another, "
        "recording every call.",
        "",
        "| path | calls/s (median) | spread (min-max) |",
        "|---|---:|---:|",
        f"| direct to the upstream | {direct.median:,.0f} | {direct.min:,.0f}-{direct.max:,.0f} |",
        f"| through `wt record` | {through.median:,.0f} | {through.min:,.0f}-{through.max:,.0f} |",
        "",
        f"Throughput through the proxy: **{ratio:.2f}x** of direct. Proxy CPU per call: "
        f"{cpu.median:,.0f} µs (median of rounds). A call through the proxy is two HTTP hops "
        "(agent to proxy on stock hypercorn, proxy to upstream over httpx2), the tap, and the "
        "universe rewritten as calls arrive; the direct path is one hop into the fast path.",
        "",
        "Where the time goes (cProfile of a bare `RecordingProxy`, 2,760 calls, at load "
        "average 10 on this machine, before JSON answers went out in one piece): 13,802 "
        "socket sends, 5.0 per call (request head and body to the upstream, response head, "
        "body and end to the agent), 9.1 s of the 31 s in `send` and 10.3 s waiting in "
        "`epoll`; the proxy's own code (tap, forwarding) was 1.3% of the time. On a loaded "
        "2-core VM each loopback send wakes the other process, so the ratio is mostly "
        "syscalls and context switches, not Python.",
    ]
    return "\n".join(lines)
