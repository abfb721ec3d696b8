"""`scripts/bench fleet`: many recorded servers in one process (issue #4).

Each size runs in a fresh process (`fleet_worker.py`) so its peak RSS is its own: open a fleet,
start N `RecordedMCPServer`s (one scenario each, `fleet.scenario`), sustain `tools/call` across
all N with a few raw keep-alive HTTP clients round-robin in the same Trio process, then stop
them all. Sizes take turns round by round.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .measure import Spread, turns
from .report import BenchResult, finish_data, header, render_section, start_data
from .targets import write_weather_universe

__all__ = ["HELP", "NAME", "add_arguments", "run"]

NAME = "fleet"
HELP = "start, serve and stop 10 / 100 / 1,000 recorded servers in one process"

WORKER = Path(__file__).resolve().parent / "fleet_worker.py"
FULL_SIZES, QUICK_SIZES = (10, 100, 1000), (10, 100)
CLIENTS = 8
TARGET_START_S, TARGET_RSS_MB = 2.0, 1024


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sizes",
        type=lambda text: tuple(int(n) for n in text.split(",")),
        help="server counts (default 10,100,1000; quick 10,100)",
    )
    parser.add_argument(
        "--seconds", type=float, help="sustained-call phase per run (default 5; quick 0.5)"
    )
    parser.add_argument("--rounds", type=int, help="rounds (default 3; quick 1)")


def _one(n: int, seconds: float, universe: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, str(WORKER), str(n), str(seconds), str(universe), str(CLIENTS)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    if done.returncode != 0:
        raise RuntimeError(f"fleet worker for {n} servers failed:\n{done.stderr[-3000:]}")
    sample: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    if sample["failures"] or sample["logged_calls"] != sample["calls"]:
        raise RuntimeError(
            f"fleet of {n}: {sample['failures']} failed calls, "
            f"{sample['logged_calls']} logged of {sample['calls']}"
        )
    base = sample["rss_before_kb"]
    sample["start_ms_per_server"] = sample["start_s"] / n * 1e3
    sample["start_cpu_ms_per_server"] = sample["start_cpu_s"] / n * 1e3
    sample["stop_ms_per_server"] = sample["stop_s"] / n * 1e3
    sample["rss_up_mb"] = sample["rss_up_kb"] / 1024
    sample["rss_peak_mb"] = sample["rss_peak_kb"] / 1024
    sample["rss_kb_per_server"] = (sample["rss_up_kb"] - base) / n
    sample["peak_kb_per_server"] = (sample["rss_peak_kb"] - base) / n
    return sample


def run(options: argparse.Namespace) -> BenchResult:
    sizes = options.sizes or (QUICK_SIZES if options.quick else FULL_SIZES)
    seconds = options.seconds or (0.5 if options.quick else 5.0)
    rounds = options.rounds or (1 if options.quick else 3)
    data = start_data(NAME, options)
    raw: dict[int, list[dict[str, float]]] = {n: [] for n in sizes}
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        universe = write_weather_universe(Path(tmp) / "weather.universe.json")
        for r in range(rounds):
            for n in turns(list(sizes), r):
                s = _one(n, seconds, universe)
                raw[n].append(s)
                print(
                    f"fleet: round {r + 1}/{rounds}, {n} servers: up in {s['start_s']:.2f} s, "
                    f"{s['rss_up_mb']:.0f} MB, {s['calls_per_s']:,.0f} calls/s, "
                    f"stop {s['stop_s']:.2f} s",
                    flush=True,
                )
    keys = [k for k in raw[sizes[0]][0] if isinstance(raw[sizes[0]][0][k], (int, float))]
    results = {
        str(n): {k: Spread.of([s[k] for s in raw[n]]).to_json() for k in keys} for n in sizes
    }
    biggest = results[str(sizes[-1])]
    targets = []
    if sizes[-1] >= 1000:
        start = biggest["start_s"]["median"]
        peak = biggest["rss_peak_mb"]["median"]
        targets = [
            {
                "text": f"{sizes[-1]:,} servers up in under {TARGET_START_S:g} s",
                "value": f"{start:.2f} s",
                "verdict": "PASS" if start < TARGET_START_S else "MISS",
            },
            {
                "text": f"{sizes[-1]:,} servers under 1 GB resident (peak, whole process)",
                "value": f"{peak:.0f} MB",
                "verdict": "PASS" if peak < TARGET_RSS_MB else "MISS",
            },
        ]
    data.update(
        sizes=list(sizes),
        seconds=seconds,
        rounds=rounds,
        clients=CLIENTS,
        results=results,
        scaling={
            k: biggest[k]["median"] / results[str(sizes[0])][k]["median"]
            for k in ("start_ms_per_server", "rss_kb_per_server", "calls_per_s", "cpu_us_per_call")
            if results[str(sizes[0])][k]["median"]
        },
        targets=targets,
    )
    finish_data(data)
    return render_section(data, options, "bench-fleet.png", _plot, markdown)


def _c(spread: dict[str, Any], fmt: str) -> str:
    low, high = fmt.format(spread["min"]), fmt.format(spread["max"])
    return f"{fmt.format(spread['median'])} [{low} - {high}]"


def markdown(data: dict[str, Any], plot_name: str | None) -> str:
    out = header("Fleet: many recorded servers in one process", data)
    out += [
        "Workload: each size in a fresh process: `open_fleet()`, then N `fleet.scenario(...)` "
        "blocks entered one after another, each serving one `RecordedMCPServer` (the one-tool "
        "universe, loaded per server) on its own OS-picked port; then "
        f"{data['seconds']:g} s of sustained `tools/call` from {data['clients']} raw keep-alive "
        "HTTP/1.1 clients round-robin over all N URLs (same Trio thread as the servers: every "
        "call's client and server cost is in the CPU column); then all N stopped. Every call is "
        "checked, and the scenarios' call logs must hold every call. "
        f"{data['rounds']} rounds, sizes taking turns; cells median [min - max]. RSS: VmRSS "
        "after start, VmHWM (peak) over the run; per server = (after start - before) / N.",
        "",
        "| servers | start (wall) | start CPU ms/server | stop (wall) | RSS after start "
        "| peak RSS | KB/server | calls/s across all | CPU µs/call (client+server) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, r in data["results"].items():
        out.append(
            f"| {int(n):,} | {_c(r['start_s'], '{:.3f} s')} "
            f"| {r['start_cpu_ms_per_server']['median']:.2f} "
            f"| {_c(r['stop_s'], '{:.3f} s')} | {r['rss_up_mb']['median']:.0f} MB "
            f"| {r['rss_peak_mb']['median']:.0f} MB | {r['rss_kb_per_server']['median']:.0f} "
            f"| {_c(r['calls_per_s'], '{:,.0f}')} | {r['cpu_us_per_call']['median']:,.0f} |"
        )
    first, last = data["sizes"][0], data["sizes"][-1]
    sc = data["scaling"]
    out += [
        "",
        f"Scaling {first:,} → {last:,} servers (median over median): start cost per server "
        f"x{sc.get('start_ms_per_server', 0):.2f}, "
        f"RSS per server x{sc.get('rss_kb_per_server', 0):.2f}, "
        f"calls/s x{sc.get('calls_per_s', 0):.2f}, "
        f"CPU per call x{sc.get('cpu_us_per_call', 0):.2f}. "
        "Spreading the same call rate over more servers costs more per call: each of the "
        f"{data['clients']} clients holds one connection per server it visits, so at {last:,} "
        "servers most calls land on a connection idle since its last turn (colder caches, more "
        "sockets in the poller), and the connections are opened during the timed phase.",
    ]
    if data["targets"]:
        out += ["", "| target | measured | verdict |", "|---|---:|---|"]
        for t in data["targets"]:
            out.append(f"| {t['text']} | {t['value']} | **{t['verdict']}** |")
    if plot_name:
        out += ["", f"![Fleet scaling]({plot_name})"]
    return "\n".join(out) + "\n"


def _plot(data: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = data["sizes"]
    res = data["results"]

    def series(ax: Any, key: str, scale: float, label: str, style: str) -> None:
        rows = [res[str(n)][key] for n in sizes]
        med = [r["median"] * scale for r in rows]
        err = [
            [(r["median"] - r["min"]) * scale for r in rows],
            [(r["max"] - r["median"]) * scale for r in rows],
        ]
        ax.errorbar(sizes, med, yerr=err, fmt=style, capsize=3, label=label)

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.6))
    series(axes[0], "start_s", 1, "start all (wall s)", "o-")
    series(axes[0], "stop_s", 1, "stop all (wall s)", "s-")
    axes[0].axhline(TARGET_START_S, color="red", linestyle=":", label="target: up < 2 s")
    axes[0].set(title="Start / stop", ylabel="seconds", yscale="log")
    series(axes[1], "rss_up_mb", 1, "RSS after start (MB)", "o-")
    series(axes[1], "rss_peak_mb", 1, "peak RSS (MB)", "x-")
    axes[1].axhline(TARGET_RSS_MB, color="red", linestyle=":", label="target: < 1 GB")
    axes[1].set(title="Memory (whole process)", ylabel="MB", yscale="log")
    series(axes[2], "calls_per_s", 1, f"calls/s, {data['clients']} clients round-robin", "o-")
    axes[2].set(title="Sustained calls across all servers", ylabel="calls per second")
    for ax in axes:
        ax.set(xscale="log", xlabel="servers in one process")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Wind Tunnel fleet scaling" + (" — QUICK RUN" if data["quick"] else ""))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
